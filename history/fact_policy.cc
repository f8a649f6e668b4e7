#include "history/fact_policy.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

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

FactKey NewFactKey() {
  FactKey key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    throw std::runtime_error("the system's random source gave no key for the scan history");
  }
  return key;
}

std::string HashedFact(std::string_view value, const FactKey& key) {
  while (!value.empty() && IsBlank(value.front())) value.remove_prefix(1);
  while (!value.empty() && IsBlank(value.back())) value.remove_suffix(1);
  std::string lower(value);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(lower.data()), lower.size(), mac, &size);
  std::uint64_t first = 0;
  for (int i = 0; i < 8; ++i) first = first << 8 | mac[i];
  std::string text(1, '#');
  AppendHex(text, first, 16);
  return text;
}

bool IsHashedFact(std::string_view fact) {
  if (fact.size() != 17 || fact.front() != '#') return false;
  for (const char c : fact.substr(1)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string KeptFact(std::string_view value, FactPolicy policy, const FactKey& key) {
  if (value.empty() || policy == FactPolicy::kOff) return {};
  if (policy == FactPolicy::kHash) return HashedFact(value, key);
  std::string kept = ReplaceInvalidUtf8(value);
  if (kept.size() > kMaxFactBytes) {
    std::size_t cut = kMaxFactBytes;
    while (cut > 0 && (static_cast<unsigned char>(kept[cut]) & 0xc0) == 0x80) --cut;
    kept.resize(cut);
  }
  return kept;
}

ScanFacts KeptFacts(const ScanFacts& facts, const FactPolicies& policies, const FactKey& key) {
  return {.message_id = KeptFact(facts.message_id, policies.message_id, key),
          .from_domain = KeptFact(facts.from_domain, policies.from_domain, key),
          .subject = KeptFact(facts.subject, policies.subject, key),
          .client = KeptFact(facts.client, policies.client, key),
          .recipients = KeptFact(facts.recipients, policies.recipients, key)};
}

std::string KeptTokenText(std::string_view text, TokenSource source, const FactPolicies& policies,
                          const FactKey& key) {
  const auto kept = [&](std::string_view prefix, FactPolicy policy) {
    if (policy == FactPolicy::kKeep) return std::string(text);
    std::string out(prefix);
    out += policy == FactPolicy::kHash ? HashedFact(text.substr(prefix.size()), key) : "\u2026";
    return out;
  };
  if (source == TokenSource::kByteNgram) {
    const bool all_kept =
        policies.subject == FactPolicy::kKeep && policies.recipients == FactPolicy::kKeep &&
        policies.from_domain == FactPolicy::kKeep && policies.message_id == FactPolicy::kKeep;
    if (all_kept) return std::string(text);
    const std::size_t colon = text.find(':');
    const std::string_view prefix = text.substr(0, colon == std::string_view::npos ? 0 : colon + 1);
    return kept(prefix, FactPolicy::kHash);
  }
  if (source != TokenSource::kHeader) return std::string(text);
  static constexpr std::pair<std::string_view, FactPolicy FactPolicies::*> kPrefixes[] = {
      {"subject:", &FactPolicies::subject},
      {"to:", &FactPolicies::recipients},
      {"from:", &FactPolicies::from_domain},
      {"from-domain:", &FactPolicies::from_domain},
      {"from-name:", &FactPolicies::from_domain},
      {"message-id-domain:", &FactPolicies::message_id}};
  for (const auto& [prefix, policy] : kPrefixes) {
    if (text.starts_with(prefix)) return kept(prefix, policies.*policy);
  }
  return std::string(text);
}

bool HashClearFacts(ScanFacts& facts, const FactKey& key) {
  bool changed = false;
  for (std::string* fact : {&facts.subject, &facts.from_domain, &facts.recipients}) {
    if (fact->empty() || IsHashedFact(*fact)) continue;
    *fact = HashedFact(*fact, key);
    changed = true;
  }
  return changed;
}

std::string HashedClearTokenText(std::string_view text, TokenSource source, const FactKey& key) {
  const std::size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view rest = text.substr(colon + 1);
    if (IsHashedFact(rest) || rest == "\u2026") return std::string(text);
  }
  const FactPolicies hashed{.message_id = FactPolicy::kKeep,
                            .from_domain = FactPolicy::kHash,
                            .subject = FactPolicy::kHash,
                            .client = FactPolicy::kKeep,
                            .recipients = FactPolicy::kHash};
  return KeptTokenText(text, source, hashed, key);
}

}  // namespace nbspamd::history
