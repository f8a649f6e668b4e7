#include "tests/support/dovecot_instance.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "tests/support/program_run.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

using test_support::ReadFile;

namespace fs = std::filesystem;

constexpr char kDovecot[] = "/usr/sbin/dovecot";
constexpr char kSievec[] = "/usr/bin/sievec";
constexpr const char* kScripts[] = {"report-spam.sieve", "report-ham.sieve", "spam-to-junk.sieve"};

bool WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  return static_cast<bool>(file);
}

// A port of 127.0.0.1 that was free a moment ago.
std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

bool Accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool connected =
      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

// The instance's dovecot.conf: the administrator's snippet, then the instance's own paths.
std::string DovecotConf(const fs::path& dir, const fs::path& contrib, std::uint16_t imap_port,
                        std::uint16_t lmtp_port) {
  const std::string d = dir.string();
  return "# Written by nbspamd's DovecotInstance for one test.\n"
         "base_dir = " +
         d +
         "/run\n"
         "state_dir = " +
         d +
         "/state\n"
         "log_path = " +
         d +
         "/dovecot.log\n"
         "info_log_path = " +
         d +
         "/dovecot.log\n"
         "ssl = no\n"
         "disable_plaintext_auth = no\n"
         "auth_mechanisms = plain\n"
         "listen = 127.0.0.1\n"
         "protocols = imap lmtp\n"
         "default_internal_user = dovecot\n"
         "default_login_user = dovenull\n"
         // Sanitizer builds of nbspamc map far more address space than Dovecot's default
         // 256 MB limit, which the pipe program inherits.
         "default_vsz_limit = 0\n"
         "first_valid_uid = 1\n"
         "mail_location = maildir:~/Maildir\n"
         "lmtp_rcpt_check_quota = no\n"
         "passdb {\n  driver = passwd-file\n  args = scheme=PLAIN " +
         d +
         "/users\n}\n"
         "userdb {\n  driver = passwd-file\n  args = " +
         d +
         "/users\n}\n"
         "namespace inbox {\n  inbox = yes\n  separator = /\n"
         "  mailbox Junk {\n    auto = subscribe\n    special_use = \\Junk\n  }\n"
         "  mailbox Trash {\n    auto = subscribe\n    special_use = \\Trash\n  }\n}\n"
         "service imap-login {\n"
         "  inet_listener imap {\n    address = 127.0.0.1\n    port = " +
         std::to_string(imap_port) +
         "\n  }\n"
         "  inet_listener imaps {\n    port = 0\n  }\n}\n"
         "service lmtp {\n"
         "  inet_listener lmtp {\n    address = 127.0.0.1\n    port = " +
         std::to_string(lmtp_port) +
         "\n  }\n}\n"
         "!include " +
         (contrib / "90-nbspamd.conf").string() +
         "\n"
         "plugin {\n"
         "  sieve_pipe_bin_dir = " +
         d +
         "/pipe\n"
         "  imapsieve_mailbox1_before = file:" +
         d +
         "/sieve/report-spam.sieve\n"
         "  imapsieve_mailbox2_before = file:" +
         d +
         "/sieve/report-ham.sieve\n"
         "  sieve_before = " +
         d +
         "/sieve/spam-to-junk.sieve\n"
         "}\n";
}

}  // namespace

std::expected<std::unique_ptr<DovecotInstance>, std::string> DovecotInstance::Start(
    const DovecotOptions& options) {
  if (::geteuid() != 0) {
    return std::unexpected(
        "a throw-away Dovecot needs root: its master binds and then runs "
        "its services as the dovecot, dovenull and mail users");
  }
  if (::access(kDovecot, X_OK) != 0) {
    return std::unexpected(std::string(kDovecot) +
                           " is missing: install Debian's dovecot-imapd, dovecot-lmtpd and "
                           "dovecot-sieve (scripts/install-deps --test does)");
  }
  std::unique_ptr<DovecotInstance> instance(new DovecotInstance());
  if (auto ready = instance->Setup(options); !ready) return std::unexpected(ready.error());
  return instance;
}

