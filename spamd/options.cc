#include "spamd/options.h"

#include <algorithm>
#include <ranges>
#include <string>

namespace nbspamd::spamd {

namespace {

boost::asio::ip::address Unmapped(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The words of `text`, split at runs of spaces and tabs.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > start) words.push_back(text.substr(start, i - start));
  }
  return words;
}

// The non-empty items of a comma-separated list; nullopt when one is empty ("a,,b", "a,").
std::optional<std::vector<std::string_view>> Items(std::string_view list) {
  std::vector<std::string_view> items;
  for (const auto part : std::views::split(list, ',')) {
    const std::string_view item(part.begin(), part.end());
    if (item.empty()) return std::nullopt;
    items.push_back(item);
  }
  return items;
}

}  // namespace

SpamdTellGrant MakeTellGrant(std::string source, std::vector<boost::asio::ip::address> addresses,
                             std::vector<std::string> users) {
  SpamdTellGrant grant;
  grant.source = std::move(source);
  grant.addresses = std::move(addresses);
  grant.users = std::move(users);
  return grant;
}

std::expected<void, Error> ValidateTellPolicy(const SpamdTellPolicy& policy) {
  for (std::size_t i = 0; i < policy.grants.size(); ++i) {
    const std::string& source = policy.grants[i].source;
    const bool valid =
        !source.empty() && source.size() <= 64 && std::ranges::all_of(source, [](char c) {
          return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '.' || c == '-';
        });
    if (!valid) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "spamd TELL grant " + std::to_string(i + 1) +
                           ": the source name must be 1-64 characters of A-Z a-z 0-9 _ . -");
    }
    if (source == "autolearn") {  // model::kAutolearnSource: the daemon's own.
      return MakeError(ErrorCode::kInvalidArgument,
                       "spamd TELL grant " + std::to_string(i + 1) +
                           ": the source name 'autolearn' is reserved for the daemon's autolearn");
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (policy.grants[j].source == source) {
        return MakeError(ErrorCode::kInvalidArgument, "spamd TELL grants " + std::to_string(j + 1) +
                                                          " and " + std::to_string(i + 1) +
                                                          " have the same source name " + source);
      }
    }
  }
  return {};
}

std::expected<SpamdTellPolicy, Error> ParseTellPolicy(std::string_view text) {
  SpamdTellPolicy policy;
  std::size_t number = 0;
  for (const auto part : std::views::split(text, ';')) {
    const std::vector<std::string_view> words = Words(std::string_view(part.begin(), part.end()));
    ++number;
    const auto invalid = [&](const std::string& why) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "spamd TELL grant " + std::to_string(number) + ": " + why);
    };
    if (words.empty()) {
      // Only a trailing ';' (or none at all) may leave a grant empty.
      if (std::string_view(part.end(), text.end()).find_first_not_of(" \t\r\n") ==
          std::string_view::npos) {
        break;
      }
      return invalid("empty; write SOURCE [from ADDRESS,...] [users USER,...]");
    }
    SpamdTellGrant grant;
    grant.source = std::string(words[0]);
    bool has_from = false;
    bool has_users = false;
    for (std::size_t i = 1; i < words.size(); i += 2) {
      const std::string_view keyword = words[i];
      if (keyword != "from" && keyword != "users") {
        return invalid("expected 'from' or 'users', not '" + std::string(keyword) + "'");
      }
      if (i + 1 >= words.size()) return invalid("'" + std::string(keyword) + "' needs a list");
      const auto items = Items(words[i + 1]);
      if (!items) return invalid("an empty item in '" + std::string(words[i + 1]) + "'");
      if (keyword == "from") {
        if (has_from) return invalid("'from' given twice");
        has_from = true;
        for (const std::string_view item : *items) {
          boost::system::error_code error;
          const auto address = boost::asio::ip::make_address(std::string(item), error);
          if (error) {
            // Appended rather than concatenated: GCC 12 warns (-Wrestrict) about "literal" +
            // std::string once it inlines this deep.
            std::string why = "'";
            why.append(item).append("' is not a numeric IP address");
            return invalid(why);
          }
          grant.addresses.push_back(address);
        }
      } else {
        if (has_users) return invalid("'users' given twice");
        has_users = true;
        for (const std::string_view item : *items) grant.users.emplace_back(item);
      }
    }
    policy.grants.push_back(std::move(grant));
  }
  if (auto valid = ValidateTellPolicy(policy); !valid) return std::unexpected(valid.error());
  return policy;
}

std::expected<std::string, SpamdFailure> CheckTell(
    const SpamdTellPolicy& policy, const std::optional<boost::asio::ip::address>& address,
    std::string_view user) {
  if (policy.grants.empty()) {
    return std::unexpected(SpamdFailure{SpamdStatus::kNoPerm, "TELL commands are not enabled"});
  }
  bool address_allowed = false;
  for (const SpamdTellGrant& grant : policy.grants) {
    const bool address_listed =
        grant.addresses.empty() ||
        (address && std::ranges::any_of(grant.addresses, [&](const auto& allowed) {
           return Unmapped(allowed) == Unmapped(*address);
         }));
    if (!address_listed) continue;
    address_allowed = true;
    if (grant.users.empty() || std::ranges::find(grant.users, user) != grant.users.end()) {
      return grant.source;
    }
  }
  return std::unexpected(
      SpamdFailure{SpamdStatus::kNoPerm, address_allowed ? "TELL not allowed for this user"
                                                         : "TELL not allowed from this address"});
}

}  // namespace nbspamd::spamd
