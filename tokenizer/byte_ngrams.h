// Byte n-grams: tokens made of the raw bytes of a message's head (step 8 of
// tokenizer/tokenizer.h), beside the words.
//
// Each overlapping run of n bytes (n in 3..8) of the head, headers and all, before any decoding,
// except its lines of base64 (AddByteNgrams), is one token (TokenSource::kByteNgram). Its hash is
// HashToken over the text "b<n>:" followed by the n bytes: in the same 64-bit space as the words,
// and never the text of another token (a word never holds ':' right after a digit, as Unicode's
// word breaks put a break there, and the other tokens start with fixed prefixes such as "subject:",
// "url:" or "#", none of them "b<digit>:"). For explanations the token gets a readable text
// instead, e.g. `b4:"Vi\xe0g"` (ByteNgramText).
//
//   BagBuilder bag(max_tokens, keep_text);
//   AddByteNgrams(head, /*n=*/4, bag);  // Up to head.size() - 3 occurrences, outside max_tokens.
//
// Pure functions; thread-safe.
#ifndef NBSPAMD_TOKENIZER_BYTE_NGRAMS_H_
#define NBSPAMD_TOKENIZER_BYTE_NGRAMS_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/token_bag.h"
#include "tokenizer/bag_builder.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::tokenizer {

// The n-gram sizes there are; options.byte_ngrams outside them turns byte n-grams off.
inline constexpr std::size_t kMinByteNgram = 3;
inline constexpr std::size_t kMaxByteNgram = 8;
// The longest readable text: `b8:"` and `"` around eight bytes of four characters each (\xNN).
inline constexpr std::size_t kMaxByteNgramText = 5 + 4 * kMaxByteNgram;

// n when options.byte_ngrams is in kMinByteNgram..kMaxByteNgram, else 0 (off).
[[nodiscard]] std::size_t ByteNgramSize(const TokenizerOptions& options);

// The hash of the byte n-gram `bytes` (n = bytes.size()): HashToken("b<n>:" + bytes).
// REQUIRES: bytes.size() in kMinByteNgram..kMaxByteNgram.
[[nodiscard]] TokenHash HashByteNgram(std::string_view bytes);

// The readable text of the byte n-gram `bytes`, written into `out`: `b<n>:"` + the bytes +
// `"`, where printable ASCII stands as it is, `"` and `\` are escaped as `\"` and `\\`, and every
// other byte is `\xNN` (lower-case hex). Always printable ASCII, so valid UTF-8.
// REQUIRES: bytes.size() in kMinByteNgram..kMaxByteNgram.
[[nodiscard]] std::string_view ByteNgramText(std::string_view bytes,
                                             std::span<char, kMaxByteNgramText> out);

// The text HashByteNgram hashes ("b<n>:" + the n bytes) for a readable text ByteNgramText
// wrote; nullopt when `readable` is not one. For tests and tools that check texts against hashes.
[[nodiscard]] std::optional<std::string> ByteNgramHashedText(std::string_view readable);

// A line of base64 (an encoded body or attachment), at least this long, gives no n-grams.
inline constexpr std::size_t kMinBase64Line = 40;

// Adds one occurrence of each n-gram of `head` (head.size() - n + 1 of them, none when the head
// is shorter than n) to `bag`, outside its max_tokens budget, named by ByteNgramText when the bag
// keeps texts; except that the lines of base64 in it (kMinBase64Line or more bytes of
// [A-Za-z0-9+/], then up to two '=' and an optional CR) are left out, and no n-gram spans one:
// their bytes shift with the alignment of what they encode and name nothing a reader sees, while
// a mail's first base64 part would otherwise give a third of its n-grams (and one lone ham with an
// encoded body, in a corpus whose encoded heads are all spam, then scores as spam). Does nothing
// unless n is in kMinByteNgram..kMaxByteNgram. Linear in head.size(), with no allocation per
// n-gram.
void AddByteNgrams(std::string_view head, std::size_t n, BagBuilder& bag);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_BYTE_NGRAMS_H_
