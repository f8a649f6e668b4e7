// WholeTokens: the tokens a mail reader takes whole (header, URL and meta tokens), their texts
// back to back in one buffer, so that a message's few hundred of them cost no allocation each.
#ifndef NBSPAMD_TOKENIZER_WHOLE_TOKENS_H_
#define NBSPAMD_TOKENIZER_WHOLE_TOKENS_H_

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/token_texts.h"

namespace nbspamd::tokenizer {

// A sequence of (text, source) in the order added. Texts are valid UTF-8 (Add repairs them;
// AddValid's caller vouches for them). The views handed out stay valid until the next Add.
// Not thread-safe; a value type.
class WholeTokens {
 public:
  struct Token {
    std::string_view text;
    TokenSource source = TokenSource::kMeta;
  };

  class Iterator {
   public:
    using value_type = Token;
    using difference_type = std::ptrdiff_t;
    Iterator() = default;
    Iterator(const WholeTokens* tokens, std::size_t index) : tokens_(tokens), index_(index) {}
    Token operator*() const { return (*tokens_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const WholeTokens* tokens_ = nullptr;
    std::size_t index_ = 0;
  };

  // Adds the token whose text is `pieces` one after another; ill-formed UTF-8 in it becomes
  // U+FFFD (ReplaceInvalidUtf8).
  void Add(std::initializer_list<std::string_view> pieces, TokenSource source);
  // As Add, for pieces known to be valid UTF-8 (header words, which are ASCII; names the reader
  // made): nothing is checked.
  void AddValid(std::initializer_list<std::string_view> pieces, TokenSource source);

  [[nodiscard]] std::size_t size() const { return ends_.size(); }
  [[nodiscard]] bool empty() const { return ends_.empty(); }
  [[nodiscard]] Token operator[](std::size_t i) const {
    const std::size_t begin = i == 0 ? 0 : ends_[i - 1].end;
    return {std::string_view(bytes_).substr(begin, ends_[i].end - begin), ends_[i].source};
  }
  [[nodiscard]] Iterator begin() const { return {this, 0}; }
  [[nodiscard]] Iterator end() const { return {this, size()}; }

 private:
  struct End {
    std::size_t end;  // One past the token's last byte in bytes_.
    TokenSource source;
  };
  std::string bytes_;
  std::vector<End> ends_;
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_WHOLE_TOKENS_H_
