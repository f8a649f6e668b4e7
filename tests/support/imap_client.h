// ImapClient: a minimal IMAP4rev1 client for tests, as a mail user's program would speak to a
// throw-away Dovecot on 127.0.0.1: LOGIN, SELECT, APPEND, UID SEARCH, UID FETCH and UID MOVE
// (RFC 6851), one command at a time, each under a deadline. No TLS, no pipelining, no IDLE.
//
//   auto imap = ImapClient::Connect(dovecot->imap_port());
//   ASSERT_TRUE(imap) << imap.error();
//   ASSERT_TRUE(imap->Login("alice", kDovecotPassword));
//   ASSERT_TRUE(imap->Append("INBOX", "Subject: hi\r\n\r\nhello\r\n"));
//   ASSERT_TRUE(imap->Select("INBOX"));
//   auto uids = imap->UidSearch("ALL");
//   ASSERT_TRUE(imap->UidMove(Join(*uids), "Junk"));
//
// Errors are strings for the test's failure message: the command and the server's answer (a NO
// or BAD), or why the connection failed. Thread safety: none; one client per thread.
#ifndef NBSPAMD_TESTS_SUPPORT_IMAP_CLIENT_H_
#define NBSPAMD_TESTS_SUPPORT_IMAP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace nbspamd::testing {

// A command's answer: the untagged lines (literals inlined: "* 1 FETCH (BODY[] {12}\r\n...)")
// and the tagged status line's text after the tag ("OK Move completed.").
struct ImapResponse {
  std::vector<std::string> untagged;
  std::string status;
};

class ImapClient {
 public:
  // Connects to 127.0.0.1:`port` and reads the greeting. `timeout` bounds each command.
  [[nodiscard]] static std::expected<ImapClient, std::string> Connect(
      std::uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(300));
  ImapClient(ImapClient&& other) noexcept;
  ImapClient& operator=(ImapClient&&) = delete;
  ImapClient(const ImapClient&) = delete;
  ImapClient& operator=(const ImapClient&) = delete;
  ~ImapClient();

  // Runs one command (without tag or line end); an error unless the server answers OK.
  std::expected<ImapResponse, std::string> Command(const std::string& command);

  std::expected<void, std::string> Login(const std::string& user, const std::string& password);
  std::expected<void, std::string> Select(const std::string& mailbox);
  // Stores `message` (LF line ends become CRLF) in `mailbox`.
  std::expected<void, std::string> Append(const std::string& mailbox, const std::string& message);
  // The UIDs of the selected mailbox's messages matching `criteria` ("ALL", "SUBJECT x").
  std::expected<std::vector<std::uint32_t>, std::string> UidSearch(const std::string& criteria);
  // The whole message with that UID in the selected mailbox, without setting \Seen.
  std::expected<std::string, std::string> UidFetchMessage(std::uint32_t uid);
  // Moves the messages of `uid_set` ("7", "1:1000") from the selected mailbox to `mailbox`.
  std::expected<void, std::string> UidMove(const std::string& uid_set, const std::string& mailbox);
  void Logout();

 private:
  ImapClient(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
  std::expected<void, std::string> Send(const std::string& bytes);
  // One line without its CRLF; a literal announced at its end ({N}) is read and appended, with
  // the rest of the line after it.
  std::expected<std::string, std::string> ReadLine();
  std::expected<std::string, std::string> ReadRawLine();
  std::expected<std::string, std::string> ReadBytes(std::size_t count);
  std::expected<void, std::string> Fill();

  int fd_ = -1;
  std::chrono::milliseconds timeout_;
  std::string input_;
  int next_tag_ = 1;
};

// "1,2,3" for a UID set.
[[nodiscard]] std::string UidSet(const std::vector<std::uint32_t>& uids);

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_IMAP_CLIENT_H_
