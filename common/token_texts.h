// TokenTexts: the readable forms of a bag's tokens, for explanations.
#ifndef NBSPAMD_COMMON_TOKEN_TEXTS_H_
#define NBSPAMD_COMMON_TOKEN_TEXTS_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd {

// Where in the message a token came from. The source is part of the token's text (a prefix such
// as "subject:"), so the same word in two sources gives two tokens.
enum class TokenSource : std::uint8_t {
  kBody,    // A word of the message body (or of plain text).
  kHeader,  // A word or value of a selected header, e.g. "subject:free".
  kUrl,     // A host or domain of a URL.
  kMeta,    // A fact about the message's structure, e.g. "meta:html-only".
};

// The readable form of one token: a view into the TokenTexts that holds it.
struct TokenText {
  std::string_view text;  // The full token text, prefix included ("subject:free").
  TokenSource source = TokenSource::kBody;

  friend bool operator==(const TokenText&, const TokenText&) = default;
};

// A sequence of token texts kept back to back in one buffer: a message's few hundred texts cost
// a few allocations, not one each. Indexing gives views that stay valid until the next
// push_back (or the TokenTexts' end). Texts of up to 4 GiB in all. Not thread-safe to change.
class TokenTexts {
 public:
  class Iterator;

  [[nodiscard]] std::size_t size() const { return spans_.size(); }
  [[nodiscard]] bool empty() const { return spans_.empty(); }
  [[nodiscard]] TokenText operator[](std::size_t i) const {
    const Span& span = spans_[order_.empty() ? i : order_[i]];
    return {std::string_view(bytes_).substr(span.offset, span.size), span.source};
  }
  [[nodiscard]] Iterator begin() const;
  [[nodiscard]] Iterator end() const;

  // Appends a copy of `text`. REQUIRES: not Reordered (the tokenizer's hot path: no branch).
  void push_back(const TokenText& text) {
    assert(order_.empty());
    spans_.push_back({static_cast<std::uint32_t>(bytes_.size()),
                      static_cast<std::uint32_t>(text.text.size()), text.source});
    bytes_.append(text.text);
  }
  void reserve(std::size_t texts, std::size_t bytes) {
    spans_.reserve(texts);
    bytes_.reserve(bytes);
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

  std::string bytes_;
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
