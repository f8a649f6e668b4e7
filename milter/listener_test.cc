// MilterListener over real loopback sockets (TCP and Unix-domain), with the MTA side played by
// MtaClient and a deterministic FakeBackend behind the seam.
#include "milter/listener.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "milter/testing/fake_backend.h"
#include "milter/testing/mta_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::milter {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;
using testing::FakeBackend;
using testing::MtaClient;
using testing::Packet;
using testing::ReceivedReply;
using testing::TestMessage;

// Polls `condition` until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

std::string Codes(const std::vector<ReceivedReply>& replies) {
  std::string codes;
  for (const auto& reply : replies) codes.push_back(reply.code);
  return codes;
}

class ListenerTest : public ::testing::Test {
 protected:
  ~ListenerTest() override {
    if (listener_) listener_->Stop();
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  void Listen(const std::string& address = "inet:127.0.0.1:0") {
    ConnectionContext context;
    context.session = session_options_;
    context.connection = connection_options_;
    context.backend = &backend_;
    context.counters = &counters_;
    auto parsed = ParseMilterAddress(address);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
    auto created = MilterListener::Create(io_, *parsed, std::move(context));
    ASSERT_TRUE(created.has_value()) << created.error().message;
    listener_ = *created;
    listener_->Run();
    thread_ = std::thread([this] { io_.run(); });
  }

  MtaClient Connect() {
    auto client = MtaClient::Connect(listener_->LocalAddress());
    EXPECT_TRUE(client.has_value()) << client.error();
    return std::move(*client);
  }

  MtaClient ConnectAndNegotiate() {
    MtaClient client = Connect();
    auto answer = client.Negotiate();
    EXPECT_TRUE(answer.has_value()) << answer.error();
    if (answer) {
      EXPECT_EQ(answer->code, kReplyOptionNegotiation);
    }
    return client;
  }

  // A full message on a fresh connection: the listener still serves.
  void ExpectServing() {
    MtaClient client = ConnectAndNegotiate();
    auto replies = client.SendMessage(TestMessage{});
    ASSERT_TRUE(replies.has_value()) << replies.error();
    EXPECT_EQ(Codes(*replies), "hc");
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::thread thread_;
  SessionOptions session_options_;
  ConnectionOptions connection_options_;
  FakeBackend backend_;
  MilterCounters counters_;
  std::shared_ptr<MilterListener> listener_;
};

TEST_F(ListenerTest, ManyMessagesOnOneTcpConnection) {
  Listen();
  EXPECT_NE(listener_->LocalAddress().port, 0);
  MtaClient client = ConnectAndNegotiate();

  TestMessage ham;
  ham.queue_id = "Q1";
  ham.user = "alice";
  ham.headers = {{"Message-ID", "<1@example.org>"}, {"Subject", "lunch"}};
  auto first = client.SendMessage(ham);
  ASSERT_TRUE(first.has_value()) << first.error();
  ASSERT_EQ(Codes(*first), "hc");
  EXPECT_EQ((*first)[0].data, "X-Nbspamd\0ham - score=-5.0000\0"s);

  // An aborted message in between leaves no trace.
  ASSERT_TRUE(client.Send(testing::MailPacket("<x@y>") + testing::HeaderPacket("A", "b") +
                          Packet(kCmdAbort, "")));

  TestMessage spam;
  spam.body = "cheap viagra\r\n";
  auto second = client.SendMessage(spam);
  ASSERT_TRUE(second.has_value()) << second.error();
  ASSERT_EQ(Codes(*second), "hhc");
  EXPECT_EQ((*second)[0].data, "X-Spam-Flag\0YES\0"s);

  const auto calls = backend_.calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].message, "Message-ID: <1@example.org>\r\nSubject: lunch\r\n\r\nhello\r\n");
  EXPECT_EQ(calls[0].context.message_id, "<1@example.org>");
  EXPECT_EQ(calls[0].context.queue_id, "Q1");
  EXPECT_EQ(calls[0].context.user, "alice");
  EXPECT_EQ(calls[0].context.recipients, std::vector<std::string>{"rcpt@example.net"});
  EXPECT_EQ(calls[1].message, "Subject: hello\r\n\r\ncheap viagra\r\n");

