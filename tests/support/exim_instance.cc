#include "tests/support/exim_instance.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "tests/support/program_run.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

using test_support::ReadFile;

constexpr std::string_view kDefaultDataAcl =
    "  deny    message   = rejected as spam (score $spam_score)\n"
    "          spam      = nobody:true\n"
    "          condition = ${if >{$spam_score_int}{50}}\n"
    "  warn    spam      = nobody:true\n"
    "          add_header = X-Spam-Score: $spam_score\n"
    "  accept\n";

std::string NameOfUser(uid_t uid) {
  const passwd* entry = getpwuid(uid);
  return entry ? entry->pw_name : std::to_string(uid);
}

std::string NameOfGroup(gid_t gid) {
  const group* entry = getgrgid(gid);
  return entry ? entry->gr_name : std::to_string(gid);
}

// The message as DATA carries it: CRLF line ends, lines starting with '.' doubled, and the
// terminating "." line.
std::string DataSection(std::string_view message) {
  std::string out;
  std::size_t position = 0;
  while (position < message.size()) {
    const auto newline = message.find('\n', position);
    std::string_view line = message.substr(
        position, (newline == std::string_view::npos ? message.size() : newline) - position);
    position = newline == std::string_view::npos ? message.size() : newline + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with('.')) out += '.';
    out.append(line).append("\r\n");
  }
  return out + ".\r\n";
}

// The reply lines of an SMTP transcript, each a complete reply's last line ("250 OK").
std::vector<std::string> LastReplyLines(const std::string& transcript) {
  std::vector<std::string> replies;
  std::istringstream in(transcript);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A reply's last line is "NNN text"; "NNN-text" continues it. Exim's log lines on stderr
    // (none expected with -bs) start with a date and are skipped.
    if (line.size() >= 4 && std::isdigit(static_cast<unsigned char>(line[0])) &&
        std::isdigit(static_cast<unsigned char>(line[1])) &&
        std::isdigit(static_cast<unsigned char>(line[2])) && line[3] == ' ') {
      replies.push_back(line);
    }
  }
  return replies;
}

}  // namespace

std::expected<EximInstance, std::string> EximInstance::Create(EximOptions options) {
  if (!std::filesystem::exists(options.binary)) {
    return std::unexpected(options.binary +
                           " is missing: scripts/install-deps unpacks Debian's exim4-daemon-heavy");
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "nbspamd-exim-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) return std::unexpected("mkdtemp failed");
  EximInstance instance(std::move(options), pattern);
  const std::filesystem::path& dir = instance.dir_;
  std::filesystem::create_directories(dir / "spool");
  std::filesystem::create_directories(dir / "log");

  std::ofstream config(dir / "exim.conf");
  config << "# A throw-away Exim for nbspamd's tests: no daemon, no delivery.\n"
         << "exim_user = " << NameOfUser(geteuid()) << "\n"
         << "exim_group = " << NameOfGroup(getegid()) << "\n"
         << "never_users =\n"
         << "keep_environment =\n"
         << "primary_hostname = exim.nbspamd-test.example\n"
         << "spool_directory = " << (dir / "spool").string() << "\n"
         << "log_file_path = " << (dir / "log").string() << "/%slog\n"
         << "queue_only = true\n"
         << "spamd_address = 127.0.0.1 " << instance.options_.spamd_port << "\n"
         << "acl_smtp_rcpt = acl_check_rcpt\n"
         << "acl_smtp_data = acl_check_data\n"
         << "\nbegin acl\n\n"
         << "acl_check_rcpt:\n  accept\n\n"
         << "acl_check_data:\n"
         << (instance.options_.data_acl.empty() ? std::string(kDefaultDataAcl)
                                                : instance.options_.data_acl)
         << "\nbegin routers\n\n"
         << "discard:\n  driver = redirect\n  data = :blackhole:\n"
         << "\nbegin transports\n";
  config.close();
  if (!config) return std::unexpected("cannot write " + (dir / "exim.conf").string());
  auto checked = instance.Run({"-bV"}, "");
  if (!checked) return std::unexpected("exim -bV refused the configuration: " + checked.error());
  return instance;
}

EximInstance::EximInstance(EximInstance&& other) noexcept
    : options_(std::move(other.options_)), dir_(std::exchange(other.dir_, {})) {}

EximInstance& EximInstance::operator=(EximInstance&& other) noexcept {
  if (this != &other) {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
    options_ = std::move(other.options_);
    dir_ = std::exchange(other.dir_, {});
  }
  return *this;
}

EximInstance::~EximInstance() {
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

std::expected<std::string, std::string> EximInstance::Run(const std::vector<std::string>& args,
                                                          std::string_view input) {
  std::vector<std::string> argv = {options_.binary, "-C", (dir_ / "exim.conf").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  const ProgramRun run = RunProgram(
      argv, input, dir_,
      {.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(options_.timeout),
       .merge_error_into_output = true});
  if (run.timed_out) {
    return std::unexpected("exim did not finish within " +
                           std::to_string(options_.timeout.count()) + " s; output:\n" + run.out +
                           "\nmain log:\n" + MainLog());
  }
  if (!run.err.empty()) return std::unexpected(run.err);  // It could not run.
  if (run.exit_code != 0) {
    return std::unexpected("exim exited with status " + std::to_string(run.wait_status) +
                           "; output:\n" + run.out + "\nmain log:\n" + MainLog());
  }
  return run.out;
}

std::expected<EximSubmission, std::string> EximInstance::Submit(std::string_view message,
                                                                std::string_view from,
                                                                std::string_view to) {
  std::string dialogue = "EHLO client.nbspamd-test.example\r\n";
  dialogue += "MAIL FROM:<" + std::string(from) + ">\r\n";
  dialogue += "RCPT TO:<" + std::string(to) + ">\r\n";
  dialogue += "DATA\r\n";
  dialogue += DataSection(message);
  dialogue += "QUIT\r\n";
  auto output = Run({"-bs"}, dialogue);
  if (!output) return std::unexpected(output.error());
  EximSubmission submission;
  submission.transcript = *output;
  // Greeting, EHLO, MAIL, RCPT, DATA (354), end of DATA, QUIT.
  const std::vector<std::string> replies = LastReplyLines(*output);
  std::size_t go_ahead = replies.size();
  for (std::size_t i = 0; i < replies.size(); ++i) {
    if (replies[i].starts_with("354 ")) go_ahead = i;
  }
  if (go_ahead + 1 >= replies.size()) {
    return std::unexpected("the SMTP dialogue did not reach the end of DATA:\n" + *output +
                           "\nmain log:\n" + MainLog());
  }
  submission.data_reply = replies[go_ahead + 1];
  if (const auto id = submission.data_reply.find(" id=");
      submission.data_reply.starts_with("250")) {
    if (id != std::string::npos) submission.message_id = submission.data_reply.substr(id + 4);
  }
  return submission;
}

std::expected<std::string, std::string> EximInstance::Spooled(std::string_view message_id) {
  if (message_id.empty()) return std::unexpected("no message id");
  return Run({"-Mvc", std::string(message_id)}, "");
}

std::string EximInstance::MainLog() const { return ReadFile(dir_ / "log" / "mainlog"); }

}  // namespace nbspamd::testing
