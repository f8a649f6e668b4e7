// Tokenizer: turns a message (mail or plain text, UTF-8) into a TokenBag.
//
// What a token is (changing any of this changes the tokens of every message, so stored models
// would no longer match what is scored; treat it like the on-disk format):
//   1. The input is cut to options.max_message_bytes bytes; the rest is ignored.
//   2. A leading mbox "From " line is skipped. If what follows looks like mail (see
//      tokenizer/message_parts.h: the first line is a `Name: value` header field), GMime parses
//      it (tokenizer/mail_reader.h): header values are decoded, the MIME tree is walked, text
//      parts are decoded and converted to UTF-8, HTML is reduced to its visible text (a header
//      block with no empty line after it ends at the first line that is neither a header field
//      nor a continuation, as message_parts.h says). Otherwise all of it is body text.
//   3. Text is decoded as UTF-8 (invalid bytes become U+FFFD), normalised with ICU NFKC_Casefold
//      ("HELLO" -> "hello", fullwidth "Ｆｕｌｌ" -> "full", "Straße" -> "strasse"), then split
//      with the ICU root-locale word break iterator (dictionary-based for Chinese, Japanese, Thai).
//   4. A segment is a word when ICU classifies it as a number, letter, kana or ideographic word
//      and it holds at least one letter or digit; punctuation, spaces, symbols and emoji are not.
//      Words of fewer than min_token_chars or more than max_token_chars code points (after
//      normalisation) are dropped.
//  4a. With fold_lookalikes, a word that holds an ASCII letter and whose other characters all
//      imitate ASCII letters or digits (accented forms, Cyrillic and Greek look-alikes, combining
//      marks) becomes that ASCII word: "pаypal" with a Cyrillic а is "paypal", "bìtcòìn" is
//      "bitcoin", "café" is "cafe" (tokenizer/lookalikes.h); it is then dropped if shorter than
//      min_token_chars. Invisible characters (zero-width spaces and joiners, soft hyphens) need
//      no option: NFKC_Casefold removes them in step 3.
//   5. Body words are tokens as they are (TokenSource::kBody). With header_tokens, header
//      values give prefixed tokens (`subject:<word>`, `from-domain:<domain>`, ...; the list is in
//      tokenizer/mail_reader.h). URL hosts give `url:` tokens and structure gives `meta:`
//      tokens. With word_bigrams, each pair of consecutive words of one text also gives the
//      token `<prefix><word> <word>`. Whole tokens (URLs, meta, addresses) come first, then the
//      words of headers, then body words.
//   6. Only the first max_tokens tokens (occurrences) are kept.
//   7. Each token's hash is HashToken(full text, prefix included); the bag holds each hash once,
//      sorted, with its number of occurrences (1 with boolean_counts).
//   8. With byte_ngrams = n (3..8), the raw bytes of the message's head also give tokens
//      (TokenSource::kByteNgram, tokenizer/byte_ngrams.h): the first byte_ngram_head bytes after
//      step 1's cut and after step 2's mbox "From " line is skipped (an mbox artefact, not part of
//      the mail as received), before any decoding, headers included, lines of base64 left out
//      (tokenizer/byte_ngrams.h); each overlapping run of n bytes within what is left is a token
//      hashed HashToken("b<n>:" + the n bytes), a text no word or prefixed token can have. They are
//      counted like the other tokens (once with boolean_counts) but outside max_tokens: they never
//      crowd out words, and a message gives at most byte_ngram_head of them. Their texts (for
//      explanations) are readable forms such as `b4:"Vi\xe0g"`.
//
// Text is processed in chunks of about 64 KiB cut at ASCII whitespace, so memory stays bounded
// and tokenizing stops early once max_tokens is reached. A run of more than 32 KiB with no ASCII
// whitespace (long CJK text without spaces) is cut at a code point boundary, which may split one
// word in two there. Inside a chunk, runs of pure ASCII text between such cuts are split without
// ICU (tokenizer/ascii_words.h), giving exactly the words step 3 and 4 define
// (tokenizer/word_scanner.h says how, word_paths_test.cc holds it).
#ifndef NBSPAMD_TOKENIZER_TOKENIZER_H_
#define NBSPAMD_TOKENIZER_TOKENIZER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "common/token_bag.h"

