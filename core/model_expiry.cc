#include "core/model_expiry.h"

#include <algorithm>
#include <limits>
#include <string>

#include "common/log.h"
#include "common/utc_time.h"

namespace nbspamd::core {

namespace {

constexpr std::int64_t kSecondsPerDay = 86400;

}  // namespace

ModelExpirySweep::ModelExpirySweep(SpamFilter& filter, ExpiryPolicy policy,
                                   std::chrono::milliseconds interval)
    : filter_(filter), policy_(policy), task_(interval, [this] {
        if (auto swept = SweepOnce(); !swept) {
          LogError("the model expiry pass failed: " + swept.error().message);
        }
      }) {}

std::expected<ExpiryPass, Error> ModelExpirySweep::SweepOnce() {
  std::lock_guard lock(pass_mutex_);
  const auto start = std::chrono::steady_clock::now();
  const std::int64_t now = filter_.options().clock();
  auto pass = Pass(now);
  const bool changed = pass && (pass->retired > 0 || pass->dropped_by_age > 0 ||
                                pass->dropped_from_users > 0 || pass->dropped_by_cap > 0);
  if (pass) {
    // The retire and drop writes sit in the write-ahead log until every family they touched
    // has flushed them, and the expiry's families are written by nothing else: without this the
    // logs grew to most of the folder (docs/STORAGE.md, "A year of mail"). Also after a pass
    // that changed nothing here: in cluster mode another daemon's pass may have made the writes
    // this one applied from the stream. Empty memory tables are not flushed. The model is the
    // same either way, so a failure only leaves the logs for RocksDB's own flushes.
    if (auto flushed = filter_.Upkeep().FlushMemoryTables(); !flushed) {
      LogWarning("the model expiry pass could not flush the memory tables: " +
                 flushed.error().message);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  filter_.Upkeep().NoteExpiryPass(filter_.options().clock(), seconds, pass && pass->cap_met,
                                  pass && pass->age_rule_waiting);
  if (pass && pass->age_rule_waiting != waiting_logged_) {
    waiting_logged_ = pass->age_rule_waiting;
    if (waiting_logged_) {
      LogInfo(
          "the token expiry's age rule waits: fewer than token_expiry_min_messages messages "
          "learned since the oldest sample of this daemon's model",
          {{"token_expiry_min_messages", std::to_string(policy_.token_min_messages)}});
    } else {
      LogInfo("the token expiry's age rule acts again: token_expiry_min_messages messages learned",
              {{"token_expiry_min_messages", std::to_string(policy_.token_min_messages)}});
    }
  }
  if (changed) {
    LogInfo("model expiry pass", {{"retired_records", std::to_string(pass->retired)},
                                  {"dropped_by_age", std::to_string(pass->dropped_by_age)},
                                  {"dropped_from_users", std::to_string(pass->dropped_from_users)},
                                  {"dropped_by_cap", std::to_string(pass->dropped_by_cap)},
                                  {"seconds", std::to_string(seconds)}});
  }
  return pass;
}

std::expected<ExpiryPass, Error> ModelExpirySweep::Pass(std::int64_t now) {
  ExpiryPass pass;
  if (policy_.ledger_retention.count() > 0) {
    auto retired = filter_.Upkeep().RetireLedger(now - policy_.ledger_retention.count());
    if (!retired) return std::unexpected(std::move(retired.error()));
    pass.retired = *retired;
  }
  storage::TokenExpiryRule rule;
  rule.keep_weight = policy_.keep_weight;
  rule.keep_ham = policy_.keep_ham;
  rule.alpha = policy_.alpha;
  std::optional<std::int64_t> message_horizon;
  if (policy_.token_age.count() > 0 && policy_.token_min_messages > 0) {
    message_horizon = MessageHorizon(now);
    pass.age_rule_waiting = !message_horizon;
  }
  if (policy_.token_age.count() > 0 && !pass.age_rule_waiting) {
    rule.seen_before = now - policy_.token_age.count();
    if (message_horizon) rule.seen_before = std::min(rule.seen_before, *message_horizon);
    rule.max_count = policy_.token_max_count;
    auto dropped = filter_.Upkeep().ExpireTokens(rule);
    if (!dropped) return std::unexpected(std::move(dropped.error()));
    pass.dropped_by_age = *dropped;
    auto dropped_from_users = filter_.Upkeep().ExpireUserTokens(rule);
    if (!dropped_from_users) return std::unexpected(std::move(dropped_from_users.error()));
    pass.dropped_from_users = *dropped_from_users;
  }
  const std::uint64_t vocabulary = filter_.Stats()->vocabulary_size;
  if (policy_.token_cap == 0 || vocabulary <= policy_.token_cap) return pass;

  // The cap: the least recently seen first, whole days at a time, until enough are gone.
  rule.max_count = 0;
  rule.seen_before = std::numeric_limits<std::int64_t>::max();
  auto candidates = filter_.Upkeep().FindExpiryCandidates(rule);
  if (!candidates) return std::unexpected(std::move(candidates.error()));
  const std::uint64_t excess = vocabulary - policy_.token_cap;
  std::uint64_t enough = 0;
  for (const auto& [day, tokens] : *candidates) {
    enough += tokens;
    rule.seen_before = (day + 1) * kSecondsPerDay;
    if (enough >= excess) break;
  }
  pass.cap_met = enough >= excess;
  if (!pass.cap_met) {
    LogWarning(
        "the token cap cannot be met: live ledger records hold too many tokens, or the kept "
        "ones (token_keep_ham, token_keep_weight) are too many",
        {{"tokens", std::to_string(vocabulary)},
         {"token_cap", std::to_string(policy_.token_cap)},
         {"droppable", std::to_string(enough)}});
  }
  if (enough == 0) return pass;
  auto dropped = filter_.Upkeep().ExpireTokens(rule);
  if (!dropped) return std::unexpected(std::move(dropped.error()));
  pass.dropped_by_cap = *dropped;
  return pass;
}

std::optional<std::int64_t> ModelExpirySweep::MessageHorizon(std::int64_t now) {
  const std::uint64_t documents = filter_.Stats()->TotalDocuments();
  const std::uint64_t needed = policy_.token_min_messages;
  if (!seeded_) {
    // The first pass since start: the live ledger knows when the last `needed` messages it
    // holds were learned, so a restart need not wait for that many new ones. (A store without
    // a ledger retention, or fewer live records: the samples alone.)
    seeded_ = true;
    auto newest = filter_.Upkeep().NthNewestLearned(needed);
    if (newest && *newest && documents >= needed && **newest < now) {
      samples_.push_back({**newest, documents - needed});
    }
  }
  // The samples rise strictly in documents: one with as many documents as now, or more (after
  // forgets), and an older time than now is never the better horizon.
  while (!samples_.empty() && samples_.back().documents >= documents) samples_.pop_back();
  samples_.push_back({now, documents});
  if (documents < needed) return std::nullopt;
  // The newest sample at most documents - needed: the samples before it are no longer needed.
  const auto after = std::upper_bound(
      samples_.begin(), samples_.end(), documents - needed,
      [](std::uint64_t limit, const DocumentSample& sample) { return limit < sample.documents; });
  if (after == samples_.begin()) return std::nullopt;
  samples_.erase(samples_.begin(), after - 1);
  return samples_.front().time;
}

}  // namespace nbspamd::core
