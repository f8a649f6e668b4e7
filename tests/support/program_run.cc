#include "tests/support/program_run.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/support/test_text.h"

extern char** environ;

namespace nbspamd::testing {
namespace {

using test_support::ReadFile;

}  // namespace

ProgramRun RunProgram(const std::vector<std::string>& argv, std::string_view input,
                      const std::filesystem::path& work_dir, const RunOptions& options) {
  const std::filesystem::path in_path = work_dir / "program-in";
  const std::filesystem::path out_path = work_dir / "program-out";
  const std::filesystem::path err_path = work_dir / "program-err";
  std::ofstream(in_path, std::ios::binary | std::ios::trunc) << input;
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (std::string& arg : args) raw.push_back(arg.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  if (options.merge_error_into_output) {
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  } else {
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
  }
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ProgramRun run;
  if (spawned != 0) {
    run.err = "cannot run " + argv[0] + ": " + std::strerror(spawned);
    return run;
  }
  int status = 0;
  if (options.timeout.count() == 0) {
    waitpid(pid, &status, 0);
  } else {
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        run.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  run.wait_status = status;
  run.exit_code = !run.timed_out && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(out_path);
  if (!options.merge_error_into_output) run.err = ReadFile(err_path);
  return run;
}

}  // namespace nbspamd::testing
