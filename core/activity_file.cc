#include "core/activity_file.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "common/file_replace.h"

namespace nbspamd::core {
namespace {

constexpr std::string_view kHeader = "nbspamd-activity 1";

std::unexpected<Error> Corrupt(std::size_t line, std::string_view why) {
  return MakeError(ErrorCode::kDataLoss,
                   "line " + std::to_string(line) + " of the activity file: " + std::string(why));
}

// Reads the next whitespace-separated number of `text` at `pos`.
template <typename Number>
bool Next(std::string_view text, std::size_t& pos, Number& value) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  const auto [end, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), value);
  if (ec != std::errc()) return false;
  pos = static_cast<std::size_t>(end - text.data());
  return true;
}

}  // namespace

std::string ActivityText(const std::vector<ActivitySlotCounts>& saved) {
  std::string text(kHeader);
  text += '\n';
  for (const ActivitySlotCounts& counts : saved) {
    text += std::to_string(static_cast<unsigned>(counts.range));
    text += ' ';
    text += std::to_string(counts.period);
    for (std::uint64_t value : counts.counts) text += ' ' + std::to_string(value);
    for (const auto* values : {&counts.classify_latency, &counts.train_latency}) {
      for (std::uint64_t value : *values) text += ' ' + std::to_string(value);
    }
    text += '\n';
  }
  return text;
}

std::expected<std::vector<ActivitySlotCounts>, Error> ParseActivity(std::string_view text) {
  std::vector<ActivitySlotCounts> saved;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (number == 1) {
      if (line != kHeader) return Corrupt(number, "not an nbspamd activity file of format 1");
      continue;
    }
    if (line.empty()) continue;
    ActivitySlotCounts counts;
    std::size_t pos = 0;
    unsigned range = 0;
    bool ok =
        Next(line, pos, range) && range < kActivityRangeCount && Next(line, pos, counts.period);
    for (std::uint64_t& value : counts.counts) ok = ok && Next(line, pos, value);
    for (std::uint64_t& value : counts.classify_latency) ok = ok && Next(line, pos, value);
    for (std::uint64_t& value : counts.train_latency) ok = ok && Next(line, pos, value);
    if (!ok || pos != line.size()) return Corrupt(number, "not a period's counts");
    counts.range = static_cast<ActivityRange>(range);
    saved.push_back(counts);
  }
  if (number == 0) return Corrupt(1, "empty");
  return saved;
}

std::expected<std::vector<ActivitySlotCounts>, Error> ReadActivity(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<ActivitySlotCounts>{};
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  if (!file || file.bad()) {
    return MakeError(ErrorCode::kDataLoss, "cannot read the activity file " + path);
  }
  auto saved = ParseActivity(contents.view());
  if (!saved) {
    return MakeError(ErrorCode::kDataLoss, path + ": " + saved.error().message);
  }
  return saved;
}

std::expected<void, Error> WriteActivity(const std::string& path,
                                         const std::vector<ActivitySlotCounts>& saved) {
  return ReplaceFile(path, ActivityText(saved));
}

}  // namespace nbspamd::core
