#include "tokenizer/tokenizer.h"

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
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/mail_reader.h"
#include "tokenizer/message_parts.h"
#include "tokenizer/token_hash.h"
#include "tokenizer/url_hosts.h"

namespace nbspamd::tokenizer {
namespace {

// URLs turned into tokens from plain text.
constexpr std::size_t kMaxPlainTextUrls = 256;

// `message` without a leading mbox "From " separator line.
std::string_view SkipMboxLine(std::string_view message) {
  if (!message.starts_with("From ")) return message;
  const std::size_t end = message.find('\n');
  return end == std::string_view::npos ? std::string_view() : message.substr(end + 1);
}

// `message` (mail) with an empty line inserted where its header block ends without one, at the
// first line that is neither a header field nor a continuation (tokenizer/message_parts.h):
// GMime would skip that line and all after it as broken header fields, losing the body. Empty
// when the message needs no change.
std::string WithEndOfHeaders(std::string_view message, const MessageParts& parts) {
  if (parts.body.empty()) return {};
  const std::string_view head =
      message.substr(0, static_cast<std::size_t>(parts.body.data() - message.data()));
  if (head.ends_with("\n\n") || head.ends_with("\n\r\n")) return {};
  std::string fixed;
  fixed.reserve(message.size() + 2);
  fixed.append(head).append(head.ends_with("\r\n") ? "\r\n" : "\n").append(parts.body);
  return fixed;
}

// Text is decoded, normalised and split in chunks of at most this many bytes.
constexpr std::size_t kChunkBytes = 64 * 1024;

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// The length of the next chunk of `text`. A cut between ASCII whitespace and an ASCII character
// is both a normalisation boundary and a word boundary, so chunking there changes nothing; only
// when the last half of the chunk has no such place is the text cut at a code point boundary.
std::size_t ChunkLength(std::string_view text) {
  if (text.size() <= kChunkBytes) return text.size();
  for (std::size_t cut = kChunkBytes; cut > kChunkBytes / 2; --cut) {
    if (IsAsciiSpace(text[cut - 1]) && static_cast<unsigned char>(text[cut]) < 0x80) return cut;
  }
  std::size_t cut = kChunkBytes;
  while (cut > kChunkBytes / 2 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// Per-thread ICU state: a BreakIterator is not thread-safe. `normalized` is the text the
// iterator was last given, kept here so the iterator never refers to a destroyed string (it is
// declared first so that it is destroyed last).
struct ThreadIcuState {
  icu::UnicodeString normalized;
  std::unique_ptr<icu::BreakIterator> words;
};

// This thread's state; `words` is null if ICU could not create a word break iterator.
ThreadIcuState& ThisThreadIcuState() {
  thread_local ThreadIcuState state;
  if (state.words == nullptr) {
    UErrorCode status = U_ZERO_ERROR;
    state.words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) state.words.reset();
  }
  return state;
}

// Collects token occurrences, at most `max_tokens` of them, and bags them.
class BagBuilder {
 public:
  BagBuilder(std::size_t max_tokens, bool keep_text)
      : max_tokens_(max_tokens), keep_text_(keep_text) {}

  [[nodiscard]] bool Full() const { return produced_ >= max_tokens_; }

  // Adds one occurrence of the token `text`; returns false (adding nothing) once Full().
  bool Add(std::string_view text, TokenSource source) {
    if (Full()) return false;
    ++produced_;
    const TokenHash hash = HashToken(text);
    if (keep_text_) {
      with_text_.emplace_back(hash, TokenText{std::string(text), source});
    } else {
      hashes_.push_back(hash);
    }
    return true;
  }

  [[nodiscard]] TokenBag Finish(bool boolean_counts) && {
    TokenBag bag;
    if (keep_text_) {
      // Stable, so that among equal hashes the first occurrence names the entry.
      std::stable_sort(with_text_.begin(), with_text_.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 0; i < with_text_.size();) {
        std::size_t j = i + 1;
        while (j < with_text_.size() && with_text_[j].first == with_text_[i].first) ++j;
        bag.entries.push_back(BagEntry{with_text_[i].first, Count(j - i, boolean_counts)});
        bag.texts.push_back(std::move(with_text_[i].second));
        i = j;
      }
    } else {
      std::sort(hashes_.begin(), hashes_.end());
      for (std::size_t i = 0; i < hashes_.size();) {
        std::size_t j = i + 1;
        while (j < hashes_.size() && hashes_[j] == hashes_[i]) ++j;
        bag.entries.push_back(BagEntry{hashes_[i], Count(j - i, boolean_counts)});
        i = j;
      }
    }
    return bag;
  }

 private:
  static std::uint32_t Count(std::size_t occurrences, bool boolean_counts) {
    if (boolean_counts) return 1;
    return static_cast<std::uint32_t>(
        std::min<std::size_t>(occurrences, std::numeric_limits<std::uint32_t>::max()));
  }

  std::size_t max_tokens_;
  bool keep_text_;
  std::size_t produced_ = 0;
  std::vector<TokenHash> hashes_;                           // When !keep_text_.
  std::vector<std::pair<TokenHash, TokenText>> with_text_;  // When keep_text_.
};

// Finds the words of UTF-8 text (steps 3 and 4 in tokenizer.h) and adds them to a BagBuilder.
class WordScanner {
 public:
  explicit WordScanner(const TokenizerOptions& options)
      : min_chars_(std::max<std::size_t>(options.min_token_chars, 1)),
        max_chars_(options.max_token_chars),
        bigrams_(options.word_bigrams),
        icu_(ThisThreadIcuState()) {
    UErrorCode status = U_ZERO_ERROR;
    normalizer_ = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) normalizer_ = nullptr;
  }

  // Adds `prefix + word` for each word of `text` until `bag` is full.
  void Scan(std::string_view text, std::string_view prefix, TokenSource source, BagBuilder& bag) {
    if (normalizer_ == nullptr || icu_.words == nullptr || min_chars_ > max_chars_) return;
    token_.assign(prefix);
    prefix_size_ = prefix.size();
    previous_.clear();
    while (!text.empty() && !bag.Full()) {
      const std::size_t length = ChunkLength(text);
      ScanChunk(text.substr(0, length), source, bag);
      text.remove_prefix(length);
    }
  }

 private:
  void ScanChunk(std::string_view chunk, TokenSource source, BagBuilder& bag) {
    // fromUTF8 replaces ill-formed sequences with U+FFFD. The chunk size fits int32_t.
    const icu::UnicodeString decoded = icu::UnicodeString::fromUTF8(
        icu::StringPiece(chunk.data(), static_cast<int32_t>(chunk.size())));
    if (decoded.isBogus()) return;  // Out of memory.
    UErrorCode status = U_ZERO_ERROR;
    normalizer_->normalize(decoded, icu_.normalized, status);
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
      if (!SetWord(chars, start, end)) continue;
      if (!bag.Add(token_, source)) return;
      if (bigrams_) {
        const std::string_view word = std::string_view(token_).substr(prefix_size_);
        if (!previous_.empty()) {
          bigram_.assign(token_, 0, prefix_size_);
          bigram_ += previous_;
          bigram_ += ' ';
          bigram_ += word;
          if (!bag.Add(bigram_, source)) return;
        }
        previous_.assign(word);
      }
    }
  }

