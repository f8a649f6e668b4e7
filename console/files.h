// The console's files (console/www: the page, its script and its style sheet), compiled into the
// daemon by console/embed.cmake so that /ui/ works offline, with no web server and no Node
// toolchain. http_api serves them (console_endpoints.cc).
//
//   const ConsoleFile* page = FindConsoleFile("index.html");   // nullptr for an unknown name
//
// Thread safety: immutable after the first call; any thread may read.
#ifndef NBSPAMD_CONSOLE_FILES_H_
#define NBSPAMD_CONSOLE_FILES_H_

#include <string_view>
#include <vector>

namespace nbspamd::console {

struct ConsoleFile {
  std::string_view name;          // "index.html", "app.js": the path under /ui/.
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

// Every file, in the order console/CMakeLists.txt lists them.
[[nodiscard]] const std::vector<ConsoleFile>& ConsoleFiles();

// The file called `name` ("" is index.html); nullptr when there is none.
[[nodiscard]] inline const ConsoleFile* FindConsoleFile(std::string_view name) {
  if (name.empty()) name = "index.html";
  for (const ConsoleFile& file : ConsoleFiles()) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

}  // namespace nbspamd::console

#endif  // NBSPAMD_CONSOLE_FILES_H_
