#include "common/prometheus_text.h"

#include <gtest/gtest.h>

#include <atomic>
#include <limits>

namespace nbspamd {
namespace {

TEST(PrometheusTextTest, LabelValuesAreQuotedAndEscaped) {
  EXPECT_EQ(PrometheusLabelValue("plain"), "\"plain\"");
  EXPECT_EQ(PrometheusLabelValue("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
}

TEST(PrometheusTextTest, NumbersAreTheShortestThatReadBack) {
  EXPECT_EQ(PrometheusNumber(3), "3");
  EXPECT_EQ(PrometheusNumber(0.25), "0.25");
  EXPECT_EQ(PrometheusNumber(1e-7), "1e-07");
}

TEST(PrometheusTextTest, FamiliesAndSamples) {
  std::string out;
  AppendMetricHeader(out, "x_seconds", "gauge", "How long.");
  AppendSample(out, "x_seconds", "", 1.5);
  AppendSample(out, "x_seconds", "kind=" + PrometheusLabelValue("a"), 2);
  std::atomic<std::uint64_t> counter = 7;
  AppendCounter(out, "y_total", "Things.", "verdict=\"spam\"", counter);
  AppendCounter(out, "y_total", "", "verdict=\"ham\"", std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(out,
            "# HELP x_seconds How long.\n"
            "# TYPE x_seconds gauge\n"
            "x_seconds 1.5\n"
            "x_seconds{kind=\"a\"} 2\n"
            "# HELP y_total Things.\n"
            "# TYPE y_total counter\n"
            "y_total{verdict=\"spam\"} 7\n"
            "y_total{verdict=\"ham\"} 18446744073709551615\n");
}

}  // namespace
}  // namespace nbspamd
