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

std::optional<SpamdFailure> CheckTell(const SpamdTellPolicy& policy,
                                      const std::optional<boost::asio::ip::address>& address,
                                      std::string_view user) {
  if (!policy.enabled) return SpamdFailure{SpamdStatus::kNoPerm, "TELL commands are not enabled"};
  if (!policy.allowed_addresses.empty()) {
    const bool listed =
        address && std::ranges::any_of(policy.allowed_addresses, [&](const auto& allowed) {
          return Unmapped(allowed) == Unmapped(*address);
        });
    if (!listed) return SpamdFailure{SpamdStatus::kNoPerm, "TELL not allowed from this address"};
  }
  if (!policy.allowed_users.empty() &&
      std::ranges::find(policy.allowed_users, user) == policy.allowed_users.end()) {
    return SpamdFailure{SpamdStatus::kNoPerm, "TELL not allowed for this user"};
  }
  return std::nullopt;
}

}  // namespace nbspamd::spamd
