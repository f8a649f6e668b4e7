#include "milter/testing/postfix_instance.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace nbspamd::milter::testing {

namespace {

using namespace std::chrono_literals;

constexpr const char* kPostfix = "/usr/sbin/postfix";

std::unexpected<Error> Unavailable(std::string message) {
  return MakeError(ErrorCode::kUnavailable, std::move(message));
}

// A port of 127.0.0.1 that was free a moment ago (bound to port 0, then released).
std::expected<std::uint16_t, Error> FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    return Unavailable("cannot find a free port: " + reason);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::expected<void, Error> WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Unavailable("cannot write " + path.string());
  return {};
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether process `pid` is gone (or a zombie nobody reaps: PID 1 of a container may not).
bool ProcessGone(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  stat >> pid_field >> name >> state;
  return state == "Z";
}

// The services of a minimal master.cf: SMTP on 127.0.0.1:port and what delivery needs, none
// chrooted. Columns: service type private unpriv chroot wakeup maxproc command.
std::string MasterCf(std::uint16_t smtp_port) {
  std::string cf = "127.0.0.1:" + std::to_string(smtp_port) + " inet n - n - - smtpd\n";
  cf += R"(pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000    0       flush
proxymap  unix  -       -       n       -       -       proxymap
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
)";
  return cf;
}

}  // namespace

std::expected<std::unique_ptr<PostfixInstance>, Error> PostfixInstance::Start(
    const PostfixOptions& options) {
  if (::geteuid() != 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "a throw-away Postfix needs root: its master runs as root and its daemons "
                     "as the postfix user");
  }
  if (::access(kPostfix, X_OK) != 0) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     std::string(kPostfix) +
                         " is missing: install Debian's postfix package (debconf: No "
                         "configuration); scripts/install-deps does");
  }
  std::unique_ptr<PostfixInstance> instance(new PostfixInstance());
  if (auto ready = instance->Setup(options); !ready) return std::unexpected(ready.error());
  return instance;
}

std::expected<void, Error> PostfixInstance::Setup(const PostfixOptions& options) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "nbspamd-postfix-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Unavailable(std::string("mkdtemp: ") + std::strerror(errno));
  }
  dir_ = pattern;
  // virtual(8) delivers as nobody, which must be able to reach mail/ through this folder.
  if (::chmod(dir_.c_str(), 0755) != 0) return Unavailable("chmod " + dir_.string());
  const passwd* nobody = ::getpwnam("nobody");
  if (nobody == nullptr) return Unavailable("no user nobody to deliver as");
  std::error_code ec;
  for (const char* sub : {"conf", "queue", "mail"}) {
    std::filesystem::create_directory(dir_ / sub, ec);
    if (ec) return Unavailable("cannot create " + (dir_ / sub).string() + ": " + ec.message());
  }
  if (::chown((dir_ / "mail").c_str(), nobody->pw_uid, nobody->pw_gid) != 0) {
    return Unavailable("chown mail/: " + std::string(std::strerror(errno)));
  }

  const std::string dir = dir_.string();
  const std::string timeout = std::to_string(options.milter_timeout.count()) + "s";
  std::vector<std::pair<std::string, std::string>> settings = {
      {"compatibility_level", "3.6"},
      {"queue_directory", dir + "/queue"},
      {"data_directory", dir + "/data"},
      {"mail_owner", "postfix"},
      {"setgid_group", "postdrop"},
      // Without the prefix, a maillog_file outside /var makes every daemon die silently.
      {"maillog_file", dir + "/maillog"},
      {"maillog_file_prefixes", dir},
      {"inet_interfaces", "127.0.0.1"},
      {"inet_protocols", "ipv4"},
      {"myhostname", "mx." + options.domain},
      {"mydomain", options.domain},
      {"myorigin", options.domain},
      {"mydestination", ""},
      {"mynetworks", "127.0.0.0/8"},
      {"relay_domains", ""},
      {"smtpd_relay_restrictions", "reject_unauth_destination"},
      {"alias_maps", ""},
      {"alias_database", ""},
      {"smtpd_peername_lookup", "no"},
      {"append_dot_mydomain", "no"},
      {"biff", "no"},
      {"smtputf8_enable", "no"},
      // Nothing leaves this machine: mail for any other domain fails at once.
      {"default_transport", "error:outside the test domain"},
      {"relay_transport", "error:outside the test domain"},
      {"virtual_mailbox_domains", options.domain},
      {"virtual_mailbox_base", dir + "/mail"},
      {"virtual_mailbox_maps", "static:Maildir/"},
      {"virtual_uid_maps", "static:" + std::to_string(nobody->pw_uid)},
      {"virtual_gid_maps", "static:" + std::to_string(nobody->pw_gid)},
      {"virtual_minimum_uid", "1"},
      {"smtpd_milters", options.milter},
      {"non_smtpd_milters", ""},
      {"milter_protocol", "6"},
      {"milter_default_action", options.milter_default_action},
      {"milter_connect_timeout", timeout},
      {"milter_command_timeout", timeout},
      {"milter_content_timeout", timeout},
  };
  settings.insert(settings.end(), options.extra_settings.begin(), options.extra_settings.end());
  std::string main_cf = "# Written by nbspamd's PostfixInstance for one test.\n";
  for (const auto& [name, value] : settings) main_cf += name + " = " + value + "\n";
  if (auto written = WriteFile(dir_ / "conf" / "main.cf", main_cf); !written) return written;
  // master.cf is written before `check`, which reads it; the port is picked again if another
  // process took it between FreePort and Postfix's bind.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    auto port = FreePort();
    if (!port) return std::unexpected(port.error());
    smtp_port_ = *port;
    if (auto written = WriteFile(dir_ / "conf" / "master.cf", MasterCf(smtp_port_)); !written) {
      return written;
    }
    // `check` also creates the queue's subfolders and data/ with their owners.
    if (attempt == 1) {
      if (auto checked = RunPostfix({"check"}); !checked) return checked;
    }
    auto started = RunPostfix({"start"});
    if (started) break;
    if (attempt == kAttempts ||
        started.error().message.find("Address already in use") == std::string::npos) {
      return started;
    }
  }
  started_ = true;
  return {};
}

