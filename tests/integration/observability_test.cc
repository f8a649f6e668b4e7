// Observability: GET /metrics in the Prometheus text format, request ids, and structured logs
// that carry no message content and no secrets. The real daemon over HTTP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSecret = "metrics-secret-0123456789";

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsNameChar(char c) { return IsNameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The length of the metric or label name at the start of `text` (0 when there is none).
std::size_t NameLength(std::string_view text) {
  if (text.empty() || !IsNameStart(text[0])) return 0;
  std::size_t length = 1;
  while (length < text.size() && IsNameChar(text[length])) ++length;
  return length;
}

// The length of a "{name="value",...}" label set at the start of `text`, or 0 when malformed.
std::size_t LabelsLength(std::string_view text) {
  std::size_t at = 1;  // After '{'.
  while (at < text.size() && text[at] != '}') {
    const std::size_t name = NameLength(text.substr(at));
    if (name == 0 || text.substr(at + name, 2) != "=\"") return 0;
    at += name + 2;
    while (at < text.size() && text[at] != '"') at += text[at] == '\\' ? 2 : 1;
    if (at >= text.size()) return 0;
    ++at;  // The closing quote.
    if (at < text.size() && text[at] == ',') ++at;
  }
  return at < text.size() ? at + 1 : 0;
}

// The samples of an exposition, "name{labels}" → value, after checking that every line is a
// well-formed comment or sample and that every sample's family was declared with # TYPE.
std::map<std::string, double> ParseExposition(const std::string& text) {
  std::map<std::string, double> samples;
  std::vector<std::string> families;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::string_view view(line);
    if (view.starts_with("# HELP ")) {
      EXPECT_GT(NameLength(view.substr(7)), 0u) << line;
      continue;
    }
    if (view.starts_with("# TYPE ")) {
      const std::size_t name = NameLength(view.substr(7));
      const std::string_view type = view.substr(7 + name);
      EXPECT_TRUE(name > 0 && (type == " counter" || type == " gauge" || type == " histogram"))
          << line;
      families.emplace_back(view.substr(7, name));
      continue;
    }
    const std::size_t name = NameLength(view);
    std::size_t end = name;
    if (end < view.size() && view[end] == '{') {
      const std::size_t labels = LabelsLength(view.substr(end));
      EXPECT_GT(labels, 0u) << "malformed labels: " << line;
      end += labels;
    }
    if (name == 0 || end >= view.size() || view[end] != ' ') {
      ADD_FAILURE() << "not an exposition line: " << line;
      continue;
    }
    const std::string family(view.substr(0, name));
    const bool declared = std::ranges::any_of(families, [&](const std::string& f) {
      return family == f || family == f + "_bucket" || family == f + "_sum" ||
             family == f + "_count";
    });
    EXPECT_TRUE(declared) << "no # TYPE for " << line;
    const std::string value(view.substr(end + 1));
    std::size_t parsed = 0;
    double number = 0;
    try {
      number = std::stod(value, &parsed);
    } catch (const std::exception&) {
      parsed = 0;
    }
    EXPECT_EQ(parsed, value.size()) << "not a number: " << line;
    samples[std::string(view.substr(0, end))] = number;
  }
  return samples;
}

class ObservabilityTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra) {
    std::vector<std::string> args = {"--listen",         "127.0.0.1:0", "--data-dir",
                                     dir_.Join("model"), "--threads",   "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }
  TempDir dir_;
};

TEST_F(ObservabilityTest, MetricsCountRequestsVerdictsTrainingAndFeedback) {
  DaemonProcess daemon = Start({"--auth-tokens", "mx1:" + kSecret, "--max-body-bytes", "100000"});
  HttpClient client(daemon.port());
  const std::vector<std::pair<std::string, std::string>> auth = {
      {"Authorization", "Bearer " + kSecret}};
  const auto train = [&](const std::string& target, const std::string& text) {
    ASSERT_EQ(client.Send(http::verb::post, target, text, "text/plain", auth).result(),
              http::status::ok);
  };
  train("/train?label=spam", "cheap money prize winner");
  train("/train?label=spam", "free prize click now");
  train("/train?label=ham", "lunch meeting on friday");
  train("/train?label=ham", "agenda for the team meeting");
  // Classified as spam, then trained as ham: a false positive. By id, and by content.
  const auto verdict =
      json::parse(client.Send(http::verb::post, "/classify?id=m1", "cheap prize money").body());
  ASSERT_EQ(verdict.at("label").as_string(), "spam");
  ASSERT_EQ(verdict.at("verdict").as_string(), "spam");
  train("/train?label=ham&id=m1", "cheap prize money, really from a friend");
  const auto second =
      json::parse(client.Send(http::verb::post, "/classify", "team lunch friday").body());
  ASSERT_EQ(second.at("label").as_string(), "ham");
  const std::string second_verdict(second.at("verdict").as_string());
  train("/train?label=spam", "team lunch friday");                 // A false negative.
  train("/train?label=spam", "team lunch friday");                 // Unchanged: no second feedback.
  client.Send(http::verb::post, "/train?label=spam", "no token");  // 401
  client.Send(http::verb::post, "/classify", std::string(200000, 'a'));  // 413
  client.Send(http::verb::get, "/nowhere");                              // 404

  const auto response = client.Send(http::verb::get, "/metrics");
  ASSERT_EQ(response.result(), http::status::ok);
  EXPECT_THAT(std::string(response[http::field::content_type]), HasSubstr("text/plain"));
  const std::map<std::string, double> samples = ParseExposition(response.body());
  const auto at = [&](const std::string& key) {
    const auto it = samples.find(key);
    EXPECT_NE(it, samples.end()) << key << " missing in\n" << response.body();
    return it == samples.end() ? -1.0 : it->second;
  };
  EXPECT_EQ(at(R"(nbspamd_http_requests_total{endpoint="/train",status="200"})"), 7);
  EXPECT_EQ(at(R"(nbspamd_http_requests_total{endpoint="/train",status="401"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_http_requests_total{endpoint="/classify",status="200"})"), 2);
  EXPECT_EQ(at(R"(nbspamd_http_requests_total{endpoint="/classify",status="413"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_http_requests_total{endpoint="other",status="404"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_verdicts_total{class="spam"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_verdicts_total{class="ham"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_spam_verdicts_total{verdict="spam"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_spam_verdicts_total{verdict="unsure"})"), second_verdict == "unsure");
  EXPECT_EQ(at(R"(nbspamd_spam_verdicts_total{verdict="ham"})"), second_verdict == "ham");
  EXPECT_EQ(at(R"(nbspamd_training_total{source="mx1",outcome="learned"})"), 6);
  EXPECT_EQ(at(R"(nbspamd_training_total{source="mx1",outcome="unchanged"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_feedback_total{kind="false_positive"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_feedback_total{kind="false_negative"})"), 1);
  EXPECT_EQ(at(R"(nbspamd_feedback_total{kind="agreed"})"), 0);
  EXPECT_EQ(at(R"(nbspamd_model_documents{class="spam"})"), 3);
  EXPECT_EQ(at(R"(nbspamd_model_documents{class="ham"})"), 3);
  EXPECT_GT(at("nbspamd_model_vocabulary"), 10);
  EXPECT_GE(at("nbspamd_storage_wal_bytes"), 0);
  EXPECT_GE(at("nbspamd_storage_pending_compaction_bytes"), 0);
  // Nothing failed unseen by a client.
  for (const char* where : {"http_session", "io_thread", "training_completion"}) {
    EXPECT_EQ(at(std::string(R"(nbspamd_internal_errors_total{where=")") + where + "\"}"), 0)
        << where;
  }
  // Histogram buckets are cumulative and end at the count.
  double previous = 0;
  for (const char* bound : {"0.0001", "0.001", "0.01", "0.1", "1", "5", "+Inf"}) {
    const double bucket =
        at(std::string(R"(nbspamd_http_request_duration_seconds_bucket{endpoint="/train",le=")") +
           bound + "\"}");
    EXPECT_GE(bucket, previous) << bound;
    previous = bucket;
  }
  EXPECT_EQ(previous, at(R"(nbspamd_http_request_duration_seconds_count{endpoint="/train"})"));
}

TEST_F(ObservabilityTest, RequestIdsAndStructuredLogsWithoutContentOrSecrets) {
  DaemonProcess daemon =
      Start({"--auth-tokens", "mx1:" + kSecret, "--log-level", "debug", "--log-format", "json"});
  HttpClient client(daemon.port());
  const auto given = client.Send(
      http::verb::post, "/train?label=spam&id=zebra-1", "zebracontent quokkaword", "text/plain",
      {{"Authorization", "Bearer " + kSecret}, {"X-Request-Id", "abc-123"}});
  EXPECT_EQ(given["X-Request-Id"], "abc-123");
  const auto generated = client.Send(http::verb::get, "/healthz");
  const std::string id(generated["X-Request-Id"]);
  EXPECT_EQ(id.size(), 16u);
  EXPECT_NE(client.Send(http::verb::get, "/healthz")["X-Request-Id"], id);
  // An unusable client id is replaced.
  EXPECT_NE(client.Send(http::verb::get, "/healthz", "", "text/plain",
                        {{"X-Request-Id", "a b"}})["X-Request-Id"],
            "a b");
  EXPECT_EQ(daemon.Terminate(), 0);

  const std::string log = daemon.Log();
  EXPECT_THAT(log, Not(HasSubstr("zebracontent")));
  EXPECT_THAT(log, Not(HasSubstr("quokkaword")));
  EXPECT_THAT(log, Not(HasSubstr(kSecret)));
  std::istringstream lines(log);
  std::string line;
  int requests = 0;
  while (std::getline(lines, line)) {
    boost::system::error_code ec;
    const json::value event = json::parse(line, ec);
    ASSERT_FALSE(ec) << "not a JSON line: " << line;
    EXPECT_TRUE(event.at("time").is_string());
    EXPECT_TRUE(event.at("level").is_string());
    EXPECT_TRUE(event.at("msg").is_string());
    if (event.at("msg") == "request") {
      ++requests;
      EXPECT_TRUE(event.at("request_id").is_string());
      EXPECT_TRUE(event.at("status").is_string());
    }
    if (event.as_object().contains("request_id") && event.at("request_id") == "abc-123") {
      EXPECT_EQ(event.at("endpoint"), "/train");
    }
  }
  EXPECT_EQ(requests, 4);
}

TEST_F(ObservabilityTest, LogfmtAtInfoHasNoLinePerRequest) {
  DaemonProcess daemon = Start({});
  HttpClient client(daemon.port());
  for (int i = 0; i < 5; ++i) client.Send(http::verb::get, "/healthz");
  EXPECT_EQ(daemon.Terminate(), 0);
  const std::string log = daemon.Log();
  EXPECT_THAT(log, HasSubstr("level=info msg=\"model in "));
  EXPECT_THAT(log, Not(HasSubstr("msg=request")));
  const ProcessExit bad = RunToExit({"--log-level", "verbose"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.output, HasSubstr("log_level"));
}

}  // namespace
}  // namespace nbspamd::testing
