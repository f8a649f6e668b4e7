#include "tests/support/activity.h"

#include <boost/json.hpp>

namespace nbspamd::testing {

std::int64_t ClassifiedLastHour(HttpClient& client) {
  std::int64_t classified = 0;
  const boost::json::value activity = client.GetJson("/activity");
  for (const boost::json::value& minute : activity.at("minutes").as_array()) {
    for (const char* verdict : {"spam", "ham", "unsure", "unscored"}) {
      classified += minute.at(verdict).to_number<std::int64_t>();
    }
  }
  return classified;
}

}  // namespace nbspamd::testing
