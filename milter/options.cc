#include "milter/options.h"

#include <algorithm>
#include <cmath>

namespace nbspamd::milter {

namespace {

bool IsPrintableAscii(char c) { return c >= 0x20 && c <= 0x7e; }

std::expected<void, Error> CheckHeaderName(std::string_view option, std::string_view name) {
  const bool valid = !name.empty() && name.size() <= 64 && std::ranges::all_of(name, [](char c) {
    return IsPrintableAscii(c) && c != ':' && c != ' ';
  });
  if (valid) return {};
  return MakeError(
      ErrorCode::kInvalidArgument,
      std::string(option) + " must be 1 to 64 printable ASCII characters without ':' or space");
}

std::expected<void, Error> CheckText(std::string_view option, std::string_view text) {
  if (!text.empty() && text.size() <= 400 && std::ranges::all_of(text, IsPrintableAscii)) return {};
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(option) + " must be 1 to 400 printable ASCII characters");
}

std::expected<void, Error> CheckThreshold(std::string_view option, std::optional<double> value) {
  if (!value || std::isfinite(*value)) return {};
  return MakeError(ErrorCode::kInvalidArgument, std::string(option) + " must be a finite number");
}

}  // namespace

std::expected<void, Error> ValidateConversationOptions(const ConversationOptions& options) {
  if (options.max_body_bytes == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "max_body_bytes must be at least 1");
  }
  if (auto ok = CheckHeaderName("flag_header", options.flag_header); !ok) return ok;
  if (auto ok = CheckHeaderName("status_header", options.status_header); !ok) return ok;
  if (auto ok = CheckText("reject_text", options.reject_text); !ok) return ok;
  if (auto ok = CheckText("quarantine_reason", options.quarantine_reason); !ok) return ok;
  if (auto ok = CheckThreshold("reject_score", options.reject_score); !ok) return ok;
  return CheckThreshold("quarantine_score", options.quarantine_score);
}

std::expected<void, Error> ValidateConnectionOptions(const ConnectionOptions& options) {
  if (options.max_packet_bytes < 65536) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "max_packet_bytes must be at least 65536 (Postfix's body chunk size)");
  }
  if (options.verdict_timeout.count() <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, "verdict_timeout must be positive");
  }
  if (options.read_timeout.count() <= 0) {
    return MakeError(ErrorCode::kInvalidArgument, "read_timeout must be positive");
  }
  return {};
}

std::expected<FailMode, Error> ParseFailMode(std::string_view name) {
  if (name == "accept") return FailMode::kAccept;
  if (name == "tempfail") return FailMode::kTempfail;
  return MakeError(ErrorCode::kInvalidArgument,
                   "fail mode must be 'accept' or 'tempfail', not '" + std::string(name) + "'");
}

std::string_view FailModeName(FailMode mode) {
  return mode == FailMode::kTempfail ? "tempfail" : "accept";
}

}  // namespace nbspamd::milter
