// The milter listener behind a real Postfix (a throw-away instance, milter/testing/
// postfix_instance.h) with the FakeBackend: mail goes in over SMTP on 127.0.0.1 and comes out
// rejected at SMTP time, or in the Maildir with our headers. And with the listener gone, Postfix's
// milter_default_action decides: accept delivers (nothing lost), tempfail answers 4xx.
//
// Needs root and Debian's postfix package (scripts/install-deps installs it); without them these
// tests fail rather than skip, so that CI cannot pass without running them.
#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "milter/listener.h"
#include "milter/testing/fake_backend.h"
#include "milter/testing/mta_client.h"
#include "milter/testing/postfix_instance.h"
#include "milter/testing/smtp_client.h"

namespace nbspamd::milter {
namespace {

using namespace std::chrono_literals;
using testing::FakeBackend;
using testing::PostfixInstance;
using testing::PostfixOptions;
using testing::SendMail;
using testing::SmtpEnvelope;

constexpr const char* kRejectText = "Spam is not welcome here";

const SmtpEnvelope kEnvelope{.sender = "sender@example.org",
                             .recipients = {"user@nbspamd.test"},
                             .helo = "client.example.org"};

std::string Message(const std::string& subject, const std::string& body,
                    const std::string& extra_headers = "") {
  return "From: sender@example.org\r\nTo: user@nbspamd.test\r\nSubject: " + subject +
         "\r\nMessage-ID: <" + subject + "@example.org>\r\n" + extra_headers + "\r\n" + body;
}

bool HasHeaderLine(const std::string& message, const std::string& line) {
  const std::size_t end = message.find("\n\n");
  const std::string header = message.substr(0, end);
  return ("\n" + header + "\n").find("\n" + line + "\n") != std::string::npos;
}

class PostfixTest : public ::testing::Test {
 protected:
  ~PostfixTest() override {
    postfix_.reset();  // Postfix first: it may still be talking to the listener.
    if (listener_) listener_->Stop();
    work_.reset();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  // Rejects spam scoring 5 or more (the FakeBackend's spam scores 10) unless told otherwise.
  static ConversationOptions Rejecting() {
    ConversationOptions options;
    options.reject_score = 5.0;
    options.reject_text = kRejectText;
    return options;
  }

  void Listen(const ConversationOptions& options = Rejecting()) {
    ConnectionContext context;
    context.conversation = options;
    context.backend = &backend_;
    context.counters = &counters_;
    auto created =
        MilterListener::Create(io_, *ParseMilterAddress("inet:127.0.0.1:0"), std::move(context));
    ASSERT_TRUE(created.has_value()) << created.error().message;
    listener_ = *created;
    listener_->Run();
    thread_ = std::thread([this] { io_.run(); });
  }

  // Stops the listener and waits until connecting to it fails, as it will for Postfix.
  void StopListener() {
    listener_->Stop();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (testing::MtaClient::Connect(listener_->LocalAddress()).has_value()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the listener still accepts";
      std::this_thread::sleep_for(5ms);
    }
  }

  void StartPostfix(const std::string& default_action) {
    PostfixOptions options;
    options.milter = FormatMilterAddress(listener_->LocalAddress());
    options.milter_default_action = default_action;
    auto started = PostfixInstance::Start(options);
    ASSERT_TRUE(started.has_value()) << started.error().message;
    postfix_ = std::move(*started);
  }

  // Sends `message`; returns "<code> <text>" of the reply that decided it, and its stage.
  std::string Send(const std::string& message, std::string* stage = nullptr) {
    auto outcome = SendMail(postfix_->smtp_port(), kEnvelope, message);
    EXPECT_TRUE(outcome.has_value()) << outcome.error().message << "\n" << postfix_->LogTail();
    if (!outcome) return "";
    if (stage != nullptr) *stage = outcome->stage;
    return std::to_string(outcome->reply.code) + " " + outcome->reply.text;
  }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(io_);
  std::thread thread_;
  FakeBackend backend_;
  MilterCounters counters_;
  std::shared_ptr<MilterListener> listener_;
  std::unique_ptr<PostfixInstance> postfix_;
};

TEST_F(PostfixTest, HamIsDeliveredWithTheStatusHeaderAndForgeriesRemoved) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));
  std::string stage;
  const std::string reply =
      Send(Message("lunch", "See you at noon.\r\n", "X-Spam-Flag: YES\r\n"), &stage);
  EXPECT_EQ(reply.substr(0, 4), "250 ") << reply;
  EXPECT_EQ(stage, "END");
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  const std::string& message = (*delivered)[0];
  EXPECT_TRUE(HasHeaderLine(message, "X-Nbspamd: ham - score=-5.0000")) << message;
  EXPECT_EQ(message.find("X-Spam-Flag"), std::string::npos) << message;  // The forged one.
  EXPECT_NE(message.find("See you at noon."), std::string::npos);

