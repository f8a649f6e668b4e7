// LogOfCount against the expression it stands for, bit for bit: first asked, read back, with
// alphas changing between and during classifications, and on several threads.
#include "model/log_of_count.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

namespace nbspamd::model {
namespace {

std::uint64_t BitsOf(double value) { return std::bit_cast<std::uint64_t>(value); }

// The counts to ask for: every kept one, the edge, and some far beyond.
std::vector<std::uint64_t> AskedCounts() {
  std::vector<std::uint64_t> counts;
  for (std::uint64_t n = 0; n < LogOfCount::kKept + 16; ++n) counts.push_back(n);
  for (std::uint64_t n : {std::uint64_t{100'000}, std::uint64_t{1} << 40,
                          std::numeric_limits<std::uint64_t>::max()}) {
    counts.push_back(n);
  }
  return counts;
}

// Each count's value, asked twice (computed, then read back), is the expression's to the bit.
void ExpectExact(const LogOfCount& log_of_count, double alpha) {
  for (int round = 0; round < 2; ++round) {
    for (std::uint64_t n : AskedCounts()) {
      ASSERT_EQ(BitsOf(log_of_count(n)), BitsOf(std::log(static_cast<double>(n) + alpha)))
          << "n = " << n << ", alpha = " << alpha << ", round " << round;
    }
  }
}

TEST(LogOfCountTest, GivesTheLogarithmOfTheCountPlusAlphaToTheBit) {
  for (double alpha : {1.0, 0.1, 0.5, 0.01, 1e-9, 0.0}) ExpectExact(LogOfCount(alpha), alpha);
}

TEST(LogOfCountTest, AnotherAlphaNeverReadsTheValuesKeptForTheFirst) {
  // Filled for 1, then for 0.1, then for 1 again: each object keeps its own alpha's values.
  const LogOfCount one(1.0);
  ExpectExact(one, 1.0);
  const LogOfCount tenth(0.1);
  ExpectExact(tenth, 0.1);
  ExpectExact(one, 1.0);  // The table now holds 0.1's values: `one` must not read them.
  const LogOfCount again(1.0);
  ExpectExact(again, 1.0);
  ExpectExact(tenth, 0.1);
}

TEST(LogOfCountTest, ZeroAlphaGivesMinusInfinityForZero) {
  const LogOfCount log_of_count(0.0);
  EXPECT_EQ(log_of_count(0), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(log_of_count(0), -std::numeric_limits<double>::infinity());  // Read back.
}

TEST(LogOfCountTest, ANaNAlphaGivesNaNAndLeavesNothingBehind) {
  const LogOfCount nan(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(std::isnan(nan(3)));
  EXPECT_TRUE(std::isnan(nan(3)));
  ExpectExact(LogOfCount(2.0), 2.0);
}

TEST(LogOfCountTest, EachThreadGetsTheSameValues) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      const double alpha = t % 2 == 0 ? 1.0 : 0.1;
      const LogOfCount log_of_count(alpha);
      for (int round = 0; round < 3; ++round) {
        for (std::uint64_t n : AskedCounts()) {
          if (BitsOf(log_of_count(n)) != BitsOf(std::log(static_cast<double>(n) + alpha))) {
            ++failures[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace nbspamd::model
