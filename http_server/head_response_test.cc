#include "http_server/head_response.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/temp_dir.h"

namespace nbspamd::http_server {
namespace {

namespace http = boost::beast::http;

TEST(HeadOfTest, KeepsTheHeadAndTheLengthOfTheBodyItLeavesOut) {
  http_api::Response get(http::status::ok, 11);
  get.set(http::field::content_type, "application/json");
  get.body() = R"({"documents":3})";
  get.prepare_payload();
  const http_api::Response head = HeadOf(get);
  EXPECT_EQ(head.result(), http::status::ok);
  EXPECT_EQ(head[http::field::content_type], "application/json");
  EXPECT_EQ(head[http::field::content_length], "15");
  EXPECT_TRUE(head.body().empty());
}

TEST(HeadOfTest, MeasuresABodyFileAndRemovesIt) {
  TempDir dir;
  const std::string path = dir.Join("dump.txt");
  std::ofstream(path) << std::string(70000, 'x');
  http_api::Response get(http::status::ok, 11);
  get.set(http::field::content_type, "text/plain; charset=utf-8");
  get.set(http_api::kBodyFileField, path);
  const http_api::Response head = HeadOf(get);
  EXPECT_EQ(head.result(), http::status::ok);
  EXPECT_EQ(head[http::field::content_length], "70000");
  EXPECT_EQ(head[http::field::content_type], "text/plain; charset=utf-8");
  EXPECT_TRUE(head.find(http_api::kBodyFileField) == head.end());
  EXPECT_TRUE(head.body().empty());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(HeadOfTest, ABodyFileSentFromAnOffsetIsMeasuredFromThere) {
  TempDir dir;
  const std::string path = dir.Join("000012.sst");
  std::ofstream(path) << std::string(70000, 'x');
  http_api::Response get(http::status::partial_content, 11);
  get.set(http_api::kBodyFileField, path);
  get.set(http_api::kBodyFileOffsetField, "69000");
  EXPECT_EQ(BodyFileOffset(get), 69000u);
  const http_api::Response head = HeadOf(get);
  EXPECT_EQ(head.result(), http::status::partial_content);
  EXPECT_EQ(head[http::field::content_length], "1000");
  EXPECT_TRUE(head.find(http_api::kBodyFileOffsetField) == head.end());

  http_api::Response odd(http::status::ok, 11);
  odd.set(http_api::kBodyFileOffsetField, "12x");
  EXPECT_EQ(BodyFileOffset(odd), 0u);
}

TEST(HeadOfTest, ABodyFileThatCannotBeMeasuredIsA500Head) {
  http_api::Response get(http::status::ok, 11);
  get.set(http_api::kBodyFileField, "/nonexistent/nbspamd/dump.txt");
  const http_api::Response head = HeadOf(get);
  EXPECT_EQ(head.result(), http::status::internal_server_error);
  EXPECT_NE(head[http::field::content_length], "0");
  EXPECT_TRUE(head.find(http_api::kBodyFileField) == head.end());
  EXPECT_TRUE(head.body().empty());
}

}  // namespace
}  // namespace nbspamd::http_server
