// EximInstance: a throw-away Exim (Debian's exim4-daemon-heavy, unpacked by scripts/install-deps
// into /opt/nbspamd-test/exim4) whose DATA ACL asks a spamd-protocol server on 127.0.0.1 about
// every message, as an administrator's Exim would ask nbspamd. Nothing listens and nothing is
// delivered: each Submit runs one SMTP session on Exim's standard input (`exim4 -C FILE -bs`),
// accepted messages stay in the instance's own spool (queue_only) for Spooled to read back, and
// the configuration, spool and logs live in a temporary folder removed with the instance.
//
//   auto exim = EximInstance::Create({.spamd_port = listener->LocalEndpoint().port()});
//   if (!exim) FAIL() << exim.error();
//   auto result = exim->Submit("Subject: cheap viagra\r\n\r\nBuy now.\r\n");
//   EXPECT_TRUE(result->data_reply.starts_with("550 "));   // rejected as spam
//
// The default DATA ACL is the one docs/SPAMD.md recommends, with $spam_score_int compared as
// the issue has it:
//
//   deny  message   = rejected as spam (score $spam_score)
//         spam      = nobody:true
//         condition = ${if >{$spam_score_int}{50}}
//   warn  spam      = nobody:true
//         add_header = X-Spam-Score: $spam_score
//   accept
//
// REQUIRES: the test runs as root (Exim's exim_user is the caller, and its spool and -C file
// must belong to it). Thread safety: none; one instance per test. Errors are strings for the
// test's failure message: what failed and Exim's own output or log.
#ifndef NBSPAMD_TESTS_SUPPORT_EXIM_INSTANCE_H_
#define NBSPAMD_TESTS_SUPPORT_EXIM_INSTANCE_H_

#include <chrono>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::testing {

inline constexpr std::string_view kEximBinary = "/opt/nbspamd-test/exim4/usr/sbin/exim4";

struct EximOptions {
  // The spamd-protocol server Exim asks (spamd_address = 127.0.0.1 PORT).
  unsigned short spamd_port = 0;
  std::string binary = std::string(kEximBinary);
  // The statements of acl_smtp_data; empty: the default above.
  std::string data_acl;
  // How long one Submit may take before Exim is killed and Submit fails.
  std::chrono::seconds timeout{60};
};

// What one SMTP session gave.
struct EximSubmission {
  // Exim's reply to the end of DATA, its last line: "250 OK id=1xW...", "550 rejected as ...".
  std::string data_reply;
  // The message id when accepted ("" otherwise), for Spooled.
  std::string message_id;
  // The whole SMTP dialogue as Exim wrote it, for failure messages.
  std::string transcript;
};

class EximInstance {
 public:
  // Writes the configuration into a new temporary folder and checks it with `exim4 -bV`.
  // Errors: the binary is missing (scripts/install-deps unpacks it), or Exim refuses the
  // configuration (its output).
  [[nodiscard]] static std::expected<EximInstance, std::string> Create(EximOptions options);

  EximInstance(EximInstance&&) noexcept;
  EximInstance& operator=(EximInstance&&) noexcept;
  EximInstance(const EximInstance&) = delete;
  EximInstance& operator=(const EximInstance&) = delete;
  ~EximInstance();  // Removes the folder, spool and logs with it.

  // Sends `message` (CRLF or LF line ends; dot-stuffed here) from `from` to `to` in one SMTP
  // session. Errors: Exim could not run, timed out, or its dialogue did not reach the end of
  // DATA (the transcript and Exim's main log).
  [[nodiscard]] std::expected<EximSubmission, std::string> Submit(
      std::string_view message, std::string_view from = "sender@example.org",
      std::string_view to = "alice@example.org");

  // An accepted message as it sits in the spool, headers added by the ACL included
  // (`exim4 -Mvc ID`). Errors: no such message, or Exim failed (its output).
  [[nodiscard]] std::expected<std::string, std::string> Spooled(std::string_view message_id);

  // Exim's main log so far ("" when none), for failure messages.
  [[nodiscard]] std::string MainLog() const;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  EximInstance(EximOptions options, std::filesystem::path dir)
      : options_(std::move(options)), dir_(std::move(dir)) {}
  // Runs Exim with `args` after `-C config`, `input` on its standard input; its standard output
  // and error, together, on success.
  [[nodiscard]] std::expected<std::string, std::string> Run(const std::vector<std::string>& args,
                                                            std::string_view input);

  EximOptions options_;
  std::filesystem::path dir_;  // Empty once moved from.
};

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_EXIM_INSTANCE_H_
