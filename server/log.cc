#include "server/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace nbspamd::server {
namespace {

void Write(const char* level, std::string_view message) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  // One fprintf per line: stdio locks the stream, so lines from threads do not interleave.
  std::fprintf(stderr, "%s.%03dZ %s %.*s\n", stamp, static_cast<int>(millis), level,
               static_cast<int>(message.size()), message.data());
}

}  // namespace

void LogInfo(std::string_view message) { Write("info", message); }
void LogWarning(std::string_view message) { Write("warning", message); }
void LogError(std::string_view message) { Write("error", message); }

}  // namespace nbspamd::server
