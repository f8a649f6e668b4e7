#include "spamd/spamd_options.h"

#include <algorithm>

namespace nbspamd::spamd {

namespace {

boost::asio::ip::address Unmapped(const boost::asio::ip::address& address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, address.to_v6());
  }
  return address;
}

}  // namespace

std::string_view SpamdIncidentName(SpamdIncident incident) {
  switch (incident) {
    case SpamdIncident::kBackendError:
      return "backend_error";
    case SpamdIncident::kHandlerException:
      return "handler_exception";
    case SpamdIncident::kAcceptFailed:
      return "accept_failed";
  }
  return "unknown";
}

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
