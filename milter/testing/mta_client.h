// The MTA's side of the milter protocol, for tests and the load client: packet builders and a
// blocking client over TCP or a Unix-domain socket.
//
//   auto mta = MtaClient::Connect(listener->LocalAddress());
//   mta->Send(OptionNegotiationPacket());
//   auto offer = mta->Read();          // SMFIC_OPTNEG's answer
//   auto replies = mta->SendMessage(TestMessage{.body = "hello\r\n"});
#ifndef NBSPAMD_MILTER_TESTING_MTA_CLIENT_H_
#define NBSPAMD_MILTER_TESTING_MTA_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "milter/address.h"

namespace nbspamd::milter::testing {

// A packet as the MTA sends it: 4-byte big-endian length (code + data), code, data.
[[nodiscard]] std::string Packet(char code, std::string_view data);
// What Postfix 3.7 offers with milter_protocol = 6: every action and every protocol flag.
[[nodiscard]] std::string OptionNegotiationPacket(std::uint32_t version = 6,
                                                  std::uint32_t actions = 0x1ff,
                                                  std::uint32_t protocol = 0x1fffff);
[[nodiscard]] std::string MacroPacket(
    char for_command, const std::vector<std::pair<std::string, std::string>>& macros);
[[nodiscard]] std::string MailPacket(std::string_view sender);
[[nodiscard]] std::string RcptPacket(std::string_view recipient);
[[nodiscard]] std::string HeaderPacket(std::string_view name, std::string_view value);

// One message as the MTA hands it over: MAIL's macros, envelope, header fields, body.
struct TestMessage {
  std::string user;      // {auth_authen}, sent with MAIL's macros when not empty.
  std::string queue_id;  // {i}, likewise.
  std::string sender = "<sender@example.org>";
  std::vector<std::string> recipients = {"<rcpt@example.net>"};
  std::vector<std::pair<std::string, std::string>> headers = {{"Subject", "hello"}};
  std::string body = "hello\r\n";
};
// The packets of `message`, MAIL to BODYEOB.
[[nodiscard]] std::string MessagePackets(const TestMessage& message);

struct ReceivedReply {
  char code = 0;
  std::string data;
};

// Not thread-safe. Closes its socket when destroyed.
class MtaClient {
 public:
  // Errors: the reason connecting failed.
  [[nodiscard]] static std::expected<MtaClient, std::string> Connect(const MilterAddress& address);
  MtaClient(MtaClient&& other) noexcept;
  MtaClient& operator=(MtaClient&& other) noexcept;
  MtaClient(const MtaClient&) = delete;
  ~MtaClient();

  // Writes all of `bytes`; false when the filter closed the connection.
  bool Send(std::string_view bytes);
  // The next reply, waiting at most `timeout`. Errors: "closed" (end of stream or reset),
  // "timeout", or a malformed reply's description.
  [[nodiscard]] std::expected<ReceivedReply, std::string> Read(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Ends our side of the stream (shutdown for writing); replies can still be read.
  void CloseWrite();
  // Whether the filter closes the connection within `timeout` (bytes it sends first are dropped).
  [[nodiscard]] bool WaitClosed(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Negotiates as Postfix does (OptionNegotiationPacket()); returns the filter's answer.
  [[nodiscard]] std::expected<ReceivedReply, std::string> Negotiate();
  // Sends `message` and reads the end-of-body replies, up to and including the final one
  // (SMFIR_CONTINUE, ACCEPT, REJECT, TEMPFAIL, REPLYCODE). REQUIRES: negotiated with the no-reply
  // flags for MAIL, RCPT, HEADER, EOH and BODY granted (as Negotiate does).
  [[nodiscard]] std::expected<std::vector<ReceivedReply>, std::string> SendMessage(
      const TestMessage& message);

 private:
  explicit MtaClient(int fd) : fd_(fd) {}
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace nbspamd::milter::testing

#endif  // NBSPAMD_MILTER_TESTING_MTA_CLIENT_H_
