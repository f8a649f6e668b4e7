#include "tokenizer/word_scanner.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/stringpiece.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "tokenizer/ascii_words.h"
#include "tokenizer/lookalikes.h"

namespace nbspamd::tokenizer {

// Per-thread ICU state: a BreakIterator is not thread-safe. `normalized` is the text the
// iterator was last given, kept here so the iterator never refers to a destroyed string (it is
// declared first so that it is destroyed last).
struct ThreadIcuState {
  icu::UnicodeString normalized;
  std::unique_ptr<icu::BreakIterator> words;
  const icu::Normalizer2* normalizer = nullptr;  // ICU's shared NFKC_Casefold instance.
};

namespace {

// Text is decoded, normalised and split in chunks of at most this many bytes.
constexpr std::size_t kChunkBytes = 64 * 1024;

// Inside a chunk, an ASCII run shorter than this between two non-ASCII runs goes to ICU with
// them: one ICU call costs more than the fast path saves on a few words.
constexpr std::size_t kMinAsciiRunBytes = 128;

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsAscii(char c) { return static_cast<unsigned char>(c) < 0x80; }

// Whether position `cut` of `text` (0 < cut < size) is a place where text can be split without
// changing its words: after ASCII whitespace and before an ASCII character, which is both a
// normalisation boundary and a word boundary.
bool IsSafeCut(std::string_view text, std::size_t cut) {
  return IsAsciiSpace(text[cut - 1]) && IsAscii(text[cut]);
}

// The length of the next chunk of `text`. A cut at a safe place changes nothing; only when the
// last half of the chunk has no such place is the text cut at a code point boundary.
std::size_t ChunkLength(std::string_view text) {
  if (text.size() <= kChunkBytes) return text.size();
  for (std::size_t cut = kChunkBytes; cut > kChunkBytes / 2; --cut) {
    if (IsSafeCut(text, cut)) return cut;
  }
  std::size_t cut = kChunkBytes;
  while (cut > kChunkBytes / 2 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// The position of the first byte at or after `from` that is not ASCII, or text.size().
std::size_t FindNonAscii(std::string_view text, std::size_t from) {
  std::size_t i = from;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t block;
    std::memcpy(&block, text.data() + i, sizeof block);
    if ((block & 0x8080808080808080ULL) != 0) break;
  }
  while (i < text.size() && IsAscii(text[i])) ++i;
  return i;
}

// The last safe cut in (from, before), or `from` when there is none.
std::size_t LastSafeCutBefore(std::string_view text, std::size_t from, std::size_t before) {
  for (std::size_t cut = before; cut > from + 1;) {
    --cut;
    if (IsSafeCut(text, cut)) return cut;
  }
  return from;
}

// The first safe cut after `after`, or text.size() when there is none.
std::size_t FirstSafeCutAfter(std::string_view text, std::size_t after) {
  for (std::size_t cut = after + 1; cut < text.size(); ++cut) {
    if (IsSafeCut(text, cut)) return cut;
  }
  return text.size();
}

// This thread's state; `words` (`normalizer`) is null if ICU could not create a word break
// iterator (load its normaliser).
ThreadIcuState& ThisThreadIcuState() {
  thread_local ThreadIcuState state;
  if (state.words == nullptr) {
    UErrorCode status = U_ZERO_ERROR;
    state.words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) state.words.reset();
  }
  if (state.normalizer == nullptr) {
    UErrorCode status = U_ZERO_ERROR;
    state.normalizer = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) state.normalizer = nullptr;
  }
  return state;
}

}  // namespace

WordScanner::WordScanner(const TokenizerOptions& options)
    : min_chars_(std::max<std::size_t>(options.min_token_chars, 1)),
      max_chars_(options.max_token_chars),
      pair_window_(std::min(
          std::max<std::size_t>(options.word_bigrams ? 2 : 0, options.sparse_bigram_window < 2
                                                                  ? 0
                                                                  : options.sparse_bigram_window),
          kMaxPairWindow)),
      char_ngrams_(options.word_char_ngrams < 2 ? 0 : options.word_char_ngrams),
      ascii_fast_(options.word_path == WordPath::kAsciiFast),
      fold_lookalikes_(options.fold_lookalikes),
      icu_(ThisThreadIcuState()) {}

