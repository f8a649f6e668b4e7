// Small text helpers that many tests share: numbered names and a whole file read as bytes.
#ifndef NBSPAMD_TESTS_SUPPORT_TEST_TEXT_H_
#define NBSPAMD_TESTS_SUPPORT_TEST_TEXT_H_

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace nbspamd::test_support {

// `prefix` followed by `n` in decimal: Numbered("m", 7) is "m7".
inline std::string Numbered(std::string_view prefix, std::uint64_t n) {
  std::string name(prefix);
  name += std::to_string(n);
  return name;
}

// The bytes of the file at `path`; empty when it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace nbspamd::test_support

#endif  // NBSPAMD_TESTS_SUPPORT_TEST_TEXT_H_
