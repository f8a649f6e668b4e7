// Generated test messages shared by the tests that drive many clients at once: a pool of short
// mails and plain texts from a seeded vocabulary (ASCII, accented and CJK words, so both word
// paths of the tokenizer run), and the ids and query encoding those clients use.
#ifndef NBSPAMD_TESTS_SUPPORT_MESSAGE_POOL_H_
#define NBSPAMD_TESTS_SUPPORT_MESSAGE_POOL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace nbspamd::testing {

// `count` messages, the same for the same seed: every third is a mail with headers and a link.
[[nodiscard]] std::vector<std::string> MakeMessages(std::uint32_t seed, int count);

// The id client `client` gives its `n`th message: "<c3.n7@clients.example>".
[[nodiscard]] std::string IdOf(int client, int n);

// `text` percent-encoded for a query parameter.
[[nodiscard]] std::string QueryEncode(const std::string& text);

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_MESSAGE_POOL_H_
