#include "common/sha256.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace nbspamd {
namespace {

// The FIPS 180-2 examples.
TEST(Sha256Test, DigestsTheStandardExamplesFedInPieces) {
  Sha256 empty;
  EXPECT_EQ(empty.HexDigest(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256 abc;
  abc.Update("a");
  abc.Update("");
  abc.Update("bc");
  EXPECT_EQ(abc.HexDigest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, DigestsAFileInBlocksAndNamesOneThatIsMissing) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nbspamd-sha256-" + std::to_string(::getpid())))
          .string();
  // 200,000 bytes of 'a': more than one block of the reader.
  {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    const std::string chunk(1000, 'a');
    for (int i = 0; i < 200; ++i) std::fwrite(chunk.data(), 1, chunk.size(), out);
    std::fclose(out);
  }
  Sha256 whole;
  for (int i = 0; i < 200; ++i) whole.Update(std::string(1000, 'a'));
  const auto digest = Sha256OfFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(digest.has_value()) << digest.error().message;
  EXPECT_EQ(digest->size, 200000u);
  EXPECT_EQ(digest->sha256, whole.HexDigest());
  EXPECT_TRUE(IsSha256Hex(digest->sha256));

  const auto missing = Sha256OfFile(path);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_NE(missing.error().message.find(path), std::string::npos);
}

TEST(Sha256Test, RecognisesOnlyLowerCaseHexOfSixtyFourDigits) {
  EXPECT_TRUE(IsSha256Hex(std::string(64, 'f')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'F')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, '0')));
  EXPECT_FALSE(IsSha256Hex(std::string(65, '0')));
  EXPECT_FALSE(IsSha256Hex(std::string(63, '0') + "g"));
}

}  // namespace
}  // namespace nbspamd
