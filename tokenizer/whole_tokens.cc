#include "tokenizer/whole_tokens.h"

#include "common/utf8.h"

namespace nbspamd::tokenizer {

void WholeTokens::Add(std::initializer_list<std::string_view> pieces, TokenSource source) {
  const std::size_t begin = bytes_.size();
  AddValid(pieces, source);
  const std::string_view text = std::string_view(bytes_).substr(begin);
  if (IsValidUtf8(text)) return;
  const std::string valid = ReplaceInvalidUtf8(text);
  bytes_.replace(begin, std::string::npos, valid);
  ends_.back().end = bytes_.size();
}

void WholeTokens::AddValid(std::initializer_list<std::string_view> pieces, TokenSource source) {
  for (const std::string_view piece : pieces) bytes_.append(piece);
  ends_.push_back({bytes_.size(), source});
}

}  // namespace nbspamd::tokenizer
