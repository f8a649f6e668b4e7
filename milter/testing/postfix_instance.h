// PostfixInstance: a throw-away Postfix for tests, with its own configuration, queue, data and
// mail folders under one temporary folder, listening for SMTP on a free port of 127.0.0.1 and
// handing every message to the configured milter. Mail for the test domain is delivered by
// Postfix's virtual(8) agent to one Maildir, whatever the recipient.
//
//   PostfixOptions options;
//   options.milter = "inet:127.0.0.1:" + std::to_string(milter_port);
//   options.milter_default_action = "tempfail";
//   auto postfix = PostfixInstance::Start(options);
//   ASSERT_TRUE(postfix.has_value()) << postfix.error().message;
//   auto outcome = SendMail((*postfix)->smtp_port(), {.sender = "a@example.org",
//                           .recipients = {"user@nbspamd.test"}}, "Subject: hi\r\n\r\nhello\r\n");
//   auto delivered = (*postfix)->WaitForDelivery(1);  // the messages in the Maildir
//
// Needs root (Postfix's master runs as root and its daemons as mail_owner = postfix) and Debian's
// postfix package installed (without a configuration of its own: Start writes main.cf and
// master.cf). Running `postfix -c DIR` needs DIR listed in the default main.cf's
// alternate_config_directories only for a user other than root, so nothing outside the
// temporary folder is touched. Several instances may run at once (each has its own port).
//
// Postfix's quirks handled here: maillog_file must lie under maillog_file_prefixes (else the
// daemons die without a word), so the log goes to DIR/maillog with the prefix widened to DIR;
// `postfix check` creates the queue's subfolders with their owners; the temporary folder is made
// world-searchable (mkdtemp makes it 0700) so that virtual(8), running as nobody, can reach the
// Maildir; every service runs unchrooted (chroot would need copies of /etc files in the queue).
//
// Thread-safety: none needed; the methods may be called from any one thread at a time.
#ifndef NBSPAMD_MILTER_TESTING_POSTFIX_INSTANCE_H_
#define NBSPAMD_MILTER_TESTING_POSTFIX_INSTANCE_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"

namespace nbspamd::milter::testing {

struct PostfixOptions {
  // smtpd_milters: "inet:127.0.0.1:PORT" or "unix:/path"; "" for none.
  std::string milter;
  // What Postfix does when the milter cannot be reached or fails: accept, tempfail, reject or
  // quarantine (milter_default_action).
  std::string milter_default_action = "tempfail";
  // Mail for this domain is delivered to maildir(); every other domain is refused at RCPT.
  std::string domain = "nbspamd.test";
  // milter_connect_timeout, milter_command_timeout and milter_content_timeout.
  std::chrono::seconds milter_timeout{10};
  // More main.cf settings, name and value, written last (so they win).
  std::vector<std::pair<std::string, std::string>> extra_settings;
};

class PostfixInstance {
 public:
  // Writes the configuration into a fresh temporary folder and starts Postfix on a free port.
  // Errors: kFailedPrecondition when not running as root or /usr/sbin/postfix is missing
  // (install Debian's postfix package with debconf's "No configuration"); kUnavailable when
  // Postfix refuses the configuration or does not start (its output and log in the message).
  [[nodiscard]] static std::expected<std::unique_ptr<PostfixInstance>, Error> Start(
      const PostfixOptions& options);
  // Stops Postfix, waits (up to 20 s) for its master to exit, and removes the folder.
  ~PostfixInstance();
  PostfixInstance(const PostfixInstance&) = delete;
  PostfixInstance& operator=(const PostfixInstance&) = delete;

  // The SMTP port on 127.0.0.1.
  [[nodiscard]] std::uint16_t smtp_port() const { return smtp_port_; }
  // The temporary folder: conf/ (main.cf, master.cf), queue/, data/, mail/, maillog.
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // Where every message for the domain is delivered.
  [[nodiscard]] std::filesystem::path maildir() const { return dir_ / "mail" / "Maildir"; }

  // The messages delivered so far (Maildir/new), oldest first by file name.
  [[nodiscard]] std::vector<std::string> Delivered() const;
  // Waits until at least `count` messages are delivered, polling. Errors: kUnavailable when
  // `timeout` passes first (with the end of Postfix's log in the message).
  [[nodiscard]] std::expected<std::vector<std::string>, Error> WaitForDelivery(
      std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // Whether at least `count` messages wait in the hold queue (milter quarantine) within
  // `timeout`.
  [[nodiscard]] bool WaitForHeld(
      std::size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(30)) const;
  // The last `lines` lines of Postfix's log, for failure messages.
  [[nodiscard]] std::string LogTail(std::size_t lines = 30) const;

 private:
  PostfixInstance() = default;
  [[nodiscard]] std::expected<void, Error> Setup(const PostfixOptions& options);
  // Runs `postfix -c DIR/conf <args>`; its output is appended to DIR/postfix.out. Errors:
  // kUnavailable when it fails or runs past 60 s.
  [[nodiscard]] std::expected<void, Error> RunPostfix(const std::vector<std::string>& args) const;
  void Stop();

  std::filesystem::path dir_;
  std::uint16_t smtp_port_ = 0;
  bool started_ = false;
};

}  // namespace nbspamd::milter::testing

#endif  // NBSPAMD_MILTER_TESTING_POSTFIX_INSTANCE_H_
