#include "history/scan_header.h"

#include "history/scan_id.h"
#include "history/scan_signature.h"

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

// The signature after `text`'s first "sig=", if a well-formed one is there whole.
std::string SignatureIn(std::string_view text) {
  const std::size_t at = text.find("sig=");
  if (at == std::string_view::npos) return {};
  text.remove_prefix(at + 4);
  if (text.size() < kScanSignatureLength) return {};
  for (std::size_t i = 0; i < kScanSignatureLength; ++i) {
    const char c = text[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
  }
  if (text.size() > kScanSignatureLength) {
    const char after = text[kScanSignatureLength];
    if (after != ' ' && after != '\t' && after != '\r' && after != ';') return {};
  }
  return std::string(text.substr(0, kScanSignatureLength));
}

}  // namespace

std::optional<ScanHeader> FindScanHeader(std::string_view message) {
  message = message.substr(0, std::min(message.size(), kMaxHeaderBytes));
  std::size_t position = 0;
  std::string field;  // One header field, its folded lines joined by a space.
  while (position < message.size()) {
    // The next field: its first line, then every line that starts with a blank.
    field.clear();
    bool end_of_header = false;
    while (position < message.size()) {
      std::size_t end = message.find('\n', position);
      if (end == std::string_view::npos) end = message.size();
      std::string_view line = message.substr(position, end - position);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) {
        end_of_header = field.empty();
        if (end_of_header) position = end + 1;
        break;
      }
      const bool continuation = line.front() == ' ' || line.front() == '\t';
      if (!field.empty() && !continuation) break;
      if (!field.empty()) field.push_back(' ');
      field.append(line);
      position = end + 1;
    }
    if (end_of_header) break;  // The end of the header block.
    const std::string_view text = field;
    if (StartsWithNoCase(text, "x-spam-scan-id:")) {
      const std::string_view value = text.substr(15);
      if (auto id = IdAt(value)) return ScanHeader{std::move(*id), SignatureIn(value)};
    } else if (StartsWithNoCase(text, "x-nbspamd")) {
      const std::size_t colon = text.find(':');
      if (colon == std::string_view::npos) continue;
      for (std::size_t at = text.find("scan=", colon); at != std::string_view::npos;
           at = text.find("scan=", at + 1)) {
        if (auto id = IdAt(text.substr(at + 5))) {
          return ScanHeader{std::move(*id), SignatureIn(text.substr(at + 5))};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace nbspamd::history