void WordScanner::Scan(std::string_view text, std::string_view prefix, TokenSource source,
                       BagBuilder& bag) {
  // Both paths give no words when ICU is unusable, so that they always agree.
  if (icu_.normalizer == nullptr || icu_.words == nullptr || min_chars_ > max_chars_) return;
  token_.assign(prefix);
  prefix_size_ = prefix.size();
  next_earlier_ = 0;
  earlier_count_ = 0;
  while (!text.empty() && !bag.Full()) {
    const std::size_t length = ChunkLength(text);
    ScanChunk(text.substr(0, length), source, bag);
    text.remove_prefix(length);
  }
}

void WordScanner::ScanChunk(std::string_view chunk, TokenSource source, BagBuilder& bag) {
  if (!ascii_fast_) {
    ScanWithIcu(chunk, source, bag);
    return;
  }
  std::size_t position = 0;
  while (position < chunk.size() && !bag.Full()) {
    const std::size_t non_ascii = FindNonAscii(chunk, position);
    if (non_ascii == chunk.size()) {
      ScanAscii(chunk.substr(position), source, bag);
      return;
    }
    const std::size_t ascii_end = LastSafeCutBefore(chunk, position, non_ascii);
    if (ascii_end > position) {
      ScanAscii(chunk.substr(position, ascii_end - position), source, bag);
      position = ascii_end;
      if (bag.Full()) return;
    }
    // The ICU run ends at a safe cut followed by a long enough ASCII run (or the chunk's end).
    std::size_t icu_end = FirstSafeCutAfter(chunk, non_ascii);
    while (icu_end < chunk.size()) {
      const std::size_t next_non_ascii = FindNonAscii(chunk, icu_end);
      if (next_non_ascii - icu_end >= kMinAsciiRunBytes || next_non_ascii == chunk.size()) break;
      icu_end = FirstSafeCutAfter(chunk, next_non_ascii);
    }
    ScanWithIcu(chunk.substr(position, icu_end - position), source, bag);
    position = icu_end;
  }
}

void WordScanner::ScanAscii(std::string_view text, TokenSource source, BagBuilder& bag) {
  ForEachAsciiWord(text, [&](std::string_view word) {
    if (word.size() < min_chars_ || word.size() > max_chars_) return true;
    token_.resize(prefix_size_ + word.size());
    char* out = token_.data() + prefix_size_;
    for (const char c : word) {
      // NFKC_Casefold on ASCII: A-Z to a-z, nothing else changes.
      *out++ = static_cast<char>(c | (static_cast<unsigned char>(c - 'A') < 26 ? 0x20 : 0));
    }
    return AddWord(source, bag);
  });
}

void WordScanner::ScanWithIcu(std::string_view text, TokenSource source, BagBuilder& bag) {
  // fromUTF8 replaces ill-formed sequences with U+FFFD. The chunk size fits int32_t.
  const icu::UnicodeString decoded = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  if (decoded.isBogus()) return;  // Out of memory.
  UErrorCode status = U_ZERO_ERROR;
  icu_.normalizer->normalize(decoded, icu_.normalized, status);
  if (U_FAILURE(status) || icu_.normalized.isBogus()) return;
  const char16_t* chars = icu_.normalized.getBuffer();
  if (chars == nullptr) return;

  icu::BreakIterator& words = *icu_.words;
  words.setText(icu_.normalized);
  int32_t start = words.first();
  for (int32_t end = words.next(); end != icu::BreakIterator::DONE;
       start = end, end = words.next()) {
    // Rule statuses of number, letter, kana and ideographic words are >= UBRK_WORD_NONE_LIMIT.
    if (words.getRuleStatus() < UBRK_WORD_NONE_LIMIT) continue;
    if (!SetIcuWord(chars, start, end)) continue;
    // A folded word is ASCII: its bytes are its code points.
    if (fold_lookalikes_ && FoldLookalikes(token_, prefix_size_) &&
        token_.size() - prefix_size_ < min_chars_) {
      continue;
    }
    if (!AddWord(source, bag)) return;
  }
}

