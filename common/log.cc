#include "common/log.h"

#include <atomic>
#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <string>

namespace nbspamd {
namespace {

// Read on every log call from any thread; set at start-up and by a reload (SetLogLevel).
std::atomic<LogLevel> min_level = LogLevel::kInfo;
LogFormat format = LogFormat::kLogfmt;

constexpr std::string_view kLevelNames[] = {"debug", "info", "warning", "error"};

std::string Timestamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  const std::size_t length = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(stamp + length, sizeof stamp - length, ".%03dZ", static_cast<int>(millis));
  return stamp;
}

// A logfmt value: bare when it is a plain word, else quoted with \" \\ \n escaped.
void AppendLogfmtValue(std::string& line, std::string_view value) {
  const bool plain =
      !value.empty() && value.find_first_of(" =\"\\\n\r\t") == std::string_view::npos;
  if (plain) {
    line.append(value);
    return;
  }
  line += '"';
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      line += '\\';
      line += c;
    } else if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line += c;
    }
  }
  line += '"';
}

void AppendJsonString(std::string& line, std::string_view value) {
  line += boost::json::serialize(boost::json::string(value));
}

}  // namespace

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kLevelNames); ++i) {
    if (name == kLevelNames[i]) return static_cast<LogLevel>(i);
  }
  return std::nullopt;
}

std::optional<LogFormat> ParseLogFormat(std::string_view name) {
  if (name == "logfmt") return LogFormat::kLogfmt;
  if (name == "json") return LogFormat::kJson;
  return std::nullopt;
}

void ConfigureLog(LogLevel level, LogFormat log_format) {
  min_level.store(level, std::memory_order_relaxed);
  format = log_format;
}

void SetLogLevel(LogLevel level) { min_level.store(level, std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) { return level >= min_level.load(std::memory_order_relaxed); }

void Log(LogLevel level, std::string_view message, LogFields fields) {
  if (!LogEnabled(level)) return;
  const std::string_view level_name = kLevelNames[static_cast<int>(level)];
  std::string line;
  line.reserve(128 + message.size());
  if (format == LogFormat::kJson) {
    line += "{\"time\":\"" + Timestamp() + "\",\"level\":\"";
    line.append(level_name).append("\",\"msg\":");
    AppendJsonString(line, message);
    for (const auto& [key, value] : fields) {
      line += ',';
      AppendJsonString(line, key);
      line += ':';
      AppendJsonString(line, value);
    }
    line += '}';
  } else {
    line += "time=" + Timestamp() + " level=";
    line.append(level_name).append(" msg=");
    AppendLogfmtValue(line, message);
    for (const auto& [key, value] : fields) {
      line += ' ';
      line.append(key).append("=");
      AppendLogfmtValue(line, value);
    }
  }
  line += '\n';
  // One write per line: stdio locks the stream, so lines from threads do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

std::string DescribeCurrentException() noexcept {
  try {
    throw;
  } catch (const std::exception& e) {
    try {
      return e.what();
    } catch (...) {
      return {};
    }
  } catch (...) {
    try {
      return "unknown exception";
    } catch (...) {
      return {};
    }
  }
}

}  // namespace nbspamd
