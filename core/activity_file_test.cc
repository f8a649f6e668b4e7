#include "core/activity_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nbspamd::core {
namespace {

std::vector<ActivitySlotCounts> Sample() {
  ActivitySlotCounts hour{.range = ActivityRange::kHour, .period = 29'928'333};
  hour.counts = {1, 2, 3, 4, 5, 6, 7};
  hour.classify_latency[3] = 9;
  hour.train_latency[24] = 1;
  ActivitySlotCounts month{.range = ActivityRange::kMonth, .period = 498'805};
  month.counts[0] = 18'446'744'073'709'551'615ULL;
  return {hour, month};
}

TEST(ActivityFileTest, TextReadsBackTheSame) {
  const auto saved = Sample();
  const std::string text = ActivityText(saved);
  EXPECT_TRUE(text.starts_with("nbspamd-activity 1\n0 29928333 1 2 3 4 5 6 7 0 0 0 9 ")) << text;
  auto parsed = ParseActivity(text);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
  EXPECT_EQ(*parsed, saved);
  EXPECT_TRUE(ParseActivity("nbspamd-activity 1\n")->empty());
}

TEST(ActivityFileTest, ATextNotOfTheFormatIsDataLossNamingTheLine) {
  for (const char* text : {"", "something else\n", "nbspamd-activity 1\n0 1 2\n",
                           "nbspamd-activity 1\n9 1 0 0 0 0 0 0 0\n"}) {
    auto parsed = ParseActivity(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_EQ(parsed.error().code, ErrorCode::kDataLoss);
    EXPECT_NE(parsed.error().message.find("line "), std::string::npos);
  }
  std::string extra = ActivityText(Sample());
  extra.insert(extra.size() - 1, " 5");
  EXPECT_FALSE(ParseActivity(extra).has_value());
}

TEST(ActivityFileTest, AFileIsWrittenWholeAndNoneReadsAsEmpty) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("nbspamd_activity_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "activity").string();
  EXPECT_TRUE(ReadActivity(path)->empty());
  ASSERT_TRUE(WriteActivity(path, Sample()).has_value());
  EXPECT_EQ(*ReadActivity(path), Sample());
  EXPECT_FALSE(std::filesystem::exists(path + ".new"));
  std::ofstream(path) << "garbage\n";
  auto corrupt = ReadActivity(path);
  ASSERT_FALSE(corrupt.has_value());
  EXPECT_NE(corrupt.error().message.find(path), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nbspamd::core