namespace nbspamd::tokenizer {

// How words are found (step 3). Both give the same tokens; kIcuOnly is the reference the
// differential tests compare kAsciiFast with (tokenizer/word_scanner.h).
enum class WordPath {
  kAsciiFast,  // Pure ASCII runs without ICU, everything else with ICU.
  kIcuOnly,    // Everything with ICU.
};

// How HTML parts are read. Both give the same tokens; kTree is the reference the differential
// tests compare kEvents with (tokenizer/html_text.h).
enum class HtmlPath {
  kEvents,  // libxml2's SAX events, no tree.
  kTree,    // libxml2's tree, walked.
};

// How the mail reader reads MIME. Both give the same tokens and facts; kGmime is the reference the
// differential checks compare kInPlace with (tokenizer/mail_reader.h).
enum class MimePath {
  kInPlace,  // A header value of plain 7-bit text taken unfolded as it is; a part's content
             // transfer-decoded in place in the parser's buffer; a message of one text part
             // whose header block is plain (tokenizer/plain_message.h) split without GMime's
             // parser.
  kGmime,    // Every message through GMime's parser, every value through its decoding, every
             // content through its data wrapper.
};

struct TokenizerOptions {
  std::size_t max_message_bytes = 4 << 20;  // Bytes of input looked at; the rest is ignored.
  std::size_t max_tokens = 20000;    // Tokens produced per message (before bagging); rest ignored.
  std::size_t min_token_chars = 1;   // In code points, after normalisation (0 acts as 1).
  std::size_t max_token_chars = 40;  // Longer words are dropped (base64 noise, hashes).
  bool boolean_counts = true;        // Count each token once per message (measured best).
  bool header_tokens = true;         // Emit header-derived tokens for mail.
  bool word_bigrams = false;         // Also emit pairs of consecutive words.
  // Measured offline (docs/ACCURACY.md, "What was tried") and not used by the daemon; 0 = off.
  // Orthogonal sparse bigrams: with a window N in 2..5, each word also pairs with each of the
  // N-1 words before it in its text, `<prefix><earlier> <word>` at distance 1 (the bigram) and
  // one `?` per skipped word between them further away (`a ? b`, `a ? ? b`).
  std::size_t sparse_bigram_window = 0;
  // With n >= 2, each word of more than n code points also gives its n-grams, `<prefix>#<n-gram>`,
  // bagged as TokenFamily::kCharNgram (their share of the score: model::ClassifyOptions).
  std::size_t word_char_ngrams = 0;
  // Byte n-grams of the message's head (step 8): n in 3..8, 0 = off (other values act as 0),
  // from its first byte_ngram_head bytes.
  std::size_t byte_ngrams = 0;
  std::size_t byte_ngram_head = 2500;
  // Step 4a: a word disguised with look-alike letters becomes the word it imitates.
  bool fold_lookalikes = false;
  WordPath word_path = WordPath::kAsciiFast;  // Same tokens either way; for tests and benchmarks.
  HtmlPath html_path = HtmlPath::kEvents;     // Likewise.
  MimePath mime_path = MimePath::kInPlace;    // Likewise.
};

// What helps find a message again (the scan history), read while tokenizing it: each "" when the
// message has none or is not mail.
struct MessageFacts {
  std::string message_id;   // The Message-ID, without <>.
  std::string from_domain;  // The domain of the first From mailbox, lower-case.
  std::string subject;      // The Subject, RFC 2047 decoded to UTF-8.
};

// Thread-safe: Tokenize may be called from many threads at once on one Tokenizer (each thread
// keeps its own ICU break iterator and a buffer of up to a few hundred KiB). Never fails and
// throws nothing but std::bad_alloc: unusable input (invalid UTF-8, binary data) just gives fewer
// tokens. If ICU itself cannot work (its data missing, out of memory), the affected text gives no
// tokens.
class Tokenizer {
 public:
  explicit Tokenizer(TokenizerOptions options);

  // The tokens of `message`. With keep_text, bag.texts is filled parallel to bag.entries (for
  // explanations); otherwise it stays empty. If two texts share a hash, the first one seen names
  // the entry. With `facts`, also fills it in (with header_tokens on or off).
  [[nodiscard]] TokenBag Tokenize(std::string_view message, bool keep_text = false,
                                  MessageFacts* facts = nullptr) const;

  [[nodiscard]] const TokenizerOptions& options() const { return options_; }

 private:
  TokenizerOptions options_;
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_TOKENIZER_H_
