// FactPolicy: how the scan history keeps each fact that helps find a message (ScanFacts): as
// written, as a hash only (an administrator who is told the value finds the scan by it, but the
// history does not show it), or not at all. Set per fact (settings history_keep_*).
#ifndef NBSPAMD_HISTORY_FACT_POLICY_H_
#define NBSPAMD_HISTORY_FACT_POLICY_H_

#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"
#include "history/scan_record.h"

namespace nbspamd::history {

enum class FactPolicy { kKeep, kHash, kOff };

// "keep", "hash", "off".
[[nodiscard]] std::string_view FactPolicyName(FactPolicy policy);
// Errors: kInvalidArgument naming the three values.
[[nodiscard]] std::expected<FactPolicy, Error> ParseFactPolicy(std::string_view text);

struct FactPolicies {
  FactPolicy message_id = FactPolicy::kKeep;
  FactPolicy from_domain = FactPolicy::kKeep;
  FactPolicy subject = FactPolicy::kHash;
  FactPolicy client = FactPolicy::kKeep;
  FactPolicy recipients = FactPolicy::kHash;
};

// "#" and 16 hex digits of XXH3-64 of `value` with ASCII letters lower-cased and blanks at both
// ends trimmed, so that a value typed again in another case finds it.
[[nodiscard]] std::string HashedFact(std::string_view value);

// `value` as `policy` keeps it: itself (cut to 512 bytes at a UTF-8 boundary), HashedFact, or "".
// "" stays "".
[[nodiscard]] std::string KeptFact(std::string_view value, FactPolicy policy);

// `facts` (as read from a message) as `policies` keep them.
[[nodiscard]] ScanFacts KeptFacts(const ScanFacts& facts, const FactPolicies& policies);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_FACT_POLICY_H_
