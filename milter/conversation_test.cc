#include "milter/conversation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nbspamd::milter {
namespace {

// What Postfix offers with milter_protocol = 6.
constexpr std::uint32_t kPostfixActions = 0x1ff;
constexpr std::uint32_t kPostfixProtocol = 0x1fffff;

class ConversationTest : public ::testing::Test {
 protected:
  Conversation& Start(std::uint32_t version = 6, std::uint32_t actions = kPostfixActions,
                      std::uint32_t protocol = kPostfixProtocol) {
    conversation_.emplace(options_, counters_);
    Conversation::Step step = conversation_->Handle(OptionNegotiation{version, actions, protocol});
    EXPECT_FALSE(step.error);
    EXPECT_EQ(step.replies.size(), 1u);
    negotiated_ = step.replies.at(0);
    return *conversation_;
  }

  // Sends a message up to end of body; returns the classification asked for.
  std::optional<ClassifyRequest> SendMessage(
      const std::vector<std::pair<std::string, std::string>>& headers, const std::string& body) {
    Conversation& s = *conversation_;
    EXPECT_TRUE(s.Handle(Macros{'M', {{"i", "4XyZ"}, {"{auth_authen}", "alice"}}}).replies.empty());
    EXPECT_TRUE(s.Handle(Mail{{"<from@example.org>", "SIZE=10"}}).replies.empty());
    EXPECT_TRUE(s.Handle(Rcpt{{"<a@example.net>"}}).replies.empty());
    EXPECT_TRUE(s.Handle(Rcpt{{"<b@example.net>"}}).replies.empty());
    for (const auto& [name, value] : headers) {
      EXPECT_TRUE(s.Handle(Header{name, value}).replies.empty());
    }
    EXPECT_TRUE(s.Handle(EndOfHeaders{}).replies.empty());
    if (!body.empty()) {
      EXPECT_TRUE(s.Handle(Body{body}).replies.empty());
    }
    Conversation::Step step = s.Handle(EndOfBody{});
    EXPECT_FALSE(step.error);
    if (step.classify) {
      EXPECT_TRUE(step.replies.empty());
      EXPECT_TRUE(s.AwaitingVerdict());
    }
    last_replies_ = step.replies;
    return std::move(step.classify);
  }

  static MilterVerdict Spam(double score) {
    MilterVerdict verdict;
    verdict.verdict = MilterVerdict::Kind::kSpam;
    verdict.score = score;
    verdict.spam_confidence = 0.9876;
    return verdict;
  }

  static MilterVerdict Ham(double score) {
    MilterVerdict verdict;
    verdict.verdict = MilterVerdict::Kind::kHam;
    verdict.score = score;
    return verdict;
  }

  ConversationOptions options_;
  MilterCounters counters_;
  std::optional<Conversation> conversation_;
  Reply negotiated_;
  std::vector<Reply> last_replies_;
};

TEST_F(ConversationTest, NegotiatesVersionSixActionsAndNoReplyFlags) {
  Start();
  EXPECT_EQ(negotiated_.code, kReplyOptionNegotiation);
  const std::uint32_t wanted_protocol =
      kProtoNoHelo | kProtoNoData | kProtoNoUnknown | kProtoNoReplyConnect | kProtoNoReplyHelo |
      kProtoNoReplyMail | kProtoNoReplyRcpt | kProtoNoReplyData | kProtoNoReplyUnknown |
      kProtoNoReplyHeader | kProtoNoReplyEoh | kProtoNoReplyBody;
  EXPECT_EQ(negotiated_,
            OptionNegotiationReply(6, kActionAddHeaders | kActionChangeHeaders, wanted_protocol));
  EXPECT_EQ(conversation_->protocol(), wanted_protocol);
}

TEST_F(ConversationTest, AsksOnlyForWhatTheMtaOffersAndItsVersion) {
  options_.quarantine_score = 5;
  Start(/*version=*/4, /*actions=*/kActionAddHeaders | kActionQuarantine,
        /*protocol=*/kProtoNoConnect | kProtoNoHelo | kProtoNoBody);
  EXPECT_EQ(negotiated_,
            OptionNegotiationReply(4, kActionAddHeaders | kActionQuarantine, kProtoNoHelo));
  // Without the no-reply flags, every event is answered.
  EXPECT_EQ(conversation_->Handle(Mail{{"<a@b>"}}).replies, std::vector<Reply>{ContinueReply()});
  EXPECT_EQ(conversation_->Handle(Header{"Subject", "x"}).replies,
            std::vector<Reply>{ContinueReply()});
  EXPECT_EQ(conversation_->Handle(EndOfHeaders{}).replies, std::vector<Reply>{ContinueReply()});
  EXPECT_EQ(conversation_->Handle(Body{"x"}).replies, std::vector<Reply>{ContinueReply()});
}

TEST_F(ConversationTest, VersionOneIsAProtocolError) {
  Conversation conversation(options_, counters_);
  Conversation::Step step =
      conversation.Handle(OptionNegotiation{1, kPostfixActions, kPostfixProtocol});
  ASSERT_TRUE(step.error);
  EXPECT_TRUE(step.close);
}

TEST_F(ConversationTest, RebuildsTheMessageAndItsContext) {
  Start();
  auto request = SendMessage({{"From", "Alice <from@example.org>"},
                              {"Message-ID", " <abc@example.org> "},
                              {"Subject", "two\n\tlines"}},
                             "body line\r\n");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->message,
            "From: Alice <from@example.org>\r\nMessage-ID:  <abc@example.org> \r\n"
            "Subject: two\r\n\tlines\r\n\r\nbody line\r\n");
  EXPECT_EQ(request->context.message_id, "<abc@example.org>");
  EXPECT_EQ(request->context.sender, "from@example.org");
  EXPECT_EQ(request->context.recipients,
            (std::vector<std::string>{"a@example.net", "b@example.net"}));
  EXPECT_EQ(request->context.user, "alice");
  EXPECT_EQ(request->context.queue_id, "4XyZ");
  EXPECT_EQ(counters_.messages.load(), 1u);
}

