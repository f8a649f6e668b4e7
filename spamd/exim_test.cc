// Exim (Debian's exim4-daemon-heavy, a throw-away instance: tests/support/exim_instance.h) asks a
// SpamdListener with the deterministic FakeSpamdBackend about each message in its DATA ACL, as an
// administrator's Exim would ask nbspamd: "viagra" is spam (S = 10.0), anything else ham
// (S = -5.0), against T = 5.0.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "spamd/testing/fake_backend.h"
#include "spamd/testing/test_server.h"
#include "tests/support/exim_instance.h"

namespace nbspamd::spamd {
namespace {

using nbspamd::testing::EximInstance;
using nbspamd::testing::EximOptions;

constexpr std::string_view kSpam =
    "From: sender@example.org\r\nTo: alice@example.org\r\nSubject: cheap viagra\r\n\r\n"
    "Buy viagra now.\r\n.hidden line starting with a dot\r\n";
constexpr std::string_view kHam =
    "From: bob@example.org\r\nTo: alice@example.org\r\nSubject: lunch\r\n\r\nLunch at noon?\r\n";

class EximTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<SpamdTestServer>(backend_, SpamdOptions{}); }

  EximInstance StartExim(std::string data_acl = "") {
    EximOptions options;
    options.spamd_port = server_->port();
    options.data_acl = std::move(data_acl);
    auto exim = EximInstance::Create(std::move(options));
    if (!exim) {
      ADD_FAILURE() << exim.error();
      throw std::runtime_error("no Exim");
    }
    return std::move(*exim);
  }

  FakeSpamdBackend backend_;
  std::unique_ptr<SpamdTestServer> server_;
};

// The ACL of the issue: deny when $spam_score_int (10·S) is over 50, else add X-Spam-Score.
TEST_F(EximTest, RejectsSpamAndAcceptsHamWithTheScoreHeader) {
  EximInstance exim = StartExim();
  const auto spam = exim.Submit(kSpam);
  ASSERT_TRUE(spam.has_value()) << spam.error();
  EXPECT_EQ(spam->data_reply, "550 rejected as spam (score 10.0)") << spam->transcript;

  const auto ham = exim.Submit(kHam);
  ASSERT_TRUE(ham.has_value()) << ham.error();
  EXPECT_TRUE(ham->data_reply.starts_with("250 ")) << ham->transcript << exim.MainLog();
  const auto spooled = exim.Spooled(ham->message_id);
  ASSERT_TRUE(spooled.has_value()) << spooled.error();
  EXPECT_NE(spooled->find("X-Spam-Score: -5.0\n"), std::string::npos) << *spooled;
  EXPECT_NE(spooled->find("Subject: lunch"), std::string::npos) << *spooled;

  // Exim sent each message whole, as user "nobody" of the ACL, in its scanning form: an mbox
  // "From " line, X-Envelope-From and X-Envelope-To, then the message with its Received header
  // and LF line ends. The ACL's two spam conditions share one answer per message.
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].operation, "classify");
  EXPECT_EQ(calls[0].context.user, "nobody");
  EXPECT_TRUE(calls[0].message.starts_with("From ")) << calls[0].message;
  EXPECT_NE(calls[0].message.find("\nX-Envelope-To: alice@example.org\nReceived: "),
            std::string::npos)
      << calls[0].message;
  EXPECT_NE(calls[0].message.find("\nSubject: cheap viagra\n"), std::string::npos)
      << calls[0].message;
  EXPECT_NE(calls[0].message.find("\n.hidden line starting with a dot\n"), std::string::npos)
      << "dot-stuffing undone: " << calls[0].message;
  EXPECT_EQ(calls[1].context.user, "nobody");
}

// `spam = USER` without ":true" holds exactly when the answer is "Spam: True", which nbspamd
// sends exactly for its spam verdict (docs/SPAMD.md): the simplest ACL to reject spam.
TEST_F(EximTest, SpamConditionHoldsExactlyForTheSpamVerdict) {
  EximInstance exim = StartExim(
      "  deny    message = spam, $spam_score points\n"
      "          spam    = alice\n"
      "  accept\n");
  const auto spam = exim.Submit(kSpam);
  ASSERT_TRUE(spam.has_value()) << spam.error();
  EXPECT_EQ(spam->data_reply, "550 spam, 10.0 points") << spam->transcript;
  const auto ham = exim.Submit(kHam);
  ASSERT_TRUE(ham.has_value()) << ham.error();
  EXPECT_TRUE(ham->data_reply.starts_with("250 ")) << ham->transcript;
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].context.user, "alice");
}

// When nbspamd cannot answer (nothing learned yet), Exim defers the message (451) unless the
// ACL says defer_ok, which lets it through unscanned.
TEST_F(EximTest, BackendFailureDefersUnlessDeferOk) {
  backend_.SetClassifyError(Error{ErrorCode::kFailedPrecondition, "nothing learned"});
  EximInstance strict = StartExim();
  const auto deferred = strict.Submit(kSpam);
  ASSERT_TRUE(deferred.has_value()) << deferred.error();
  EXPECT_TRUE(deferred->data_reply.starts_with("451 ")) << deferred->transcript;

  EximInstance lenient = StartExim(
      "  deny    message = spam\n"
      "          spam    = nobody/defer_ok\n"
      "  accept\n");
  const auto accepted = lenient.Submit(kSpam);
  ASSERT_TRUE(accepted.has_value()) << accepted.error();
  EXPECT_TRUE(accepted->data_reply.starts_with("250 ")) << accepted->transcript;
}

}  // namespace
}  // namespace nbspamd::spamd
