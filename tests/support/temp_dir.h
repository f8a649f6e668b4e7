// TempDir: a fresh folder for a test, removed with everything in it when the object dies.
// Part of nbspamd_test_support (tests/support/CMakeLists.txt): a test that uses it links that.
// Not thread-safe; one per test.
#ifndef NBSPAMD_TESTS_SUPPORT_TEMP_DIR_H_
#define NBSPAMD_TESTS_SUPPORT_TEMP_DIR_H_

#include <filesystem>
#include <string>

namespace nbspamd {

class TempDir {
 public:
  // Creates a fresh folder under the system's temporary folder. Throws std::runtime_error when
  // it cannot (tests only: a test without its folder cannot go on).
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();  // Removes the folder and everything in it; errors are ignored.

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::string Join(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace nbspamd

#endif  // NBSPAMD_TESTS_SUPPORT_TEMP_DIR_H_
