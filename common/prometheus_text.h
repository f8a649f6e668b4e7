// The Prometheus text exposition format (version 0.0.4), written in one place for every /metrics
// renderer (the HTTP front end's, the milter's and spamd's):
//
//   std::string out;
//   AppendMetricHeader(out, "nbspamd_x_total", "counter", "Things done.");
//   AppendSample(out, "nbspamd_x_total", "kind=" + PrometheusLabelValue("a\"b"), 3);
//   AppendCounter(out, "nbspamd_y_total", "Other things.", "", counter);  // header and sample
//
// Plain functions on a string; thread-safe as far as their arguments are.
#ifndef NBSPAMD_COMMON_PROMETHEUS_TEXT_H_
#define NBSPAMD_COMMON_PROMETHEUS_TEXT_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace nbspamd {

// A label value in the exposition's quoting: in double quotes, with backslash, double quote and
// newline escaped.
[[nodiscard]] std::string PrometheusLabelValue(std::string_view value);

// A number as the exposition writes it: the shortest text that reads back as `value` ("3",
// "0.25"), "NaN" when it has none.
[[nodiscard]] std::string PrometheusNumber(double value);

// The "# HELP" and "# TYPE" lines of a metric family; `type` is "counter", "gauge" or
// "histogram".
void AppendMetricHeader(std::string& out, std::string_view name, std::string_view type,
                        std::string_view help);

// One sample line: `name`, then `labels` in braces unless empty (e.g. `verdict="spam"`), then
// the value.
void AppendSample(std::string& out, std::string_view name, std::string_view labels, double value);

// A counter's sample, preceded by its family's header when `help` is not empty (the first sample
// of a family).
void AppendCounter(std::string& out, std::string_view name, std::string_view help,
                   std::string_view labels, std::uint64_t value);
inline void AppendCounter(std::string& out, std::string_view name, std::string_view help,
                          std::string_view labels, const std::atomic<std::uint64_t>& counter) {
  AppendCounter(out, name, help, labels, counter.load(std::memory_order_relaxed));
}

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_PROMETHEUS_TEXT_H_