TEST_F(ConversationTest, TheConnectionsClientGoesWithEachMessageAndTheScanIntoTheStatus) {
  Start();
  EXPECT_TRUE(
      conversation_->Handle(Connect{"mx.example.net", '4', 25, "192.0.2.7"}).replies.empty());
  auto first = SendMessage({{"Subject", "hi"}}, "lunch?\r\n");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->context.client, "192.0.2.7");
  MilterVerdict ham;
  ham.verdict = MilterVerdict::Kind::kHam;
  ham.score = -2.5;
  ham.scan_id = "018bcfe5680012340000";
  ham.scan_signature = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(conversation_->Finish(ham),
            (std::vector<Reply>{AddHeaderReply("X-Nbspamd",
                                               "ham - score=-2.5000 scan=018bcfe5680012340000 "
                                               "sig=0123456789abcdef0123456789abcdef"),
                                ContinueReply()}));
  auto second = SendMessage({{"Subject", "again"}}, "more\r\n");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->context.client, "192.0.2.7");  // Per connection, not per message.
}

TEST_F(ConversationTest, HamGetsTheStatusHeaderOnly) {
  Start();
  ASSERT_TRUE(SendMessage({{"Subject", "hi"}}, "lunch?\r\n"));
  MilterVerdict ham;
  ham.verdict = MilterVerdict::Kind::kHam;
  ham.score = -2.5;
  EXPECT_EQ(
      conversation_->Finish(ham),
      (std::vector<Reply>{AddHeaderReply("X-Nbspamd", "ham - score=-2.5000"), ContinueReply()}));
  EXPECT_FALSE(conversation_->AwaitingVerdict());
  EXPECT_FALSE(conversation_->InMessage());
  EXPECT_EQ(counters_.ham.load(), 1u);
}

