#include "common/prometheus_text.h"

#include <charconv>

namespace nbspamd {

std::string PrometheusLabelValue(std::string_view value) {
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') {
      quoted += '\\';
      quoted += c;
    } else if (c == '\n') {
      quoted += "\\n";
    } else {
      quoted += c;
    }
  }
  quoted += '"';
  return quoted;
}

std::string PrometheusNumber(double value) {
  char text[64];
  const auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return ec == std::errc() ? std::string(text, end) : "NaN";
}

void AppendMetricHeader(std::string& out, std::string_view name, std::string_view type,
                        std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void AppendSample(std::string& out, std::string_view name, std::string_view labels, double value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(PrometheusNumber(value)).append("\n");
}

void AppendCounter(std::string& out, std::string_view name, std::string_view help,
                   std::string_view labels, std::uint64_t value) {
  if (!help.empty()) AppendMetricHeader(out, name, "counter", help);
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(std::to_string(value)).append("\n");
}

}  // namespace nbspamd
