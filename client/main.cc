// nbspamc: the command-line client of nbspamd. Classifies a message, trains or forgets many
// (files, directories, mbox files, Maildirs), and shows the model's statistics.
//
//   nbspamc classify - < message          exit 0 ham, 1 spam
//   nbspamc train --label spam ~/corpus/spam
//   nbspamc forget archive.mbox
//   nbspamc stats
//   nbspamc report --label spam --user alice < message   a user moved it into Junk
//
// Exit status: client/exit_codes.h; docs/CLIENT.md has the whole manual.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "client/bulk_command.h"
#include "client/command_line.h"
#include "client/connect_options.h"
#include "client/exit_codes.h"
#include "client/history_commands.h"
#include "client/report_command.h"
#include "client/simple_commands.h"

namespace nbspamd::client {
namespace {

int Main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ParseCommandLine(args, [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
  if (!parsed) {
    std::fprintf(stderr, "nbspamc: %s\n%s", parsed.error().message.c_str(), UsageText().c_str());
    return kExitUsage;
  }
  if (parsed->action == ParsedCommandLine::Action::kHelp) {
    std::fputs(parsed->help.c_str(), stdout);
    return kExitOk;
  }
  if (parsed->action == ParsedCommandLine::Action::kVersion) {
    std::puts("nbspamc " NBSPAMC_VERSION);
    return kExitOk;
  }
  const ClientOptions& options = parsed->options;
  auto connect = MakeConnectOptions(options);
  if (!connect) {
    std::fprintf(stderr, "nbspamc: %s\n", connect.error().message.c_str());
    return kExitUsage;
  }
  switch (options.command) {
    case Command::kClassify:
      return RunClassify(options, *connect, stdout, stderr);
    case Command::kStats:
      return RunStats(options, *connect, stdout, stderr);
    case Command::kReport:
      return RunReport(options, *connect, stdout, stderr);
    case Command::kHistory: {
      const auto now = std::chrono::system_clock::now().time_since_epoch();
      return RunHistory(options, *connect,
                        std::chrono::duration_cast<std::chrono::milliseconds>(now).count(), stdout,
                        stderr);
    }
    case Command::kScan:
      return RunScan(options, *connect, stdout, stderr);
    case Command::kTrain:
    case Command::kForget:
      return RunBulk(options, *connect, stdout, stderr, isatty(STDERR_FILENO) == 1);
  }
  return kExitUsage;
}

}  // namespace
}  // namespace nbspamd::client

int main(int argc, char** argv) {
  try {
    return nbspamd::client::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nbspamc: %s\n", e.what());
    return 5;
  }
}
