#include "history/scan_query.h"

#include <algorithm>
#include <string_view>

#include "history/fact_policy.h"
#include "history/learned_state.h"

namespace nbspamd::history {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool ContainsIgnoringCase(std::string_view text, std::string_view needle) {
  if (needle.empty()) return true;
  const auto found = std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                                 [](char a, char b) { return Lower(a) == Lower(b); });
  return found != text.end();
}

bool FactMatches(const std::string& fact, const std::string& text, const std::string& hashed) {
  if (fact.empty()) return false;
  if (IsHashedFact(fact)) return fact == hashed;
  return ContainsIgnoringCase(fact, text);
}

}  // namespace

bool Matches(const ScanQuery& query, const std::string& hashed_text, const ScanSummary& summary) {
  if (query.verdict && summary.verdict != *query.verdict) return false;
  if (query.user && summary.user != *query.user) return false;
  if (query.front_end && summary.front_end != *query.front_end) return false;
  if (query.learned && !LearnedMatches(*query.learned, summary.learned)) return false;
  if (query.text.empty()) return true;
  const ScanFacts& facts = summary.facts;
  for (const std::string* fact :
       {&facts.message_id, &facts.from_domain, &facts.subject, &facts.client, &facts.recipients}) {
    if (FactMatches(*fact, query.text, hashed_text)) return true;
  }
  return ContainsIgnoringCase(summary.message_key, query.text) || summary.scan_id == query.text;
}

}  // namespace nbspamd::history
