#include "history/fact_policy.h"

#include <xxhash.h>

#include "common/hex.h"
#include "common/utf8.h"

namespace nbspamd::history {
namespace {

constexpr std::size_t kMaxFactBytes = 512;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string_view FactPolicyName(FactPolicy policy) {
  switch (policy) {
    case FactPolicy::kKeep:
      return "keep";
    case FactPolicy::kHash:
      return "hash";
    case FactPolicy::kOff:
      return "off";
  }
  return "off";
}

std::expected<FactPolicy, Error> ParseFactPolicy(std::string_view text) {
  if (text == "keep") return FactPolicy::kKeep;
  if (text == "hash") return FactPolicy::kHash;
  if (text == "off") return FactPolicy::kOff;
  return MakeError(ErrorCode::kInvalidArgument, "expected keep, hash or off");
}

std::string HashedFact(std::string_view value) {
  while (!value.empty() && IsBlank(value.front())) value.remove_prefix(1);
  while (!value.empty() && IsBlank(value.back())) value.remove_suffix(1);
  std::string lower(value);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::string text(1, '#');
  AppendHex(text, XXH3_64bits(lower.data(), lower.size()), 16);
  return text;
}

std::string KeptFact(std::string_view value, FactPolicy policy) {
  if (value.empty() || policy == FactPolicy::kOff) return {};
  if (policy == FactPolicy::kHash) return HashedFact(value);
  std::string kept = ReplaceInvalidUtf8(value);
  if (kept.size() > kMaxFactBytes) {
    std::size_t cut = kMaxFactBytes;
    while (cut > 0 && (static_cast<unsigned char>(kept[cut]) & 0xc0) == 0x80) --cut;
    kept.resize(cut);
  }
  return kept;
}

ScanFacts KeptFacts(const ScanFacts& facts, const FactPolicies& policies) {
  return {.message_id = KeptFact(facts.message_id, policies.message_id),
          .from_domain = KeptFact(facts.from_domain, policies.from_domain),
          .subject = KeptFact(facts.subject, policies.subject),
          .client = KeptFact(facts.client, policies.client),
          .recipients = KeptFact(facts.recipients, policies.recipients)};
}

}  // namespace nbspamd::history
