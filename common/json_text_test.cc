#include "common/json_text.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <cstdint>
#include <limits>

namespace nbspamd {
namespace {

namespace json = boost::json;

// The text parses back (it is valid JSON) to a value equal to `value`, non-finite doubles aside.
void ExpectRoundTrip(const json::value& value) {
  const std::string text = WriteJson(value);
  boost::system::error_code ec;
  const json::value parsed = json::parse(text, ec);
  ASSERT_FALSE(ec) << text;
  EXPECT_EQ(WriteJson(parsed), text);
}

TEST(JsonTextTest, DoublesAreTheShortestRoundTripDecimal) {
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(1.0), "1");
  EXPECT_EQ(JsonNumber(0.9997), "0.9997");
  EXPECT_EQ(JsonNumber(-0.0213), "-0.0213");
  EXPECT_EQ(JsonNumber(123456789.0), "123456789");
  EXPECT_EQ(JsonNumber(1e-300), "1e-300");
  EXPECT_EQ(JsonNumber(1e21), "1e+21");
  EXPECT_EQ(JsonNumber(-0.0), "-0");
  EXPECT_EQ(JsonNumber(0.04), "0.04");
  EXPECT_EQ(JsonNumber(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::max()), "1.7976931348623157e+308");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::denorm_min()), "5e-324");
  // Every one reads back to the same double.
  for (const double x : {0.1, 0.9997, -0.0213, 1e-300, 0.30000000000000004, 5e-324, 2.0 / 3}) {
    const json::value parsed = json::parse(JsonNumber(x));
    EXPECT_EQ(parsed.to_number<double>(), x) << JsonNumber(x);
  }
}

TEST(JsonTextTest, NonFiniteDoublesAreNull) {
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(-std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(JsonNumber(std::numeric_limits<double>::quiet_NaN()), "null");
  const json::value value = json::object{{"nan", std::numeric_limits<double>::quiet_NaN()},
                                         {"inf", std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(WriteJson(value), R"({"nan":null,"inf":null})");
  ExpectRoundTrip(value);
}

TEST(JsonTextTest, IntegersStringsAndStructure) {
  const json::value value = json::object{
      {"label", "spam"},
      {"count", std::int64_t{-3}},
      {"big", std::numeric_limits<std::uint64_t>::max()},
      {"ok", true},
      {"none", nullptr},
      {"list", json::array{1, 2.5, "x", false}},
      {"nested", json::object{{"a", json::array{}}, {"b", json::object{}}}},
  };
  EXPECT_EQ(WriteJson(value),
            R"({"label":"spam","count":-3,"big":18446744073709551615,"ok":true,"none":null,)"
            R"("list":[1,2.5,"x",false],"nested":{"a":[],"b":{}}})");
  ExpectRoundTrip(value);
}

TEST(JsonTextTest, StringsAreEscaped) {
  const json::value value =
      json::string(std::string_view("q\"b\\s/\b\f\n\r\t\x01\x1f\x7f caf\xc3\xa9", 20));
  EXPECT_EQ(WriteJson(value), "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f caf\xc3\xa9\"");
  ExpectRoundTrip(value);
  EXPECT_EQ(WriteJson(json::object{{"k\"ey", 1}}), R"({"k\"ey":1})");
}

TEST(JsonTextTest, AppendJsonAppends) {
  std::string out = "x=";
  AppendJson(out, json::array{0.5});
  EXPECT_EQ(out, "x=[0.5]");
}

}  // namespace
}  // namespace nbspamd
