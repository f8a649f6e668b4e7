// Minimal logging to standard error, one line per event: "<UTC time> <level> <message>".
// Messages never carry message content or tokens.
#ifndef NBSPAMD_SERVER_LOG_H_
#define NBSPAMD_SERVER_LOG_H_

#include <string_view>

namespace nbspamd::server {

void LogInfo(std::string_view message);
void LogWarning(std::string_view message);
void LogError(std::string_view message);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_LOG_H_
