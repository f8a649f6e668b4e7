#include "core/pending_model.h"

#include <gtest/gtest.h>

#include <initializer_list>

#include "model/learning.h"
#include "storage/memory_store.h"
#include "tests/support/token_bags.h"

namespace nbspamd::core {
namespace {

using test_support::BagOf;

// Folding planned deltas gives what applying them gives: stats (|V| included) and counts.
TEST(PendingModelTest, ReadsWhatApplyingTheFoldedDeltasWouldGive) {
  storage::MemoryStore applied, base;
  for (storage::Store* store : std::initializer_list<storage::Store*>{&applied, &base}) {
    const auto plan =
        model::PlanLearn("a", "spam", BagOf({{1, 2}, {2, 1}}), std::nullopt, *store->Stats());
    ASSERT_TRUE(store->Apply(plan.delta).has_value());
  }
  PendingModel pending(base);
  const TokenBag probe = BagOf({{1, 1}, {2, 1}, {3, 1}, {4, 1}, {9, 1}});
  EXPECT_EQ(pending.Read(probe.entries).counts, base.Read(probe.entries).counts);

  // A learn, a new class, a relearn that moves "a", and a forget; planned on the pending state,
  // applied to the other store one by one.
  const auto step = [&](const model::Delta& delta) {
    pending.Fold(delta);
    ASSERT_TRUE(applied.Apply(delta).has_value());
    const model::Snapshot want = applied.Read(probe.entries);
    const model::Snapshot got = pending.Read(probe.entries);
    EXPECT_EQ(*got.stats, *want.stats);
    EXPECT_EQ(pending.stats(), *want.stats);
    EXPECT_EQ(got.counts, want.counts);
  };
  step(model::PlanLearn("b", "ham", BagOf({{2, 1}, {3, 4}}), std::nullopt, pending.stats()).delta);
  step(model::PlanLearn("c", "phishing", BagOf({{4, 1}}), std::nullopt, pending.stats()).delta);
  step(model::PlanLearn("a", "ham", BagOf({{1, 2}, {2, 1}}), **applied.FindLearned("a"),
                        pending.stats())
           .delta);
  step(model::PlanForget("b", **applied.FindLearned("b"), pending.stats()));
  EXPECT_EQ(pending.stats().vocabulary_size, 3u);  // Tokens 1, 2 (a as ham) and 4 (c).
  // The store itself is untouched.
  EXPECT_EQ(base.Stats()->TotalDocuments(), 1u);
}

}  // namespace
}  // namespace nbspamd::core