bool WordScanner::AddWord(TokenSource source, BagBuilder& bag) {
  if (!bag.Add(token_, source)) return false;
  const std::string_view word = std::string_view(token_).substr(prefix_size_);
  if (char_ngrams_ != 0 && !AddCharNgrams(word, source, bag)) return false;
  return pair_window_ == 0 || AddPairs(word, source, bag);
}

bool WordScanner::AddPairs(std::string_view word, TokenSource source, BagBuilder& bag) {
  constexpr std::size_t kSlots = kMaxPairWindow - 1;
  for (std::size_t distance = 1; distance <= earlier_count_; ++distance) {
    const std::string& earlier = earlier_[(next_earlier_ + kSlots - distance) % kSlots];
    pair_.assign(token_, 0, prefix_size_);
    pair_ += earlier;
    for (std::size_t skipped = 1; skipped < distance; ++skipped) pair_ += " ?";
    pair_ += ' ';
    pair_ += word;
    if (!bag.Add(pair_, source)) return false;
  }
  earlier_[next_earlier_].assign(word);
  next_earlier_ = (next_earlier_ + 1) % kSlots;
  earlier_count_ = std::min(earlier_count_ + 1, pair_window_ - 1);
  return true;
}

bool WordScanner::AddCharNgrams(std::string_view word, TokenSource source, BagBuilder& bag) {
  // Each n-gram is the prefix, '#', then the gram: the head is written once, and each gram over
  // the one before it.
  pair_.assign(token_, 0, prefix_size_);
  pair_ += '#';
  const std::size_t head = pair_.size();
  if (std::all_of(word.begin(), word.end(),
                  [](char c) { return (static_cast<unsigned char>(c) & 0x80) == 0; })) {
    // ASCII: each byte is a code point, each gram char_ngrams_ bytes.
    if (word.size() <= char_ngrams_) return true;
    pair_.resize(head + char_ngrams_);
    char* const gram = pair_.data() + head;
    const std::size_t n = char_ngrams_;
    for (std::size_t first = 0; first + n <= word.size(); ++first) {
      const char* const from = word.data() + first;
      if (n - 4 <= 4) {  // 4 to 8 bytes (the default 4): two 4-byte words, without a call.
        std::uint32_t front, back;
        std::memcpy(&front, from, 4);
        std::memcpy(&back, from + n - 4, 4);
        std::memcpy(gram, &front, 4);
        std::memcpy(gram + n - 4, &back, 4);
      } else {
        std::memcpy(gram, from, n);
      }
      if (!bag.Add(pair_, source, TokenFamily::kCharNgram)) return false;
    }
    return true;
  }
  // Code point starts of the word, then each run of char_ngrams_ of them.
  starts_.clear();
  for (std::size_t i = 0; i < word.size(); ++i) {
    if ((static_cast<unsigned char>(word[i]) & 0xC0) != 0x80) starts_.push_back(i);
  }
  if (starts_.size() <= char_ngrams_) return true;
  starts_.push_back(word.size());
  for (std::size_t first = 0; first + char_ngrams_ < starts_.size(); ++first) {
    pair_.resize(head);
    pair_ += word.substr(starts_[first], starts_[first + char_ngrams_] - starts_[first]);
    if (!bag.Add(pair_, source, TokenFamily::kCharNgram)) return false;
  }
  return true;
}

// Sets token_ to the prefix followed by the UTF-8 of chars[start, end) and returns true if that
// segment is an acceptable word: within the length bounds and holding a letter or digit.
bool WordScanner::SetIcuWord(const char16_t* chars, int32_t start, int32_t end) {
  token_.resize(prefix_size_);
  std::size_t code_points = 0;
  bool has_alnum = false;
  for (int32_t i = start; i < end;) {
    UChar32 c;
    U16_NEXT(chars, i, end, c);
    if (++code_points > max_chars_) return false;
    if (U_IS_SURROGATE(c)) c = 0xFFFD;  // Cannot come from fromUTF8; kept valid UTF-8 anyway.
    has_alnum = has_alnum || u_isalnum(c);
    uint8_t utf8[U8_MAX_LENGTH];
    int32_t utf8_length = 0;
    U8_APPEND_UNSAFE(utf8, utf8_length, c);
    token_.append(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(utf8_length));
  }
  return has_alnum && code_points >= min_chars_;
}

}  // namespace nbspamd::tokenizer
