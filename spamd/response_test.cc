#include "spamd/response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace nbspamd::spamd {
namespace {

SpamdVerdict Verdict(std::optional<double> score, SpamdVerdictKind kind, double threshold = 1.0) {
  SpamdVerdict verdict;
  verdict.score = score;
  verdict.verdict = kind;
  verdict.spam_threshold = threshold;
  return verdict;
}

SpamdRequest Request(SpamdCommand command, int version_minor, std::string body = "") {
  SpamdRequest request;
  request.command = command;
  request.version_minor = version_minor;
  request.body = std::move(body);
  return request;
}

constexpr auto kSpam = SpamdVerdictKind::kSpam;
constexpr auto kHam = SpamdVerdictKind::kHam;
constexpr auto kUnsure = SpamdVerdictKind::kUnsure;

// S = 5 + 5 · (score − threshold), rounded to one decimal, then made to agree with the verdict.
TEST(MapScore, HandComputedExamples) {
  struct Example {
    std::optional<double> score;
    SpamdVerdictKind verdict;
    double threshold;
    double s;
  };
  const Example examples[] = {
      {2.0, kSpam, 1.0, 10.0},     // 5 + 5·1
      {-1.0, kHam, 1.0, -5.0},     // 5 + 5·(−2)
      {1.25, kSpam, 1.0, 6.3},     // 5 + 1.25 = 6.25, rounded half away from zero
      {0.9, kUnsure, 1.0, 4.5},    // 5 − 0.5
      {0.0, kUnsure, 1.0, 0.0},    // 5 − 5
      {-0.02, kHam, 0.0, 4.9},     // 5 − 0.1
      {1.3, kSpam, 0.5, 9.0},      // 5 + 5·0.8
      {-0.6, kHam, -0.6, 4.9},     // score = threshold: not spam (spam needs score > threshold)
      {1.0, kUnsure, 1.0, 4.9},    // the boundary: 5.0 would say spam, the verdict does not
      {0.999, kUnsure, 1.0, 4.9},  // 4.995 might round to 5.0: kept below T
      {1.001, kSpam, 1.0, 5.0},    // 5.005 rounds to 5.0: spam, S = T
      {1.01, kSpam, 1.0, 5.1},     // 5.05 → 5.1 (or 5.0: either is spam); see below
      {0.5, kSpam, 1.0, 5.0},      // a spam verdict below the threshold (not from nbspamd's
                                   // core, but the verdict decides): raised to T
      {std::nullopt, kUnsure, 1.0, 0.0},  // no score yet
      {std::nullopt, kSpam, 1.0, 5.0},
      {1e9, kSpam, 1.0, 999.9},  // bounded
      {-1e9, kHam, 1.0, -999.9},
  };
  for (const Example& example : examples) {
    const SpamdScore mapped = MapScore(Verdict(example.score, example.verdict, example.threshold));
    const std::string label = (example.score ? std::to_string(*example.score) : "none") + " / " +
                              std::to_string(example.threshold);
    if (example.score == 1.01) {
      // 5 + 5·0.01 is 5.05 in decimal but not in binary: either neighbour is right, both spam.
      EXPECT_TRUE(mapped.score == 5.0 || std::abs(mapped.score - 5.1) < 1e-9) << label;
    } else {
      EXPECT_NEAR(mapped.score, example.s, 1e-9) << label;
    }
    EXPECT_EQ(mapped.threshold, 5.0);
    EXPECT_EQ(mapped.spam, example.verdict == kSpam) << label;
  }
}

TEST(MapScore, NotANumberIsNoScore) {
  const SpamdScore mapped =
      MapScore(Verdict(std::numeric_limits<double>::quiet_NaN(), kUnsure, 1.0));
  EXPECT_EQ(mapped.score, 0.0);
  EXPECT_FALSE(mapped.spam);
}

// Around the threshold, with the verdict the core gives (spam when score > threshold), S ≥ T
// holds exactly for spam, as spamc -c and Exim's spam condition read it.
TEST(MapScore, SpamExactlyWhenSAtLeastT) {
  for (const double threshold : {1.0, -0.6, 0.0, 0.35, 2.7}) {
    for (int step = -20000; step <= 20000; ++step) {
      const double score = threshold + step * 1e-4;
      const SpamdVerdictKind verdict = score > threshold ? kSpam : kHam;
      const SpamdScore mapped = MapScore(Verdict(score, verdict, threshold));
      // Parse S back from the text, as a client does.
      const double shown = std::stod(FormatScore(mapped.score));
      ASSERT_EQ(shown >= 5.0, verdict == kSpam) << "score " << score << " threshold " << threshold;
      // Exim's $spam_score_int: "%.0f" of 10·S, a whole number.
      char score_int[32];
      std::snprintf(score_int, sizeof score_int, "%.0f", shown * 10);
      ASSERT_EQ(std::stoi(score_int) >= 50, verdict == kSpam);
    }
  }
}

TEST(FormatScore, OneDecimalNoNegativeZero) {
  EXPECT_EQ(FormatScore(10.0), "10.0");
  EXPECT_EQ(FormatScore(4.9), "4.9");
  EXPECT_EQ(FormatScore(-3.5), "-3.5");
  EXPECT_EQ(FormatScore(-0.0), "0.0");
  // 5 + 5·(−0.008 − 1.0) = −0.04, which rounds to −0.0: shown as 0.0.
  EXPECT_EQ(FormatScore(MapScore(Verdict(-0.008, kHam, 1.0)).score), "0.0");
}

TEST(VerdictResponse, CheckIsTheSpamHeaderAlone) {
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kCheck, 5), Verdict(2.0, kSpam)),
            "SPAMD/1.1 0 EX_OK\r\nSpam: True ; 10.0 / 5.0\r\n\r\n");
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kCheck, 2), Verdict(-1.0, kHam)),
            "SPAMD/1.1 0 EX_OK\r\nSpam: False ; -5.0 / 5.0\r\n\r\n");
}

