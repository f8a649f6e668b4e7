// FactPolicy: how the scan history keeps each fact that helps find a message (ScanFacts): as
// written, as a hash only (an administrator who is told the value finds the scan by it, but the
// history does not show it), or not at all. Set per fact (settings history_keep_*).
#ifndef NBSPAMD_HISTORY_FACT_POLICY_H_
#define NBSPAMD_HISTORY_FACT_POLICY_H_

#include <array>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/token_texts.h"
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
  FactPolicy subject = FactPolicy::kKeep;
  FactPolicy client = FactPolicy::kKeep;
  FactPolicy recipients = FactPolicy::kKeep;

  friend bool operator==(const FactPolicies&, const FactPolicies&) = default;
};

// The secret a history's hashes are keyed with: made at random when the history is created and
// kept in it (scan_history.h), so that a dictionary of likely Subjects or addresses, hashed,
// cannot be matched against the hashes it keeps.
inline constexpr std::size_t kFactKeyBytes = 32;
using FactKey = std::array<unsigned char, kFactKeyBytes>;

// A new FactKey from the system's random source. Throws std::runtime_error when it has none (a
// start-up error).
[[nodiscard]] FactKey NewFactKey();

// "#" and 16 hex digits of HMAC-SHA256 under `key` of `value` with ASCII letters lower-cased and
// blanks at both ends trimmed, so that a value typed again in another case finds it.
[[nodiscard]] std::string HashedFact(std::string_view value, const FactKey& key);

// Whether `fact` has HashedFact's form: "#" and 16 lower-case hex digits.
[[nodiscard]] bool IsHashedFact(std::string_view fact);

// `value` as `policy` keeps it: itself (cut to 512 bytes at a UTF-8 boundary), HashedFact, or "".
// "" stays "".
[[nodiscard]] std::string KeptFact(std::string_view value, FactPolicy policy, const FactKey& key);

// `facts` (as read from a message) as `policies` keep them.
[[nodiscard]] ScanFacts KeptFacts(const ScanFacts& facts, const FactPolicies& policies,
                                  const FactKey& key);

// The text an explaining token is kept with, so that a fact kept as a hash or not at all never
// shows in clear through the tokens made of it: "subject:" words follow the subject's policy,
// "to:" words the recipients', "from:", "from-domain:" and "from-name:" the from domain's,
// "message-id-domain:" the message id's; byte n-grams of the head (which hold any header's
// bytes) are kept only when all of those facts are. Hashed: the prefix and HashedFact of the
// rest ("subject:#1f…"); off: the prefix and "…". Any other token as it is.
[[nodiscard]] std::string KeptTokenText(std::string_view text, TokenSource source,
                                        const FactPolicies& policies, const FactKey& key);

// The facts a scan keeps in clear for a bounded time only (ScanHistoryOptions::clear_facts_ms,
// setting history_clear_facts_days): the subject, the from domain and the recipients. Replaces
// each of them that `facts` holds in clear by its HashedFact; returns whether any changed.
bool HashClearFacts(ScanFacts& facts, const FactKey& key);

// An explaining token of a scan whose clear facts were hashed (HashClearFacts), as KeptTokenText
// keeps it with those three facts hashed: "subject:", "to:" and "from…:" words and byte n-grams of
// the head; a token hashed or not kept already stays as it is.
[[nodiscard]] std::string HashedClearTokenText(std::string_view text, TokenSource source,
                                               const FactKey& key);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_FACT_POLICY_H_
