#include "tests/support/seed_examples.h"

#include <gtest/gtest.h>

namespace nbspamd::testing {

const std::vector<SeedDocument>& SeedExamples() {
  static const std::vector<SeedDocument> kSeed = {
      {"spam", "send us your password"}, {"spam", "review us"},
      {"spam", "send us your account"},  {"spam", "send your password"},
      {"ham", "password review"},        {"ham", "send us your review"}};
  return kSeed;
}

void TrainSeedExamples(HttpClient& client) {
  int i = 0;
  for (const SeedDocument& document : SeedExamples()) {
    const auto response = client.Send(
        boost::beast::http::verb::post,
        std::string("/train?label=") + document.label + "&id=seed-" + std::to_string(++i),
        document.text);
    ASSERT_EQ(response.result(), boost::beast::http::status::ok) << response.body();
  }
}

}  // namespace nbspamd::testing