TEST(VerdictResponse, SymbolsByProtocolVersion) {
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kSymbols, 5), Verdict(2.0, kSpam)),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: 12\r\nSpam: True ; 10.0 / 5.0\r\n\r\n"
            "NBSPAMD_SPAM");
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kSymbols, 2), Verdict(0.5, kUnsure)),
            "SPAMD/1.1 0 EX_OK\r\nSpam: False ; 2.5 / 5.0\r\n\r\nNBSPAMD_UNSURE\r\n");
}

TEST(VerdictResponse, ReportIfSpamIsEmptyForHam) {
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kReportIfSpam, 5), Verdict(-1.0, kHam)),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: 0\r\nSpam: False ; -5.0 / 5.0\r\n\r\n");
  const std::string spam =
      VerdictResponse(Request(SpamdCommand::kReportIfSpam, 5), Verdict(2.0, kSpam));
  EXPECT_NE(spam.find("NBSPAMD_SPAM"), std::string::npos);
}

// Exim sends REPORT SPAMC/1.2 and reads the answer with this sscanf (src/spam.c), falling back
// from the 2.5x layout to the one spamd uses since.
TEST(VerdictResponse, EximReadsTheReport) {
  SpamdVerdict verdict = Verdict(1.3, kSpam);
  verdict.spam_confidence = 0.97;
  const std::string response = VerdictResponse(Request(SpamdCommand::kReport, 2), verdict);
  char version[8] = {};
  double score = 0, threshold = 0;
  int offset = 0;
  ASSERT_EQ(std::sscanf(response.c_str(), "SPAMD/%7s 0 EX_OK\r\nSpam: %*s ; %lf / %lf\r\n\r\n%n",
                        version, &score, &threshold, &offset),
            3);
  EXPECT_DOUBLE_EQ(score, 6.5);
  EXPECT_DOUBLE_EQ(threshold, 5.0);
  const std::string report = response.substr(static_cast<std::size_t>(offset));
  EXPECT_NE(report.find("Content analysis details:   (6.5 points, 5.0 required)"),
            std::string::npos);
  EXPECT_NE(report.find(" 6.5 NBSPAMD_SPAM"), std::string::npos) << report;
  EXPECT_NE(report.find("score 1.300, spam threshold 1.000, P(spam) 0.97"), std::string::npos);
}

TEST(VerdictResponse, ProcessByProtocolVersion) {
  const std::string message = "Subject: x\r\n\r\nbody\r\n";
  const std::string marked = MarkMessage(message, Verdict(2.0, kSpam));
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kProcess, 5, message), Verdict(2.0, kSpam)),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: " + std::to_string(marked.size()) +
                "\r\nSpam: True ; 10.0 / 5.0\r\n\r\n" + marked);
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kProcess, 2, message), Verdict(2.0, kSpam)),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: " + std::to_string(marked.size()) + "\r\n\r\n" +
                marked);
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kProcess, 1, message), Verdict(2.0, kSpam)),
            "SPAMD/1.0 0 EX_OK\r\n" + marked);
  const std::string headers = MarkHeaders(message, Verdict(2.0, kSpam));
  EXPECT_EQ(VerdictResponse(Request(SpamdCommand::kHeaders, 5, message), Verdict(2.0, kSpam)),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: " + std::to_string(headers.size()) +
                "\r\nSpam: True ; 10.0 / 5.0\r\n\r\n" + headers);
}

