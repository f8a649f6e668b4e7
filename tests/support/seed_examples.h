// The textbook case 1 of shared/seed-examples.md (4 spam, 2 ham), the model most integration
// tests start from, and how to train it into a running daemon over HTTP.
#ifndef NBSPAMD_TESTS_SUPPORT_SEED_EXAMPLES_H_
#define NBSPAMD_TESTS_SUPPORT_SEED_EXAMPLES_H_

#include <string>
#include <vector>

#include "tests/support/http_client.h"

namespace nbspamd::testing {

struct SeedDocument {
  const char* label;
  const char* text;
};

// In the order of shared/seed-examples.md.
[[nodiscard]] const std::vector<SeedDocument>& SeedExamples();

// Trains SeedExamples() through `client`, the i-th (from 1) under the id "seed-i"; a failed
// train fails the test (a gtest assertion).
void TrainSeedExamples(HttpClient& client);

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_SEED_EXAMPLES_H_
