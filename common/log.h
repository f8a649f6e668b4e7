// Logging to standard error, one line per event, in logfmt or JSON:
//   time=2026-11-23T10:45:29.830Z level=info msg="model backed up" path=backups/nbspamd-...
//   {"time":"2026-11-23T10:45:29.830Z","level":"info","msg":"model backed up","path":"..."}
// Events carry no message content and no tokens: ids, sizes, statuses and names only.
//
//   ConfigureLog(LogLevel::kInfo, LogFormat::kLogfmt);  // once, at start-up
//   LogInfo("model backed up", {{"path", path}});
#ifndef NBSPAMD_COMMON_LOG_H_
#define NBSPAMD_COMMON_LOG_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace nbspamd {

enum class LogLevel { kDebug, kInfo, kWarning, kError };
enum class LogFormat { kLogfmt, kJson };

// "debug", "info", "warning", "error"; "logfmt", "json".
[[nodiscard]] std::optional<LogLevel> ParseLogLevel(std::string_view name);
[[nodiscard]] std::optional<LogFormat> ParseLogFormat(std::string_view name);

// Events below `level` are dropped. Not thread-safe: call before any other thread logs.
// The default is kInfo in logfmt.
void ConfigureLog(LogLevel level, LogFormat format);
// The level alone, from any thread while others log (a reload of the settings).
void SetLogLevel(LogLevel level);
[[nodiscard]] bool LogEnabled(LogLevel level);

using LogFields = std::initializer_list<std::pair<std::string_view, std::string_view>>;

// Writes one event line (whole lines: events of different threads never interleave).
void Log(LogLevel level, std::string_view message, LogFields fields = {});
inline void LogDebug(std::string_view message, LogFields fields = {}) {
  if (LogEnabled(LogLevel::kDebug)) Log(LogLevel::kDebug, message, fields);
}
inline void LogInfo(std::string_view message, LogFields fields = {}) {
  Log(LogLevel::kInfo, message, fields);
}
inline void LogWarning(std::string_view message, LogFields fields = {}) {
  Log(LogLevel::kWarning, message, fields);
}
inline void LogError(std::string_view message, LogFields fields = {}) {
  Log(LogLevel::kError, message, fields);
}

// What the exception being handled says, for a log line: what() for a std::exception, else
// "unknown exception". REQUIRES: called inside a catch block.
[[nodiscard]] std::string DescribeCurrentException() noexcept;

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_LOG_H_