std::expected<void, std::string> DovecotInstance::Setup(const DovecotOptions& options) {
  std::string pattern = (fs::temp_directory_path() / "nbspamd-dovecot-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected(std::string("mkdtemp: ") + std::strerror(errno));
  }
  dir_ = pattern;
  // The mail user (nobody) must reach home/ and sieve/ through this folder.
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) return std::unexpected("no user nobody to keep mail as");
  std::error_code ec;
  for (const char* sub : {"home", "sieve", "pipe"}) {
    fs::create_directory(dir_ / sub, ec);
    if (ec) return std::unexpected("cannot create " + (dir_ / sub).string());
  }
  // Copies of the scripts, compiled as docs/DOVECOT.md says (below, once the configuration is
  // written) in a folder the mail user cannot write: Dovecot must load those binaries.
  for (const char* script : kScripts) {
    fs::copy_file(options.contrib_dir / script, dir_ / "sieve" / script, ec);
    if (ec) return std::unexpected("cannot copy " + (options.contrib_dir / script).string());
  }
  fs::create_symlink(options.contrib_dir / "pipe" / "nbspamd-learn",
                     dir_ / "pipe" / "nbspamd-learn", ec);
  if (ec) return std::unexpected("cannot link nbspamd-learn: " + ec.message());
  if (!WriteFile(dir_ / "pipe" / "nbspamd-learn.conf", options.learn_conf)) {
    return std::unexpected("cannot write nbspamd-learn.conf");
  }
  if (::chown((dir_ / "home").c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
    return std::unexpected("chown home/: " + std::string(std::strerror(errno)));
  }
  std::string users;
  for (const std::string& user : options.users) {
    users += user + ":{PLAIN}" + kDovecotPassword + ":" + std::to_string(nobody->pw_uid) + ":" +
             std::to_string(nobody->pw_gid) + "::" + (dir_ / "home" / user).string() + "::\n";
  }
  if (!WriteFile(dir_ / "users", users)) return std::unexpected("cannot write the users file");

  imap_port_ = FreePort();
  lmtp_port_ = FreePort();
  while (lmtp_port_ == imap_port_) lmtp_port_ = FreePort();
  const fs::path conf = dir_ / "dovecot.conf";
  if (!WriteFile(conf, DovecotConf(dir_, options.contrib_dir, imap_port_, lmtp_port_))) {
    return std::unexpected("cannot write dovecot.conf");
  }
  for (const char* script : kScripts) {
    // The report scripts need IMAPSieve's plugins and extensions on sievec's command line.
    std::vector<std::string> sievec = {kSievec, "-c", conf.string()};
    if (std::string_view(script).starts_with("report-")) {
      sievec.insert(sievec.end(), {"-P", "sieve_imapsieve", "-P", "sieve_extprograms", "-x",
                                   "+vnd.dovecot.pipe +vnd.dovecot.environment"});
    }
    sievec.push_back((dir_ / "sieve" / script).string());
    const ProgramRun compiled = RunProgram(sievec, "", dir_, {.timeout = std::chrono::seconds(30)});
    if (compiled.exit_code != 0) {
      return std::unexpected(std::string("sievec ") + script + ": " + compiled.out + compiled.err);
    }
  }
  const ProgramRun run =
      RunProgram({kDovecot, "-c", conf.string()}, "", dir_, {.timeout = std::chrono::seconds(30)});
  if (run.exit_code != 0) {
    return std::unexpected("dovecot did not start: " + run.out + run.err + Log());
  }
  started_ = true;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(Accepts(imap_port_) && Accepts(lmtp_port_))) {
    if (std::chrono::steady_clock::now() > deadline) {
      return std::unexpected("dovecot does not listen on 127.0.0.1:" + std::to_string(imap_port_) +
                             ": " + Log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return {};
}

DovecotInstance::~DovecotInstance() {
  if (started_) {
    const std::string pid_text = ReadFile(dir_ / "run" / "master.pid");
    const pid_t pid = pid_text.empty() ? 0 : static_cast<pid_t>(std::stol(pid_text));
    if (pid > 0 && ::kill(pid, SIGTERM) == 0) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  std::error_code ignored;
  if (!dir_.empty()) fs::remove_all(dir_, ignored);
}

std::string DovecotInstance::Log() const { return ReadFile(dir_ / "dovecot.log"); }

std::string DovecotInstance::WaitForLog(std::string_view text, std::chrono::seconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string log = Log();
  while (log.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    log = Log();
  }
  return log;
}

}  // namespace nbspamd::testing
