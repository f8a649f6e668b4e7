#include "history/scan_id.h"

#include "common/hex.h"

namespace nbspamd::history {
namespace {

constexpr std::uint64_t kMaxTime = (std::uint64_t{1} << 48) - 1;  // 12 hex digits.

std::string Format(std::uint64_t time_ms, std::uint32_t low) {
  std::string text;
  text.reserve(kScanIdLength);
  AppendHex(text, time_ms & kMaxTime, 12);
  AppendHex(text, low, 8);
  return text;
}

}  // namespace

ScanIdGenerator::ScanIdGenerator(std::uint32_t salt) : salt_(salt & 0xffff0000u) {}

std::string ScanIdGenerator::Next(std::int64_t time_ms) {
  const std::uint32_t count = counter_.fetch_add(1, std::memory_order_relaxed) & 0xffffu;
  return Format(time_ms < 0 ? 0 : static_cast<std::uint64_t>(time_ms), salt_ | count);
}

std::optional<std::int64_t> ScanIdTime(std::string_view id) {
  if (id.size() != kScanIdLength) return std::nullopt;
  std::uint64_t time = 0;
  for (std::size_t i = 0; i < kScanIdLength; ++i) {
    const char c = id[i];
    const bool digit = c >= '0' && c <= '9';
    const bool letter = c >= 'a' && c <= 'f';
    if (!digit && !letter) return std::nullopt;
    if (i < 12) time = time * 16 + static_cast<std::uint64_t>(digit ? c - '0' : c - 'a' + 10);
  }
  return static_cast<std::int64_t>(time);
}

std::string FirstScanIdAt(std::int64_t time_ms) {
  return Format(time_ms < 0 ? 0 : static_cast<std::uint64_t>(time_ms), 0);
}

}  // namespace nbspamd::history