PostfixInstance::~PostfixInstance() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

void PostfixInstance::Stop() {
  if (!started_) return;
  started_ = false;
  pid_t master = 0;
  {
    std::ifstream pid_file(dir_ / "queue" / "pid" / "master.pid");
    pid_file >> master;
  }
  (void)RunPostfix({"stop"});
  if (master <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!ProcessGone(master)) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(master, SIGKILL);
      return;
    }
    std::this_thread::sleep_for(20ms);
  }
}

std::expected<void, Error> PostfixInstance::RunPostfix(const std::vector<std::string>& args) const {
  const std::string conf = (dir_ / "conf").string();
  const std::string out = (dir_ / "postfix.out").string();
  std::vector<std::string> words = {kPostfix, "-c", conf};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, kPostfix, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::string command = "postfix";
  for (const std::string& arg : args) command += " " + arg;
  if (spawned != 0) return Unavailable("cannot run " + command + ": " + std::strerror(spawned));

  const auto deadline = std::chrono::steady_clock::now() + 60s;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return Unavailable(command + ": waitpid failed");
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return Unavailable(command + " ran past 60 s\n" + LogTail());
    }
    std::this_thread::sleep_for(10ms);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Unavailable(command + " failed (status " + std::to_string(status) + ")\n" + LogTail());
  }
  return {};
}

std::vector<std::string> PostfixInstance::Delivered() const {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(maildir() / "new", ec)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> messages;
  for (const auto& file : files) messages.push_back(ReadFile(file));
  return messages;
}

std::expected<std::vector<std::string>, Error> PostfixInstance::WaitForDelivery(
    std::size_t count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::vector<std::string> messages = Delivered();
    if (messages.size() >= count) return messages;
    if (std::chrono::steady_clock::now() > deadline) {
      return Unavailable(std::to_string(messages.size()) + " of " + std::to_string(count) +
                         " messages delivered in time\n" + LogTail());
    }
    std::this_thread::sleep_for(20ms);
  }
}

bool PostfixInstance::WaitForHeld(std::size_t count, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::size_t held = 0;
    std::error_code ec;
    for (const auto& entry :
         std::filesystem::recursive_directory_iterator(dir_ / "queue" / "hold", ec)) {
      if (entry.is_regular_file()) ++held;
    }
    if (held >= count) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

std::string PostfixInstance::LogTail(std::size_t lines) const {
  std::string tail;
  for (const char* name : {"postfix.out", "maillog"}) {
    std::ifstream in(dir_ / name);
    std::deque<std::string> last;
    for (std::string line; std::getline(in, line);) {
      last.push_back(std::move(line));
      if (last.size() > lines) last.pop_front();
    }
    if (last.empty()) continue;
    tail += "--- " + (dir_ / name).string() + "\n";
    for (const std::string& line : last) tail += line + "\n";
  }
  return tail;
}

}  // namespace nbspamd::milter::testing