  // What Postfix handed over: the message as sent, the envelope, its queue id.
  const auto calls = backend_.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].message.find("Subject: lunch\r\n"), std::string::npos) << calls[0].message;
  EXPECT_NE(calls[0].message.find("\r\n\r\nSee you at noon.\r\n"), std::string::npos);
  EXPECT_EQ(calls[0].context.message_id, "<lunch@example.org>");
  EXPECT_EQ(calls[0].context.sender, "sender@example.org");
  EXPECT_EQ(calls[0].context.recipients, std::vector<std::string>{"user@nbspamd.test"});
  EXPECT_FALSE(calls[0].context.queue_id.empty());
  EXPECT_EQ(counters_.ham.load(), 1u);
  EXPECT_EQ(counters_.protocol_errors.load(), 0u);
}

TEST_F(PostfixTest, SpamIsRejectedAtSmtpTimeWithTheConfiguredText) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));
  std::string stage;
  EXPECT_EQ(Send(Message("offer", "cheap viagra\r\n"), &stage),
            std::string("550 5.7.1 ") + kRejectText);
  EXPECT_EQ(stage, "END");
  EXPECT_EQ(counters_.rejected.load(), 1u);

  // Nothing of the spam was delivered: the ham sent after it is the only message that arrives.
  EXPECT_EQ(Send(Message("after", "hello\r\n")).substr(0, 4), "250 ");
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  EXPECT_NE((*delivered)[0].find("Subject: after"), std::string::npos);
  EXPECT_EQ((*delivered)[0].find("viagra"), std::string::npos);
}

TEST_F(PostfixTest, WithoutRejectSpamIsDeliveredFlagged) {
  ASSERT_NO_FATAL_FAILURE(Listen(ConversationOptions{}));
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));
  EXPECT_EQ(Send(Message("offer", "cheap viagra\r\n")).substr(0, 4), "250 ");
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  const std::string& message = (*delivered)[0];
  EXPECT_TRUE(HasHeaderLine(message, "X-Spam-Flag: YES")) << message;
  EXPECT_TRUE(HasHeaderLine(message, "X-Nbspamd: spam 0.9900 score=10.0000")) << message;
  EXPECT_EQ(counters_.rejected.load(), 0u);
}

TEST_F(PostfixTest, QuarantinedSpamGoesToTheHoldQueue) {
  ConversationOptions options;
  options.quarantine_score = 5.0;
  ASSERT_NO_FATAL_FAILURE(Listen(options));
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));
  EXPECT_EQ(Send(Message("held", "cheap viagra\r\n")).substr(0, 4), "250 ");
  EXPECT_TRUE(postfix_->WaitForHeld(1)) << postfix_->LogTail();
  EXPECT_EQ(counters_.quarantined.load(), 1u);
  // Held, not delivered: the ham sent after it is the only message in the Maildir.
  EXPECT_EQ(Send(Message("after", "hello\r\n")).substr(0, 4), "250 ");
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  EXPECT_NE((*delivered)[0].find("Subject: after"), std::string::npos);
}

TEST_F(PostfixTest, ListenerStoppedAndDefaultActionAcceptDeliversUnchecked) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(StartPostfix("accept"));
  ASSERT_NO_FATAL_FAILURE(StopListener());
  EXPECT_EQ(Send(Message("unchecked", "cheap viagra\r\n")).substr(0, 4), "250 ");
  auto delivered = postfix_->WaitForDelivery(1);
  ASSERT_TRUE(delivered.has_value()) << delivered.error().message;
  ASSERT_EQ(delivered->size(), 1u);
  EXPECT_NE((*delivered)[0].find("Subject: unchecked"), std::string::npos);
  EXPECT_EQ((*delivered)[0].find("X-Nbspamd"), std::string::npos);  // No milter saw it.
  EXPECT_TRUE(backend_.calls().empty());
}

TEST_F(PostfixTest, ListenerStoppedAndDefaultActionTempfailAnswers4xx) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(StartPostfix("tempfail"));
  ASSERT_NO_FATAL_FAILURE(StopListener());
  std::string stage;
  const std::string reply = Send(Message("later", "hello\r\n"), &stage);
  EXPECT_EQ(reply.substr(0, 10), "451 4.7.1 ") << reply;
  // Postfix finds the milter gone when the SMTP conversation starts and refuses from MAIL on, so
  // nothing was queued; the client keeps the message and retries.
  EXPECT_EQ(stage, "MAIL");
  EXPECT_TRUE(postfix_->Delivered().empty());
  EXPECT_TRUE(backend_.calls().empty());
}

}  // namespace
}  // namespace nbspamd::milter