TEST_F(ConversationTest, SpamGetsTheFlagAndTheStatus) {
  Start();
  ASSERT_TRUE(SendMessage({{"Subject", "buy"}}, "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Spam(10)),
            (std::vector<Reply>{AddHeaderReply("X-Spam-Flag", "YES"),
                                AddHeaderReply("X-Nbspamd", "spam 0.9876 score=10.0000"),
                                ContinueReply()}));
  EXPECT_EQ(counters_.spam.load(), 1u);
}

TEST_F(ConversationTest, ForgedHeadersAreReplacedOrDeleted) {
  Start();
  ASSERT_TRUE(SendMessage(
      {{"X-Spam-Flag", "NO"}, {"x-nbspamd", "ham"}, {"X-Spam-Flag", "NO"}, {"X-Spam-Flag", "NO"}},
      "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Spam(10)),
            (std::vector<Reply>{
                ChangeHeaderReply(3, "X-Spam-Flag", ""), ChangeHeaderReply(2, "X-Spam-Flag", ""),
                ChangeHeaderReply(1, "X-Spam-Flag", "YES"),
                ChangeHeaderReply(1, "X-Nbspamd", "spam 0.9876 score=10.0000"), ContinueReply()}));
  // On ham a forged flag is deleted.
  ASSERT_TRUE(SendMessage({{"X-Spam-Flag", "YES"}}, "hello\r\n"));
  EXPECT_EQ(
      conversation_->Finish(Ham(-1)),
      (std::vector<Reply>{ChangeHeaderReply(1, "X-Spam-Flag", ""),
                          AddHeaderReply("X-Nbspamd", "ham - score=-1.0000"), ContinueReply()}));
}

// Every other header of nbspamd's own names that a sender wrote goes too: a forged spamd scan
// header, or an X-Nbspamd-* one, never reaches the mailbox (nor a later report).
TEST_F(ConversationTest, ForgedHeadersOfOurOtherNamesAreDeleted) {
  Start();
  ASSERT_TRUE(SendMessage({{"X-Spam-Scan-Id", "018bcfe5680012340000"},
                           {"X-Nbspamd-Report", "ham"},
                           {"x-spam-scan-id", "018bcfe5680012340001"},
                           {"X-Spam-Status", "No"}},
                          "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Ham(-1)),
            (std::vector<Reply>{AddHeaderReply("X-Nbspamd", "ham - score=-1.0000"),
                                ChangeHeaderReply(2, "X-Spam-Scan-Id", ""),
                                ChangeHeaderReply(1, "X-Spam-Scan-Id", ""),
                                ChangeHeaderReply(1, "X-Nbspamd-Report", ""), ContinueReply()}));
  // The next message starts clean.
  ASSERT_TRUE(SendMessage({}, "hello\r\n"));
  EXPECT_EQ(
      conversation_->Finish(Ham(-1)),
      (std::vector<Reply>{AddHeaderReply("X-Nbspamd", "ham - score=-1.0000"), ContinueReply()}));
}

TEST_F(ConversationTest, RejectsSpamAtOrAboveTheRejectScore) {
  options_.reject_score = 10;
  options_.reject_text = "No spam here";
  Start();
  ASSERT_TRUE(SendMessage({}, "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Spam(10)),
            std::vector<Reply>{ReplyCodeReply("550 5.7.1 No spam here")});
  EXPECT_EQ(counters_.rejected.load(), 1u);
  ASSERT_TRUE(SendMessage({}, "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Spam(9.99)).back(), ContinueReply());
  // Ham is never rejected, whatever its score.
  ASSERT_TRUE(SendMessage({}, "hello\r\n"));
  MilterVerdict ham;
  ham.verdict = MilterVerdict::Kind::kHam;
  ham.score = 50;
  EXPECT_EQ(conversation_->Finish(ham).back(), ContinueReply());
  EXPECT_EQ(counters_.rejected.load(), 1u);
}

TEST_F(ConversationTest, QuarantinesSpamWhenConfiguredAndGranted) {
  options_.quarantine_score = 5;
  Start();
  EXPECT_NE(conversation_->actions() & kActionQuarantine, 0u);
  ASSERT_TRUE(SendMessage({}, "viagra\r\n"));
  EXPECT_EQ(conversation_->Finish(Spam(6)),
            (std::vector<Reply>{AddHeaderReply("X-Spam-Flag", "YES"),
                                AddHeaderReply("X-Nbspamd", "spam 0.9876 score=6.0000"),
                                QuarantineReply("nbspamd: spam"), ContinueReply()}));
  EXPECT_EQ(counters_.quarantined.load(), 1u);
}

TEST_F(ConversationTest, BackendErrorFollowsTheFailMode) {
  Start();
  ASSERT_TRUE(SendMessage({}, "x\r\n"));
  EXPECT_EQ(conversation_->Finish(std::unexpected(Error{ErrorCode::kUnavailable, "down"})),
            std::vector<Reply>{ContinueReply()});
  options_.fail_mode = FailMode::kTempfail;
  ASSERT_TRUE(SendMessage({}, "x\r\n"));
  EXPECT_EQ(conversation_->Finish(std::unexpected(Error{ErrorCode::kUnavailable, "down"})),
            std::vector<Reply>{TempfailReply()});
  EXPECT_EQ(counters_.backend_errors.load(), 2u);
  EXPECT_EQ(counters_.tempfailed.load(), 1u);
}

TEST_F(ConversationTest, OversizedMessageIsAcceptedUncheckedAndCounted) {
  options_.max_body_bytes = 100;
  Start();
  EXPECT_FALSE(SendMessage({{"Subject", "big"}}, std::string(200, 'x')));
  EXPECT_EQ(last_replies_, std::vector<Reply>{ContinueReply()});
  EXPECT_EQ(counters_.oversized.load(), 1u);
  // The next message is checked again.
  EXPECT_TRUE(SendMessage({{"Subject", "small"}}, "x\r\n"));
}

TEST_F(ConversationTest, AbortForgetsTheMessageAndKeepsTheConnection) {
  Start();
  EXPECT_TRUE(conversation_->Handle(Mail{{"<a@b>"}}).replies.empty());
  EXPECT_TRUE(conversation_->Handle(Header{"Subject", "first"}).replies.empty());
  EXPECT_TRUE(conversation_->InMessage());
  Conversation::Step abort = conversation_->Handle(Abort{});
  EXPECT_TRUE(abort.replies.empty());
  EXPECT_FALSE(abort.close);
  EXPECT_FALSE(conversation_->InMessage());
  auto request = SendMessage({{"Subject", "second"}}, "y\r\n");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->message, "Subject: second\r\n\r\ny\r\n");
}

TEST_F(ConversationTest, QuitClosesAndQuitNewConnectionStartsOver) {
  Start();
  EXPECT_TRUE(conversation_->Handle(QuitNewConnection{}).replies.empty());
  EXPECT_TRUE(conversation_->Handle(Mail{{"<a@b>"}}).error);  // A new OPTNEG must come first.
  Start();
  EXPECT_TRUE(conversation_->Handle(QuitNewConnection{}).replies.empty());
  EXPECT_FALSE(
      conversation_->Handle(OptionNegotiation{6, kPostfixActions, kPostfixProtocol}).error);
  Conversation::Step quit = conversation_->Handle(Quit{});
  EXPECT_TRUE(quit.close);
  EXPECT_FALSE(quit.error);
}

struct OutOfOrderCase {
  const char* name;
  std::vector<Command> commands;  // After negotiation (unless the first is the offender).
  bool negotiate = true;
};

class OutOfOrderTest : public ::testing::TestWithParam<OutOfOrderCase> {};

TEST_P(OutOfOrderTest, IsAProtocolError) {
  ConversationOptions options;
  MilterCounters counters;
  Conversation conversation(options, counters);
  if (GetParam().negotiate) {
    ASSERT_FALSE(
        conversation.Handle(OptionNegotiation{6, kPostfixActions, kPostfixProtocol}).error);
  }
  const auto& commands = GetParam().commands;
  for (std::size_t i = 0; i + 1 < commands.size(); ++i) {
    ASSERT_FALSE(conversation.Handle(commands[i]).error) << i;
  }
  Conversation::Step last = conversation.Handle(commands.back());
  ASSERT_TRUE(last.error);
  EXPECT_TRUE(last.close);
  EXPECT_EQ(last.error->code, ErrorCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(
    Table, OutOfOrderTest,
    ::testing::Values(
        OutOfOrderCase{"mail_before_optneg", {Mail{{"<a@b>"}}}, false},
        OutOfOrderCase{"macro_before_optneg", {Macros{'M', {}}}, false},
        OutOfOrderCase{"eob_before_optneg", {EndOfBody{}}, false},
        OutOfOrderCase{"second_optneg", {OptionNegotiation{6, 0, 0}}},
        OutOfOrderCase{"rcpt_before_mail", {Rcpt{{"<a@b>"}}}},
        OutOfOrderCase{"header_before_mail", {Header{"Subject", "x"}}},
        OutOfOrderCase{"eoh_before_mail", {EndOfHeaders{}}},
        OutOfOrderCase{"body_before_mail", {Body{"x"}}},
        OutOfOrderCase{"eob_before_mail", {EndOfBody{}}},
        OutOfOrderCase{"body_before_eoh", {Mail{{"<a@b>"}}, Body{"x"}}},
        OutOfOrderCase{"eob_before_eoh", {Mail{{"<a@b>"}}, Header{"A", "b"}, EndOfBody{}}},
        OutOfOrderCase{"header_after_eoh", {Mail{{"<a@b>"}}, EndOfHeaders{}, Header{"A", "b"}}},
        OutOfOrderCase{"eoh_twice", {Mail{{"<a@b>"}}, EndOfHeaders{}, EndOfHeaders{}}},
        OutOfOrderCase{"rcpt_after_abort", {Mail{{"<a@b>"}}, Abort{}, Rcpt{{"<a@b>"}}}}),
    [](const ::testing::TestParamInfo<OutOfOrderCase>& info) { return info.param.name; });

}  // namespace
}  // namespace nbspamd::milter
