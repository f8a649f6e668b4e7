// TokenTexts: the readable forms of a bag's tokens, for explanations.
#ifndef NBSPAMD_COMMON_TOKEN_TEXTS_H_
#define NBSPAMD_COMMON_TOKEN_TEXTS_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd {

// Where in the message a token came from. The source is part of the token's text (a prefix such
// as "subject:"), so the same word in two sources gives two tokens. The values are stored (the
// scan history keeps them as a byte): append new ones, never renumber.
enum class TokenSource : std::uint8_t {
  kBody,       // A word of the message body (or of plain text).
  kHeader,     // A word or value of a selected header, e.g. "subject:free".
  kUrl,        // A host or domain of a URL.
  kMeta,       // A fact about the message's structure, e.g. "meta:html-only".
  kByteNgram,  // n raw bytes of the message's head (tokenizer/byte_ngrams.h), e.g. b4:"Vi\x61g".
};
// The last TokenSource value, for readers of stored ones.
inline constexpr TokenSource kLastTokenSource = TokenSource::kByteNgram;

// The readable form of one token: a view into the TokenTexts that holds it.
struct TokenText {
  // The full token text, prefix included ("subject:free"); for a byte n-gram, a readable form of
  // its bytes, not the text hashed (tokenizer/byte_ngrams.h).
  std::string_view text;
  TokenSource source = TokenSource::kBody;

  friend bool operator==(const TokenText&, const TokenText&) = default;
};

// A sequence of token texts kept back to back in one buffer: a message's few hundred texts cost
// a few allocations, not one each. Indexing gives views that stay valid until the next
// push_back (or the TokenTexts' end). Texts of up to 4 GiB in all. Not thread-safe to change.
class TokenTexts {
 public:
  class Iterator;

  TokenTexts() = default;
  TokenTexts(const TokenTexts& other);
  TokenTexts& operator=(const TokenTexts& other);
  TokenTexts(TokenTexts&&) noexcept = default;
  TokenTexts& operator=(TokenTexts&&) noexcept = default;

  [[nodiscard]] std::size_t size() const { return spans_.size(); }
  [[nodiscard]] bool empty() const { return spans_.empty(); }
  [[nodiscard]] TokenText operator[](std::size_t i) const {
    const Span& span = spans_[order_.empty() ? i : order_[i]];
    return {std::string_view(bytes_.get() + span.offset, span.size), span.source};
  }
  [[nodiscard]] Iterator begin() const;
  [[nodiscard]] Iterator end() const;

  // Appends a copy of `text`. REQUIRES: not Reordered (the tokenizer's hot path: no branch).
  void push_back(const TokenText& text) {
    assert(order_.empty());
    const std::size_t size = text.text.size();
    if (capacity_ - used_ < size) Grow(size);
    CopyText(bytes_.get() + used_, text.text.data(), size);
    spans_.push_back({used_, static_cast<std::uint32_t>(size), text.source});
    used_ += static_cast<std::uint32_t>(size);
  }
  void reserve(std::size_t texts, std::size_t bytes) {
    spans_.reserve(texts);
    if (bytes > capacity_) Grow(bytes - used_);
  }

  // The same texts in another order: the i-th is this one's order[i]-th. Nothing is copied: the
  // order is kept and read through. REQUIRES: `order` is a permutation of 0..size()-1.
  [[nodiscard]] TokenTexts Reordered(std::vector<std::uint32_t> order) &&;

  friend bool operator==(const TokenTexts& a, const TokenTexts& b);

 private:
  struct Span {
    std::uint32_t offset;
    std::uint32_t size;
    TokenSource source;
  };

  // Makes room for `more` bytes after the used ones (at least doubling the buffer).
  void Grow(std::size_t more);
  // Copies `size` bytes: a token's few bytes in a load and a store or two, without a call.
  static void CopyText(char* to, const char* from, std::size_t size) {
    if (size - 4 <= 4) {  // 4 to 8 bytes: two 4-byte words, overlapping when fewer than 8.
      std::uint32_t head, tail;
      std::memcpy(&head, from, 4);
      std::memcpy(&tail, from + size - 4, 4);
      std::memcpy(to, &head, 4);
      std::memcpy(to + size - 4, &tail, 4);
    } else if (size - 9 <= 7) {  // 9 to 16 bytes: two 8-byte words.
      std::uint64_t head, tail;
      std::memcpy(&head, from, 8);
      std::memcpy(&tail, from + size - 8, 8);
      std::memcpy(to, &head, 8);
      std::memcpy(to + size - 8, &tail, 8);
    } else if (size != 0) {
      std::memcpy(to, from, size);
    }
  }

  // The texts back to back in the first used_ of capacity_ bytes; the rest is room, never read
  // (and not zeroed: a buffer of a few KiB is made for each message).
  std::unique_ptr<char[]> bytes_;
  std::size_t capacity_ = 0;
  std::uint32_t used_ = 0;
  std::vector<Span> spans_;           // In the order pushed.
  std::vector<std::uint32_t> order_;  // The i-th text is spans_[order_[i]]; empty: spans_[i].
};

class TokenTexts::Iterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = TokenText;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = TokenText;

  Iterator() = default;
  Iterator(const TokenTexts* texts, std::size_t index) : texts_(texts), index_(index) {}
  TokenText operator*() const { return (*texts_)[index_]; }
  Iterator& operator++() {
    ++index_;
    return *this;
  }
  Iterator operator++(int) {
    Iterator before = *this;
    ++index_;
    return before;
  }
  friend bool operator==(const Iterator& a, const Iterator& b) { return a.index_ == b.index_; }

 private:
  const TokenTexts* texts_ = nullptr;
  std::size_t index_ = 0;
};

inline TokenTexts::Iterator TokenTexts::begin() const { return {this, 0}; }
inline TokenTexts::Iterator TokenTexts::end() const { return {this, size()}; }

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_TOKEN_TEXTS_H_
