#include "bench/corpus_files.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nbspamd::bench {
namespace {

bool IsMessageFile(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  return path.extension() == ".txt" || path.extension() == ".eml" || name.starts_with("inmail.");
}

std::vector<std::string> Load() {
  const char* root = std::getenv("NBSPAMD_BENCH_CORPUS");
  const std::string folders = root != nullptr ? root : "bench/accuracy/corpus";
  std::vector<std::filesystem::path> paths;
  for (std::size_t start = 0; start <= folders.size();) {
    std::size_t end = folders.find(':', start);
    if (end == std::string::npos) end = folders.size();
    const std::filesystem::path folder = folders.substr(start, end - start);
    start = end + 1;
    if (folder.empty()) continue;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(folder, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file() && IsMessageFile(it->path())) paths.push_back(it->path());
    }
  }
  std::sort(paths.begin(), paths.end());
  if (paths.empty()) {
    std::fprintf(stderr,
                 "no messages below %s: run bench/accuracy/fetch-corpus or set "
                 "NBSPAMD_BENCH_CORPUS\n",
                 folders.c_str());
    std::exit(2);
  }
  std::vector<std::string> messages;
  for (const auto& path : paths) {
    std::ifstream file(path, std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    messages.push_back(text.str());
  }
  return messages;
}

}  // namespace

const std::vector<std::string>& CorpusMessages() {
  static const std::vector<std::string> messages = Load();
  return messages;
}

std::size_t CorpusBytes() {
  std::size_t total = 0;
  for (const std::string& message : CorpusMessages()) total += message.size();
  return total;
}

}  // namespace nbspamd::bench
