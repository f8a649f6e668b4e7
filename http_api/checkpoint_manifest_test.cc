// The checkpoint manifest's format and the names and ranges a checkpoint's file requests accept:
// what keeps a request inside its checkpoint's folder and a joining daemon from trusting a
// malformed answer.
#include "http_api/checkpoint_manifest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbspamd::http_api {
namespace {

CheckpointManifest SampleManifest() {
  return CheckpointManifest{
      .id = "0123456789abcdef0123456789abcdef",
      .position = "1733390000000-7",
      .files = {{.name = "000012.sst", .size = 70000, .sha256 = std::string(64, 'a')},
                {.name = "CURRENT", .size = 16, .sha256 = std::string(64, '0')},
                {.name = "MANIFEST-000005", .size = 0, .sha256 = std::string(64, 'f')}}};
}

TEST(CheckpointManifestTest, ReadsBackWhatItWrites) {
  const CheckpointManifest manifest = SampleManifest();
  const auto parsed = ParseCheckpointManifest(CheckpointManifestJson(manifest));
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(*parsed, manifest);
  EXPECT_EQ(parsed->TotalBytes(), 70016u);

  CheckpointManifest standalone = manifest;
  standalone.position = "";  // A model that never applied a stream entry.
  EXPECT_EQ(*ParseCheckpointManifest(CheckpointManifestJson(standalone)), standalone);
}

TEST(CheckpointManifestTest, RefusesMalformedManifestsNamingWhatIsWrong) {
  const auto refused = [](const CheckpointManifest& manifest, const std::string& why) {
    const auto parsed = ParseCheckpointManifest(CheckpointManifestJson(manifest));
    ASSERT_FALSE(parsed.has_value()) << why;
    EXPECT_EQ(parsed.error().code, ErrorCode::kInvalidArgument) << why;
    EXPECT_NE(parsed.error().message.find("not a checkpoint manifest"), std::string::npos);
  };
  CheckpointManifest bad = SampleManifest();
  bad.id = "0123456789ABCDEF0123456789ABCDEF";
  refused(bad, "upper-case id");
  bad = SampleManifest();
  bad.position = "12";
  refused(bad, "position without a sequence");
  bad = SampleManifest();
  bad.files[0].name = "../CURRENT";
  refused(bad, "a path");
  bad = SampleManifest();
  bad.files[0].name = ".hidden";
  refused(bad, "a dot file");
  bad = SampleManifest();
  bad.files[0].sha256 = std::string(63, 'a');
  refused(bad, "short digest");
  bad = SampleManifest();
  bad.files[2].name = "CURRENT";
  refused(bad, "a name twice");
  bad = SampleManifest();
  bad.files.erase(bad.files.begin() + 1);
  refused(bad, "no CURRENT");

  for (const std::string& text : std::vector<std::string>{
           "", "[]", "{\"id\":\"0123456789abcdef0123456789abcdef\",\"position\":\"\"}",
           "{\"id\":\"0123456789abcdef0123456789abcdef\",\"position\":\"\",\"files\":[{\"name\":"
           "\"CURRENT\",\"size\":-1,\"sha256\":\"" +
               std::string(64, 'a') + "\"}]}"}) {
    const auto parsed = ParseCheckpointManifest(text);
    EXPECT_FALSE(parsed.has_value()) << text;
  }
}

TEST(CheckpointManifestTest, AFileNameIsPlainAndAnIdIsHex) {
  for (const char* good : {"CURRENT", "000012.sst", "MANIFEST-000005", "OPTIONS-000007", "a_b"}) {
    EXPECT_TRUE(IsCheckpointFileName(good)) << good;
  }
  for (const char* bad :
       {"", ".", "..", ".CURRENT", "a/b", "..%2fCURRENT", "%2e%2e", "a b", "a\\b", "a\nb", "é"}) {
    EXPECT_FALSE(IsCheckpointFileName(bad)) << bad;
  }
  EXPECT_FALSE(IsCheckpointFileName(std::string(129, 'a')));
  EXPECT_TRUE(IsCheckpointFileName(std::string(128, 'a')));
  EXPECT_TRUE(IsCheckpointId("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsCheckpointId("0123456789abcdef0123456789abcde"));
  EXPECT_FALSE(IsCheckpointId("0123456789abcdef0123456789abcdeg"));
  EXPECT_FALSE(IsCheckpointId("../../../../../../../../../etc/x"));
}

TEST(CheckpointManifestTest, OnlyAnOpenEndedByteRangeResumes) {
  EXPECT_EQ(ParseRangeFrom("bytes=0-"), 0u);
  EXPECT_EQ(ParseRangeFrom("bytes=69000-"), 69000u);
  EXPECT_EQ(ParseRangeFrom("bytes=0-99"), std::nullopt);
  EXPECT_EQ(ParseRangeFrom("bytes=-500"), std::nullopt);
  EXPECT_EQ(ParseRangeFrom("bytes=1-,5-"), std::nullopt);
  EXPECT_EQ(ParseRangeFrom("items=5-"), std::nullopt);
  EXPECT_EQ(ParseRangeFrom("bytes=99999999999999999999999-"), std::nullopt);
}

}  // namespace
}  // namespace nbspamd::http_api
