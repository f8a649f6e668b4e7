// MessageMaker: synthetic messages of one class, mostly its own words, some shared ones and some
// of the other class, so that scores spread and some messages are ambiguous. Each message once.
// Deterministic for a seed. Not thread-safe.
#ifndef NBSPAMD_TESTS_SUPPORT_MESSAGE_MAKER_H_
#define NBSPAMD_TESTS_SUPPORT_MESSAGE_MAKER_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace nbspamd::testing {

class MessageMaker {
 public:
  explicit MessageMaker(std::uint32_t seed) : random_(seed) {}

  // A message of spam (else ham); `own_tenths` of its words (out of 10) are its class's own.
  std::string Make(bool spam, unsigned own_tenths = 6) {
    static const std::vector<std::string> kSpam = {"cheap",  "pills", "winner", "prize",
                                                   "casino", "free",  "money",  "click",
                                                   "offer",  "bonus", "credit", "urgent"};
    static const std::vector<std::string> kHam = {"lunch",  "meeting", "report",  "agenda",
                                                  "team",   "notes",   "project", "friday",
                                                  "budget", "review",  "draft",   "minutes"};
    static const std::vector<std::string> kShared = {"the",  "and",  "today", "please",
                                                     "your", "time", "now",   "thanks"};
    const std::vector<std::string>& own = spam ? kSpam : kHam;
    const std::vector<std::string>& other = spam ? kHam : kSpam;
    std::string text;
    const int words = 5 + static_cast<int>(random_() % 8);
    for (int i = 0; i < words; ++i) {
      const unsigned roll = random_() % 10;
      const std::vector<std::string>& from = roll < own_tenths       ? own
                                             : roll < own_tenths + 2 ? kShared
                                                                     : other;
      text += from[random_() % from.size()] + " ";
    }
    return text + "n" + std::to_string(next_++);
  }

 private:
  std::mt19937 random_;
  int next_ = 0;
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_MESSAGE_MAKER_H_