  ASSERT_TRUE(client.Send(Packet(kCmdQuit, "")));
  EXPECT_TRUE(client.WaitClosed());
  EXPECT_TRUE(WaitFor([&] { return listener_->OpenConnections() == 0; }));
  EXPECT_EQ(counters_.messages.load(), 2u);
  EXPECT_EQ(counters_.protocol_errors.load(), 0u);
}

TEST_F(ListenerTest, UnixSocketWithItsModeAndRemovedOnStop) {
  TempDir dir;
  const std::string path = dir.Join("milter.sock");
  Listen("unix:" + path);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  ExpectServing();
  listener_->Stop();
  EXPECT_TRUE(WaitFor([&] { return !std::filesystem::exists(path); }));
}

TEST_F(ListenerTest, StaleUnixSocketIsReplacedButNoOtherFile) {
  TempDir dir;
  const std::string path = dir.Join("milter.sock");
  {
    ConnectionContext context;
    context.backend = &backend_;
    context.counters = &counters_;
    auto first = MilterListener::Create(io_, *ParseMilterAddress("unix:" + path), context);
    ASSERT_TRUE(first.has_value());
    // Dropped without Stop: the socket file stays behind, as after a crash.
  }
  Listen("unix:" + path);
  ExpectServing();

  const std::string file = dir.Join("not-a-socket");
  std::ofstream(file) << "data";
  ConnectionContext context;
  context.backend = &backend_;
  context.counters = &counters_;
  auto refused = MilterListener::Create(io_, *ParseMilterAddress("unix:" + file), context);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(std::filesystem::exists(file));
}

TEST_F(ListenerTest, AddressInUseIsAnError) {
  Listen();
  ConnectionContext context;
  context.backend = &backend_;
  context.counters = &counters_;
  auto second = MilterListener::Create(io_, listener_->LocalAddress(), context);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
}

struct BadInput {
  const char* name;
  bool negotiate;     // Send a good OPTNEG first.
  std::string bytes;  // Then these.
  bool close_write;   // Then end our side of the stream (a packet cut short).
};

class BadInputTest : public ListenerTest, public ::testing::WithParamInterface<BadInput> {};

TEST_P(BadInputTest, ClosesTheConnectionCountsItAndServesOn) {
  connection_options_.max_packet_bytes = 1 << 16;
  Listen();
  for (int round = 0; round < 2; ++round) {
    MtaClient client = Connect();
    if (GetParam().negotiate) {
      auto answer = client.Negotiate();
      ASSERT_TRUE(answer.has_value()) << answer.error();
    }
    client.Send(GetParam().bytes);
    if (GetParam().close_write) client.CloseWrite();
    EXPECT_TRUE(client.WaitClosed()) << GetParam().name;
    EXPECT_TRUE(WaitFor([&] { return counters_.protocol_errors.load() == round + 1u; }))
        << counters_.protocol_errors.load();
    ExpectServing();
  }
  EXPECT_TRUE(backend_.calls().size() == 2u);  // Only the good messages reached the backend.
  EXPECT_EQ(counters_.internal_errors.load(), 0u);
}

