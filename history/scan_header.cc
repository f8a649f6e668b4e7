#include "history/scan_header.h"

#include "history/scan_id.h"

namespace nbspamd::history {
namespace {

constexpr std::size_t kMaxHeaderBytes = 256 << 10;  // As the tokenizer's header budget.

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

// The scan id at the start of `text` (after blanks), if one is there whole.
std::optional<std::string> IdAt(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  if (text.size() < kScanIdLength) return std::nullopt;
  const std::string_view id = text.substr(0, kScanIdLength);
  if (!ScanIdTime(id)) return std::nullopt;
  if (text.size() > kScanIdLength) {
    const char after = text[kScanIdLength];
    if (after != ' ' && after != '\t' && after != '\r' && after != ';') return std::nullopt;
  }
  return std::string(id);
}

}  // namespace

std::optional<std::string> FindScanId(std::string_view message) {
  message = message.substr(0, std::min(message.size(), kMaxHeaderBytes));
  std::size_t position = 0;
  while (position < message.size()) {
    std::size_t end = message.find('\n', position);
    if (end == std::string_view::npos) end = message.size();
    std::string_view line = message.substr(position, end - position);
    position = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;  // The end of the header block.
    if (StartsWithNoCase(line, "x-spam-scan-id:")) {
      if (auto id = IdAt(line.substr(15))) return id;
    } else if (StartsWithNoCase(line, "x-nbspamd")) {
      const std::size_t colon = line.find(':');
      if (colon == std::string_view::npos) continue;
      for (std::size_t at = line.find("scan=", colon); at != std::string_view::npos;
           at = line.find("scan=", at + 1)) {
        if (auto id = IdAt(line.substr(at + 5))) return id;
      }
    }
  }
  return std::nullopt;
}

}  // namespace nbspamd::history
