#include "bench/expiry/mail_manifest.h"

#include <fstream>
#include <sstream>

namespace nbspamd::bench {

std::expected<std::vector<ManifestEntry>, Error> ReadManifest(const std::string& path) {
  std::ifstream file(path);
  if (!file) return MakeError(ErrorCode::kInternal, path + ": cannot be read");
  std::vector<ManifestEntry> entries;
  std::string line;
  while (std::getline(file, line)) {
    const std::size_t tab = line.find('\t');
    const std::string label = line.substr(0, tab);
    if (tab == std::string::npos || tab + 1 == line.size() || (label != "spam" && label != "ham")) {
      return MakeError(ErrorCode::kInvalidArgument,
                       path + ": line " + std::to_string(entries.size() + 1) +
                           " is not LABEL<TAB>PATH with LABEL spam or ham");
    }
    entries.push_back({.spam = label == "spam", .path = line.substr(tab + 1)});
  }
  if (entries.empty()) return MakeError(ErrorCode::kInvalidArgument, path + ": no messages");
  return entries;
}

std::expected<std::string, Error> ReadMessage(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return MakeError(ErrorCode::kInternal, path + ": cannot be read");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace nbspamd::bench