std::string Uint32(std::uint32_t value) {
  std::string out;
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Table, BadInputTest,
    ::testing::Values(
        BadInput{"absurd_length", false, Uint32(0x7fffffff) + "O", false},
        BadInput{"length_over_the_cap", true, Uint32((1 << 16) + 1) + "B", false},
        BadInput{"zero_length", true, Uint32(0), false},
        BadInput{"unknown_command", true, Packet('Z', "x"), false},
        BadInput{"reply_code_sent_as_command", true, Packet('y', "550 no"), false},
        BadInput{"header_without_value", true,
                 testing::MailPacket("<a@b>") + Packet('L', std::string("Subject\0", 8)), false},
        BadInput{"truncated_header_then_eof", true,
                 testing::MailPacket("<a@b>") + testing::HeaderPacket("Subject", "x").substr(0, 9),
                 true},
        BadInput{"truncated_length_then_eof", true, std::string("\0\0", 2), true},
        BadInput{"mail_before_optneg", false, testing::MailPacket("<a@b>"), false},
        BadInput{"second_optneg", true, testing::OptionNegotiationPacket(), false},
        BadInput{"header_before_mail", true, testing::HeaderPacket("Subject", "x"), false},
        BadInput{"body_before_eoh", true, testing::MailPacket("<a@b>") + Packet(kCmdBody, "text"),
                 false},
        BadInput{"optneg_version_1", false, testing::OptionNegotiationPacket(1), false}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

TEST_F(ListenerTest, IdleConnectionIsClosedAfterTheReadTimeout) {
  connection_options_.read_timeout = 200ms;
  Listen();
  MtaClient client = ConnectAndNegotiate();
  EXPECT_TRUE(client.WaitClosed(10s));
  EXPECT_TRUE(WaitFor([&] { return counters_.timeouts.load() == 1u; }));
  EXPECT_EQ(counters_.protocol_errors.load(), 0u);
}

TEST_F(ListenerTest, BackendErrorTempfailsWhenSoConfigured) {
  session_options_.fail_mode = FailMode::kTempfail;
  Listen();
  backend_.FailWith(Error{ErrorCode::kUnavailable, "store degraded"});
  MtaClient client = ConnectAndNegotiate();
  auto replies = client.SendMessage(TestMessage{});
  ASSERT_TRUE(replies.has_value()) << replies.error();
  EXPECT_EQ(Codes(*replies), "t");
  backend_.FailWith(std::nullopt);
  replies = client.SendMessage(TestMessage{});  // The connection goes on.
  ASSERT_TRUE(replies.has_value()) << replies.error();
  EXPECT_EQ(Codes(*replies), "hc");
  EXPECT_EQ(counters_.tempfailed.load(), 1u);
}

TEST_F(ListenerTest, StopFinishesTheMessageInFlightThenCloses) {
  Listen();
  backend_.Hold();
  MtaClient busy = ConnectAndNegotiate();
  MtaClient idle = ConnectAndNegotiate();
  ASSERT_TRUE(busy.Send(testing::MessagePackets(TestMessage{})));
  ASSERT_TRUE(backend_.WaitHeld(1));

  listener_->Stop();
  EXPECT_TRUE(idle.WaitClosed());  // Between messages: closed at once.
  EXPECT_TRUE(WaitFor([&] { return !MtaClient::Connect(listener_->LocalAddress()).has_value(); }));
  // The busy one waits for its verdict.
  EXPECT_TRUE(WaitFor([&] { return listener_->OpenConnections() == 1; }));

  backend_.Release();
  auto header = busy.Read();
  ASSERT_TRUE(header.has_value()) << header.error();
  EXPECT_EQ(header->code, kReplyAddHeader);
  auto final_reply = busy.Read();
  ASSERT_TRUE(final_reply.has_value()) << final_reply.error();
  EXPECT_EQ(final_reply->code, kReplyContinue);
  EXPECT_TRUE(busy.WaitClosed());
  EXPECT_TRUE(WaitFor([&] { return listener_->OpenConnections() == 0; }));
}

TEST_F(ListenerTest, BigMessagesInManyChunksAndOversizedOnes) {
  session_options_.max_body_bytes = 300000;
  Listen();
  MtaClient client = ConnectAndNegotiate();
  TestMessage big;
  big.body = std::string(200000, 'a') + " viagra\r\n";  // Four body packets.
  auto replies = client.SendMessage(big);
  ASSERT_TRUE(replies.has_value()) << replies.error();
  EXPECT_EQ(Codes(*replies), "hhc");
  ASSERT_EQ(backend_.calls().size(), 1u);
  EXPECT_EQ(backend_.calls()[0].message.size(),
            std::string("Subject: hello\r\n\r\n").size() + big.body.size());

  TestMessage huge;
  huge.body = std::string(400000, 'b');
  replies = client.SendMessage(huge);
  ASSERT_TRUE(replies.has_value()) << replies.error();
  EXPECT_EQ(Codes(*replies), "c");  // Unchecked: no header.
  EXPECT_EQ(counters_.oversized.load(), 1u);
  EXPECT_EQ(backend_.calls().size(), 1u);
}

}  // namespace
}  // namespace nbspamd::milter