  // Sets token_ to the prefix followed by the UTF-8 of chars[start, end) and returns true if
  // that segment is an acceptable word: within the length bounds and holding a letter or digit.
  bool SetWord(const char16_t* chars, int32_t start, int32_t end) {
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

  std::size_t min_chars_;
  std::size_t max_chars_;
  bool bigrams_;
  std::string previous_;  // The previous word of this text (for bigrams), without prefix.
  std::string bigram_;    // The bigram token being built; reused.
  ThreadIcuState& icu_;
  const icu::Normalizer2* normalizer_ = nullptr;
  std::string token_;  // The token being built: prefix then word; reused.
  std::size_t prefix_size_ = 0;
};

}  // namespace

Tokenizer::Tokenizer(TokenizerOptions options) : options_(options) { InitializeMailReader(); }

TokenBag Tokenizer::Tokenize(std::string_view message, bool keep_text) const {
  message = message.substr(0, std::min(message.size(), options_.max_message_bytes));
  BagBuilder bag(options_.max_tokens, keep_text);
  if (message.empty() || bag.Full()) return std::move(bag).Finish(options_.boolean_counts);

  message = SkipMboxLine(message);
  const MessageParts parts = SplitMessage(message);
  const bool is_mail = parts.is_mail;
  MailContent content;
  if (is_mail) {
    const std::string fixed = WithEndOfHeaders(message, parts);
    content = ReadMail(fixed.empty() ? message : fixed, {.header_tokens = options_.header_tokens});
  } else {
    std::vector<std::string> hosts;
    FindUrlHosts(message, hosts, kMaxPlainTextUrls);
    AddUrlTokens(hosts, content);
  }
  for (const MailContent::WholeToken& token : content.tokens) {
    if (!bag.Add(token.text, token.source)) break;
  }
  WordScanner scanner(options_);
  for (const MailContent::Text& text : content.texts) {
    scanner.Scan(text.utf8, text.prefix, text.source, bag);
  }
  if (!is_mail) scanner.Scan(message, "", TokenSource::kBody, bag);
  return std::move(bag).Finish(options_.boolean_counts);
}

}  // namespace nbspamd::tokenizer