TEST(MarkMessage, AddsHeadersAndRemovesForgedOnes) {
  const std::string message =
      "From: a@example.org\r\nX-Spam-Flag: NO\r\nX-SPAM-Status: No, score=-99\r\n"
      "\tfolded part\r\nX-Nbspamd: ham - score=-3 scan=018bcfe5680012340000\r\n"
      "X-Spam-Scan-Id: 018bcfe5680012340000\r\nSubject: hi\r\n\r\nbody line\r\n"
      "X-Spam-Flag: in the body stays\r\n";
  SpamdVerdict verdict = Verdict(2.0, kSpam);
  verdict.spam_confidence = 0.97;
  verdict.scan_id = "018bcfe5680012340009";
  verdict.scan_signature = "0123456789abcdef0123456789abcdef";
  EXPECT_EQ(MarkMessage(message, verdict),
            "From: a@example.org\r\nSubject: hi\r\n"
            "X-Spam-Checker-Version: nbspamd\r\n"
            "X-Spam-Flag: YES\r\n"
            "X-Spam-Level: **********\r\n"
            "X-Spam-Status: Yes, score=10.0 required=5.0 tests=NBSPAMD_SPAM verdict=spam "
            "nbspamd_score=2.000 nbspamd_threshold=1.000 confidence=0.970\r\n"
            "X-Spam-Scan-Id: 018bcfe5680012340009; sig=0123456789abcdef0123456789abcdef\r\n"
            "\r\nbody line\r\nX-Spam-Flag: in the body stays\r\n");
}

TEST(MarkMessage, KeepsBareLineFeedsAndHandlesNoBody) {
  EXPECT_EQ(MarkMessage("Subject: hi\n\nbody\n", Verdict(-1.0, kHam)),
            "Subject: hi\nX-Spam-Checker-Version: nbspamd\nX-Spam-Level: \n"
            "X-Spam-Status: No, score=-5.0 required=5.0 tests=NBSPAMD_HAM verdict=ham "
            "nbspamd_score=-1.000 nbspamd_threshold=1.000\n\nbody\n");
  const std::string headers_only = MarkMessage("Subject: hi", Verdict(std::nullopt, kUnsure));
  EXPECT_EQ(headers_only,
            "Subject: hi\nX-Spam-Checker-Version: nbspamd\nX-Spam-Level: \n"
            "X-Spam-Status: No, score=0.0 required=5.0 tests=NBSPAMD_UNSURE verdict=unsure "
            "nbspamd_score=none nbspamd_threshold=1.000\n\n");
  EXPECT_EQ(MarkHeaders("Subject: hi\r\n\r\nbody\r\n", Verdict(-1.0, kHam)),
            "Subject: hi\r\nX-Spam-Checker-Version: nbspamd\r\nX-Spam-Level: \r\n"
            "X-Spam-Status: No, score=-5.0 required=5.0 tests=NBSPAMD_HAM verdict=ham "
            "nbspamd_score=-1.000 nbspamd_threshold=1.000\r\n\r\n");
}

TEST(Responses, ErrorPongAndTell) {
  EXPECT_EQ(ErrorResponse({SpamdStatus::kProtocol, "Bad header line: (unknown command)"}),
            "SPAMD/1.0 76 Bad header line: (unknown command)\r\n");
  EXPECT_EQ(ErrorResponse({SpamdStatus::kNoPerm, ""}), "SPAMD/1.0 77 EX_NOPERM\r\n");
  EXPECT_EQ(PongResponse(), "SPAMD/1.5 0 PONG\r\n");
  EXPECT_EQ(TellResponse(true, false), "SPAMD/1.1 0 EX_OK\r\nDidSet: local\r\n\r\n");
  EXPECT_EQ(TellResponse(false, true), "SPAMD/1.1 0 EX_OK\r\nDidRemove: local\r\n\r\n");
  EXPECT_EQ(TellResponse(false, false), "SPAMD/1.1 0 EX_OK\r\n\r\n");
}

TEST(FailureOf, MapsEachErrorCode) {
  const auto status = [](ErrorCode code) { return FailureOf(Error{code, "detail"}).status; };
  EXPECT_EQ(status(ErrorCode::kInvalidArgument), SpamdStatus::kDataErr);
  EXPECT_EQ(status(ErrorCode::kResourceExhausted), SpamdStatus::kDataErr);
  EXPECT_EQ(status(ErrorCode::kFailedPrecondition), SpamdStatus::kUnavailable);
  EXPECT_EQ(status(ErrorCode::kUnavailable), SpamdStatus::kTempFail);
  EXPECT_EQ(status(ErrorCode::kInsufficientStorage), SpamdStatus::kTempFail);
  EXPECT_EQ(status(ErrorCode::kPermissionDenied), SpamdStatus::kNoPerm);
  EXPECT_EQ(status(ErrorCode::kInternal), SpamdStatus::kSoftware);
  EXPECT_EQ(status(ErrorCode::kDataLoss), SpamdStatus::kSoftware);
  // The backend's own text never reaches the client.
  EXPECT_EQ(FailureOf(Error{ErrorCode::kInternal, "rocksdb: /secret/path"}).message.find("secret"),
            std::string::npos);
}

}  // namespace
}  // namespace nbspamd::spamd
