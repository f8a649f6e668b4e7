// RunProgram: runs a program (spamc, say) to its end with `input` on its standard input, and
// gives back its exit status and what it wrote, for tests of the real clients the daemon serves.
//
//   const ProgramRun run = RunProgram({"/usr/bin/spamc", "-c"}, message, dir.path());
//   EXPECT_EQ(run.exit_code, 1) << run.err;
//
// Thread safety: none beyond the files' names: give each concurrent run its own `work_dir`.
#ifndef NBSPAMD_TESTS_SUPPORT_PROGRAM_RUN_H_
#define NBSPAMD_TESTS_SUPPORT_PROGRAM_RUN_H_

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::testing {

struct ProgramRun {
  int exit_code = -1;      // -1 when it could not run, ended on a signal or was killed.
  int wait_status = 0;     // As waitpid gave it.
  bool timed_out = false;  // Killed (SIGKILL) at the end of RunOptions::timeout.
  std::string out;         // Its standard output (and standard error, when merged).
  std::string err;         // Its standard error, or why it could not run.
};

struct RunOptions {
  std::chrono::milliseconds timeout{0};  // 0: wait for its end however long it takes.
  bool merge_error_into_output = false;  // Standard error goes to `out`, as a terminal shows.
};

// Runs argv[0] (a path) with `argv`, its standard input, output and error in files under
// `work_dir` (program-in, program-out, program-err, replaced by each run), waiting for its end
// (or killing it when `options.timeout` passes).
[[nodiscard]] ProgramRun RunProgram(const std::vector<std::string>& argv, std::string_view input,
                                    const std::filesystem::path& work_dir,
                                    const RunOptions& options = {});

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_PROGRAM_RUN_H_
