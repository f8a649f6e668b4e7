#include "config/auth_tokens.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

namespace nbspamd::config {
namespace {

constexpr std::size_t kMaxNameChars = 64;
constexpr std::size_t kMinSecretChars = 16;
constexpr std::size_t kMaxSecretChars = 256;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// Parses one "NAME:SECRET" item; `where` names it in errors ("auth_tokens item 2").
std::expected<AuthToken, Error> ParseItem(std::string_view item, const std::string& where) {
  const std::size_t colon = item.find(':');
  if (colon == std::string_view::npos) {
    return MakeError(ErrorCode::kInvalidArgument, where + ": expected NAME:SECRET");
  }
  const std::string_view name = item.substr(0, colon);
  const std::string_view secret = item.substr(colon + 1);
  if (name.empty() || name.size() > kMaxNameChars || !std::ranges::all_of(name, IsNameChar)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     where + ": a token name is 1 to 64 characters of A-Z a-z 0-9 _ . -");
  }
  // The daemon's own source (model::kAutolearnSource): a person's label must never pass for it.
  if (name == "autolearn") {
    return MakeError(ErrorCode::kInvalidArgument,
                     where + ": the token name 'autolearn' is reserved for the daemon's autolearn");
  }
  if (secret.size() < kMinSecretChars || secret.size() > kMaxSecretChars ||
      !std::ranges::all_of(secret, [](char c) { return c > ' ' && c < 0x7f && c != ','; })) {
    return MakeError(ErrorCode::kInvalidArgument,
                     where + " ('" + std::string(name) +
                         "'): a secret is 16 to 256 visible ASCII characters other than ','");
  }
  return AuthToken{std::string(name), std::string(secret)};
}

}  // namespace

std::expected<std::vector<AuthToken>, Error> LoadAuthTokens(const Settings& settings) {
  std::vector<AuthToken> tokens;
  std::size_t position = 0;
  std::string_view list = settings.auth_tokens;
  while (!Trim(list).empty()) {
    const std::size_t comma = std::min(list.find(','), list.size());
    ++position;
    auto token =
        ParseItem(Trim(list.substr(0, comma)), "auth_tokens item " + std::to_string(position));
    if (!token) return std::unexpected(token.error());
    tokens.push_back(std::move(*token));
    list.remove_prefix(std::min(comma + 1, list.size()));
  }
  if (!settings.auth_tokens_file.empty()) {
    std::ifstream file(settings.auth_tokens_file);
    if (!file) {
      return MakeError(ErrorCode::kNotFound,
                       "auth_tokens_file: cannot read " + settings.auth_tokens_file);
    }
    std::string line;
    for (std::size_t number = 1; std::getline(file, line); ++number) {
      const std::string_view item = Trim(line);
      if (item.empty() || item.front() == '#') continue;
      auto token = ParseItem(item, settings.auth_tokens_file + " line " + std::to_string(number));
      if (!token) return std::unexpected(token.error());
      tokens.push_back(std::move(*token));
    }
  }
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (tokens[i].name == tokens[j].name) {
        return MakeError(ErrorCode::kInvalidArgument,
                         "the token name '" + tokens[i].name + "' is given twice");
      }
      if (tokens[i].secret == tokens[j].secret) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            "tokens '" + tokens[j].name + "' and '" + tokens[i].name + "' have the same secret");
      }
    }
  }
  return tokens;
}

}  // namespace nbspamd::config
