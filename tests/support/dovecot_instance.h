// DovecotInstance: a throw-away Dovecot (Debian's dovecot-imapd, dovecot-lmtpd, dovecot-sieve)
// for tests, set up as docs/DOVECOT.md tells an administrator: its configuration includes
// contrib/dovecot/90-nbspamd.conf itself, and only the paths are the instance's own (copies of
// the contrib Sieve scripts, compiled with the documented sievec command into a folder the mail
// user cannot write, so that Dovecot runs those binaries; a pipe folder whose nbspamd-learn is a
// link to the contrib program with an nbspamd-learn.conf beside it). IMAP and LMTP listen on
// free ports of 127.0.0.1; users log in with kDovecotPassword; mail is stored in Maildirs under
// the instance's folder, owned by the unprivileged user nobody, as which the IMAP and LMTP
// processes (and so the pipe program) run. Configuration, mail, state and log are removed with
// the instance.
//
//   auto dovecot = DovecotInstance::Start({.users = {"alice", "bob"},
//                                          .learn_conf = "NBSPAMC=/path/nbspamc\n..."});
//   if (!dovecot) FAIL() << dovecot.error();
//   auto imap = ImapClient::Connect((*dovecot)->imap_port());
//
// REQUIRES: root (Dovecot's master binds, then runs its services as dovecot, dovenull and the
// mail user) and the Debian packages above (scripts/install-deps --test installs them); without
// them Start fails, and so the test, rather than skipping. Thread safety: none; one instance per
// test. Errors are strings for the test's failure message: what failed and Dovecot's own output.
#ifndef NBSPAMD_TESTS_SUPPORT_DOVECOT_INSTANCE_H_
#define NBSPAMD_TESTS_SUPPORT_DOVECOT_INSTANCE_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::testing {

inline constexpr char kDovecotPassword[] = "dovecot-test-password";

struct DovecotOptions {
  // The users that may log in (and receive mail over LMTP), e.g. "alice" or "alice@example.org".
  std::vector<std::string> users;
  // The contents of nbspamd-learn.conf beside the pipe program (its settings: NBSPAMC,
  // NBSPAMC_SERVER, ...).
  std::string learn_conf;
  // contrib/dovecot of the source tree.
  std::filesystem::path contrib_dir;
};

class DovecotInstance {
 public:
  [[nodiscard]] static std::expected<std::unique_ptr<DovecotInstance>, std::string> Start(
      const DovecotOptions& options);
  // Stops Dovecot (SIGTERM to its master, waiting up to 20 s) and removes its folder.
  ~DovecotInstance();
  DovecotInstance(const DovecotInstance&) = delete;
  DovecotInstance& operator=(const DovecotInstance&) = delete;

  [[nodiscard]] std::uint16_t imap_port() const { return imap_port_; }
  [[nodiscard]] std::uint16_t lmtp_port() const { return lmtp_port_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // Dovecot's log so far (the pipe program's standard error is logged there as errors).
  [[nodiscard]] std::string Log() const;
  // The log once it holds `text`, or as it is after `timeout`. Dovecot's log process writes
  // what the pipe program printed after the IMAP command that ran it has answered.
  [[nodiscard]] std::string WaitForLog(
      std::string_view text, std::chrono::seconds timeout = std::chrono::seconds(20)) const;

 private:
  DovecotInstance() = default;
  std::expected<void, std::string> Setup(const DovecotOptions& options);

  std::filesystem::path dir_;
  std::uint16_t imap_port_ = 0;
  std::uint16_t lmtp_port_ = 0;
  bool started_ = false;
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_DOVECOT_INSTANCE_H_
