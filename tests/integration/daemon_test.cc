// Integration tests: the real nbspamd binary on 127.0.0.1 with an ephemeral port and a RocksDB
// model in a temp folder, spoken to over HTTP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/seed_examples.h"
#include "tests/support/temp_dir.h"
#include "tokenizer/glib_slices.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;
using ::testing::HasSubstr;

// Waits (polling, at most 10 s) until the daemon's log contains `text`.
bool WaitForLog(const DaemonProcess& daemon, const std::string& text) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (daemon.Log().find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

class DaemonTest : public ::testing::Test {
 protected:
  std::vector<std::string> Args(std::vector<std::string> extra = {}) const {
    // Add-one smoothing and words alone, as the golden numbers of shared/seed-examples.md have
    // them.
    std::vector<std::string> args = {
        "--listen", "127.0.0.1:0", "--data-dir", data_.Join("model"), "--threads",
        "2",        "--alpha",     "1",          "--char-ngrams",     "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  DaemonProcess Start(std::vector<std::string> extra = {}) {
    auto daemon = DaemonProcess::Start(Args(std::move(extra)));
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static void TrainSeed(HttpClient& client) { TrainSeedExamples(client); }

  TempDir data_;
};

TEST_F(DaemonTest, SeedDocumentsThroughHttpGiveTheGoldenNumbersAcrossARestart) {
  std::string first_answer;
  // Every token in the score (-0.3157 for "review account"), and a threshold below it, so that
  // the label is the more probable class, spam.
  const std::vector<std::string> textbook = {"--score-min-weight", "0", "--spam-threshold", "-0.5"};
  {
    DaemonProcess daemon = Start(textbook);
    HttpClient client(daemon.port());
    TrainSeed(client);
    const auto response = client.Send(http::verb::post, "/classify", "review account");
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
    const json::value body = json::parse(response.body());
    EXPECT_EQ(body.at("label").as_string(), "spam");
    EXPECT_NEAR(body.at("probability").to_number<double>(), 0.5154362416, 1e-9);
    EXPECT_NEAR(body.at("log_odds").to_number<double>(), 0.0617645943, 1e-9);
    const json::value unseen = client.PostJson("/classify", "review us now");
    EXPECT_NEAR(unseen.at("probability").to_number<double>(), 0.5154362416, 1e-9);
    first_answer = WithoutScanId(response.body());
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  DaemonProcess restarted = Start(textbook);
  HttpClient client(restarted.port());
  const auto again = client.Send(http::verb::post, "/classify", "review account");
  EXPECT_EQ(WithoutScanId(again.body()), first_answer)
      << "scores must be bit-identical after a restart";
  const json::value stats = client.GetJson("/stats");
  EXPECT_EQ(stats.at("documents").as_int64(), 6);
  EXPECT_EQ(stats.at("vocabulary").as_int64(), 6);
}

#if NBSPAMD_JEMALLOC
// The release build's daemon allocates with jemalloc (README, "Dependencies"), linked so that it
// replaces malloc when loaded: a build that dropped it would not have it mapped.
TEST_F(DaemonTest, TheDaemonAllocatesWithJemalloc) {
  DaemonProcess daemon = Start();
  std::ifstream maps("/proc/" + std::to_string(daemon.pid()) + "/maps");
  const std::string mapped((std::istreambuf_iterator<char>(maps)), {});
  EXPECT_NE(mapped.find("/libjemalloc.so"), std::string::npos);
}
#endif

// GLib before 2.76 (Debian 12 has 2.74) allocates GMime's objects from GSlice's magazines unless
// G_SLICE said otherwise when GLib was loaded: the daemon configures GSlice as
// G_SLICE=always-malloc would, before GLib's initialisers run (tokenizer/glib_slices.h), and keeps
// a value its environment gave. It says at start which allocator GSlice took.
TEST_F(DaemonTest, GMimesObjectsAreAllocatedWithMallocUnlessTheEnvironmentSaysOtherwise) {
  constexpr std::string_view kMalloc = "GMime's objects from malloc";
  constexpr std::string_view kMagazines = "GMime's objects from GSlice's magazines";
  ASSERT_EQ(unsetenv("G_SLICE"), 0);
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    TrainSeed(client);
    EXPECT_EQ(client.Send(http::verb::post, "/classify", "review account").result(),
              http::status::ok);
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
    EXPECT_NE(daemon.Log().find(kMalloc), std::string::npos) << daemon.Log();
  }
  ASSERT_EQ(setenv("G_SLICE", "", 1), 0);  // The environment's choice: GSlice's magazines.
  DaemonProcess daemon = Start();
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  EXPECT_NE(daemon.Log().find(tokenizer::GSliceHasMagazines() ? kMagazines : kMalloc),
            std::string::npos)
      << daemon.Log();
  ASSERT_EQ(unsetenv("G_SLICE"), 0);
}

TEST_F(DaemonTest, IncrementalTrainingInAnotherOrderGivesTheSameModel) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  TempDir other_data;
  auto other =
      DaemonProcess::Start({"--listen", "127.0.0.1:0", "--data-dir", other_data.Join("model"),
                            "--alpha", "1", "--char-ngrams", "0"});
  ASSERT_TRUE(other.has_value()) << other.error();
  HttpClient other_client(other->port());
  for (auto it = SeedExamples().rbegin(); it != SeedExamples().rend(); ++it) {
    // JSON this time, and no ids: the content hash names each message.
    json::object request{{"text", it->text}, {"label", it->label}};
    other_client.PostJson("/train", json::serialize(request), "application/json");
  }
  // The same model; the held-out scores (what the recent feedback gives) follow the order.
  EXPECT_EQ(WithoutFeedback(other_client.Send(http::verb::get, "/stats").body()),
            WithoutFeedback(client.Send(http::verb::get, "/stats").body()));
  for (const char* text : {"review account", "send us your password", "review us now"}) {
    EXPECT_EQ(WithoutScanId(other_client.Send(http::verb::post, "/classify", text).body()),
              WithoutScanId(client.Send(http::verb::post, "/classify", text).body()))
        << text;
  }
}

TEST_F(DaemonTest, RelearnAndForgetOverHttp) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string before =
      WithoutScanId(client.Send(http::verb::post, "/classify?explain=3", "review account").body());
  EXPECT_EQ(client.PostJson("/train?label=spam&id=extra", "account account review")
                .at("status")
                .as_string(),
            "learned");
  EXPECT_EQ(client.PostJson("/train?label=spam&id=extra", "account account review")
                .at("status")
                .as_string(),
            "unchanged");
  EXPECT_EQ(client.PostJson("/train?label=ham&id=extra", "account account review")
                .at("status")
                .as_string(),
            "relearned");
  EXPECT_NE(
      WithoutScanId(client.Send(http::verb::post, "/classify?explain=3", "review account").body()),
      before);
  const auto forgotten = client.Send(http::verb::post, "/forget?id=extra");
  ASSERT_EQ(forgotten.result(), http::status::ok) << forgotten.body();
  EXPECT_EQ(json::parse(forgotten.body()).at("status").as_string(), "forgotten");
  EXPECT_EQ(
      WithoutScanId(client.Send(http::verb::post, "/classify?explain=3", "review account").body()),
      before)
      << "forgetting must restore the scores exactly";
  EXPECT_EQ(client.Send(http::verb::post, "/forget?id=extra").result(), http::status::not_found);
}

// Error-driven training (--train-margin): what the model already gets right is only checked.
TEST_F(DaemonTest, UnderATrainMarginMessagesScoredRightAreOnlyChecked) {
  const std::vector<std::string> flags = {"--train-margin", "0.3", "--score-min-weight", "0"};
  {
    DaemonProcess daemon = Start(flags);
    HttpClient client(daemon.port());
    const auto status = [&](const std::string& target, const std::string& text) {
      return std::string(client.PostJson(target, text).at("status").as_string());
    };
    // No score before both classes have a document: counted.
    EXPECT_EQ(status("/train?label=spam&id=s1", "cheap pills"), "learned");
    EXPECT_EQ(status("/train?label=ham&id=h1", "project meeting"), "learned");
    // Each word weighs log 2 towards spam: right by more than 0.3.
    EXPECT_EQ(status("/train?label=spam&id=s2", "cheap pills"), "checked");
    EXPECT_EQ(status("/train?label=spam&id=s3", "cheap pills"), "checked");
    // count=all (a bulk import) counts it whatever the regime; nothing else is a valid count.
    EXPECT_EQ(status("/train?label=spam&id=s4&count=all", "cheap pills"), "learned");
    EXPECT_EQ(client.Send(http::verb::post, "/forget?id=s4").result(), http::status::ok);
    const auto bad = client.Send(http::verb::post, "/train?label=spam&id=s5&count=some", "x");
    EXPECT_EQ(bad.result(), http::status::bad_request) << bad.body();
    EXPECT_THAT(bad.body(), HasSubstr("count must be"));
    const json::value stats = client.GetJson("/stats");
    EXPECT_EQ(stats.at("documents").as_int64(), 2);
    EXPECT_EQ(stats.at("train_margin").as_double(), 0.3);
    // The ledger says what was counted and what only checked.
    const json::value learned = client.GetJson("/admin/learned?source=");
    int checked = 0;
    for (const json::value& message : learned.at("messages").as_array()) {
      if (!message.at("counted").as_bool()) ++checked;
    }
    EXPECT_EQ(checked, 2);
    EXPECT_THAT(client.Send(http::verb::get, "/metrics").body(),
                HasSubstr(R"(nbspamd_training_total{source="",outcome="checked"} 2)"));
    // A correction is always counted; forgetting a checked message takes nothing from the counts.
    EXPECT_EQ(status("/train?label=ham&id=s2", "cheap pills"), "relearned");
    EXPECT_EQ(client.Send(http::verb::post, "/forget?id=s3").result(), http::status::ok);
    EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 3);
  }
  // After a restart the records are as they were left.
  DaemonProcess daemon = Start(flags);
  HttpClient client(daemon.port());
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 3);
  EXPECT_EQ(client.Send(http::verb::post, "/forget?id=s3").result(), http::status::not_found);
  EXPECT_EQ(client.PostJson("/train?label=ham&id=s2", "cheap pills").at("status").as_string(),
            "unchanged");
}

TEST_F(DaemonTest, ByteNgramsAreLearnedAndExplained) {
  DaemonProcess daemon = Start({"--byte-ngrams", "4", "--score-min-weight", "0"});
  HttpClient client(daemon.port());
  const std::string spam = "From: deals@pills.example\nSubject: cheap pills\n\nBuy v1agra now\n";
  const std::string ham = "From: ann@work.example\nSubject: agenda\n\nThe meeting is at ten\n";
  EXPECT_EQ(client.PostJson("/train?label=spam&id=s", spam).at("status").as_string(), "learned");
  EXPECT_EQ(client.PostJson("/train?label=ham&id=h", ham).at("status").as_string(), "learned");
  const json::value stats = client.GetJson("/stats");
  EXPECT_EQ(stats.at("options").at("byte_ngrams").as_int64(), 4);
  EXPECT_EQ(stats.at("options").at("byte_ngram_head").as_int64(), 2500);

  const json::value answer = client.PostJson(
      "/classify?explain=50", "From: sales@pills.example\nSubject: pills\n\nv1agra\n");
  EXPECT_EQ(answer.at("label").as_string(), "spam");
  int ngrams = 0;
  for (const json::value& token : answer.at("explain").as_array()) {
    if (token.at("source").as_string() != "bytes") continue;
    ++ngrams;
    EXPECT_TRUE(token.at("token").as_string().starts_with("b4:\"")) << token;
  }
  EXPECT_GT(ngrams, 0) << answer;
}

TEST_F(DaemonTest, BadRequestsGetJsonErrorsAndTheDaemonKeepsServing) {
  DaemonProcess daemon = Start({"--max-body-bytes", "4096"});
  HttpClient client(daemon.port());
  const auto expect_error = [](const HttpResponse& response, http::status status,
                               std::string_view code) {
    EXPECT_EQ(response.result(), status) << response.body();
    const json::value body = json::parse(response.body());
    EXPECT_EQ(body.at("error").at("code").as_string(), code) << response.body();
  };
  expect_error(client.Send(http::verb::post, "/train", "{oops", "application/json"),
               http::status::bad_request, "invalid_json");
  expect_error(client.Send(http::verb::post, "/train", "no label here"), http::status::bad_request,
               "invalid_argument");
  expect_error(client.Send(http::verb::post, "/classify", std::string(10000, 'a')),
               http::status::payload_too_large, "payload_too_large");
  expect_error(client.Send(http::verb::get, "/classify"), http::status::method_not_allowed,
               "method_not_allowed");
  expect_error(client.Send(http::verb::get, "/no/such/path"), http::status::not_found, "not_found");
  expect_error(client.Send(http::verb::post, "/classify", "x", "image/gif"),
               http::status::unsupported_media_type, "unsupported_media_type");
  expect_error(
      client.Send(http::verb::get, "/healthz", "", "", {{"X-Padding", std::string(20000, 'p')}}),
      http::status::request_header_fields_too_large, "header_too_large");

  const std::string no_length =
      client.RawExchange("POST /classify HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  // No Content-Length and no chunking: an empty body (RFC 9112, 6.3), so an empty message.
  EXPECT_THAT(no_length, HasSubstr("400 Bad Request"));
  EXPECT_THAT(no_length, HasSubstr("the message is empty"));
  const std::string garbage = client.RawExchange("THIS IS NOT HTTP\r\n\r\n");
  EXPECT_THAT(garbage, HasSubstr("400 Bad Request"));
  const std::string chunked_too_big = client.RawExchange(
      "POST /classify HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2000\r\n" +
      std::string(0x2000, 'a') + "\r\n0\r\n\r\n");
  EXPECT_THAT(chunked_too_big, HasSubstr("413"));

  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
}

TEST_F(DaemonTest, ExpectContinueAndKeepAlive) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string message = "review account";
  const std::string exchange = client.RawExchange(
      "POST /classify HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: " +
      std::to_string(message.size()) + "\r\nConnection: close\r\n\r\n" + message);
  EXPECT_THAT(exchange, HasSubstr("100 Continue"));
  EXPECT_THAT(exchange, HasSubstr("200 OK"));
  // Two requests on one connection.
  const std::string pipelined = client.RawExchange(
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.1\r\nHost: "
      "localhost\r\nConnection: "
      "close\r\n\r\n");
  std::size_t answers = 0;
  for (std::size_t at = pipelined.find("200 OK"); at != std::string::npos;
       at = pipelined.find("200 OK", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 2u) << pipelined;
}

// A request is read whole and intact whatever its size, on a new connection or after earlier
// requests on the same one (the read buffer grows when a request arrives, and a buffer grown for
// a large body is given back). Words the model never saw are skipped, so a body of unknown
// filler that ends in "review us your account" has exactly the log-odds of those words alone: a
// body cut short or mixed with another request's bytes would not.
TEST_F(DaemonTest, BodiesOfEverySizeAreReadWholeOnNewAndReusedConnections) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const std::string tail = "review us your account";
  const auto score_of = [](const HttpResponse& response) {
    EXPECT_EQ(response.result(), http::status::ok) << response.body();
    return json::value_to<double>(json::parse(response.body()).at("log_odds"));
  };
  const double expected = score_of(client.Send(http::verb::post, "/classify", tail));
  // Its last word weighs: a body that lost its last bytes would score otherwise.
  ASSERT_NE(score_of(client.Send(http::verb::post, "/classify", "review us your")), expected);
  // Filler words the seed never had ("zq", "zqb", ...), then the tail: `size` bytes in all.
  const auto body_of = [&](std::size_t size) {
    std::string body;
    for (std::size_t i = 0;; ++i) {
      std::string word = "zq";
      for (std::size_t n = i; n > 0; n /= 26) word += static_cast<char>('a' + n % 26);
      word.append(i % 2 == 0 ? 1 : 90, ' ');  // Few words: within the tokenizer's budget.
      if (body.size() + word.size() + tail.size() > size) break;
      body += word;
    }
    body.append(size - tail.size() - body.size(), ' ');
    return body + tail;
  };
  for (const std::size_t size :
       {std::size_t{40}, std::size_t{511}, std::size_t{512}, std::size_t{513}, std::size_t{16383},
        std::size_t{16384}, std::size_t{16385}, std::size_t{65543}, std::size_t{300000},
        std::size_t{600}}) {
    const std::string body = body_of(size);
    ASSERT_EQ(body.size(), size);
    EXPECT_EQ(score_of(client.Send(http::verb::post, "/classify", body)), expected) << size;
    HttpClient fresh(daemon.port());
    EXPECT_EQ(score_of(fresh.Send(http::verb::post, "/classify", body)), expected) << size;
  }
  // Two requests in one write, a large body first: the second is read from what is left.
  const std::string large = body_of(40000);
  const std::string both = client.RawExchange(
      "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
      std::to_string(large.size()) + "\r\n\r\n" + large +
      "POST /classify HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: " +
      std::to_string(tail.size()) + "\r\n\r\n" + tail);
  std::size_t answers = 0;
  for (std::size_t at = both.find("200 OK"); at != std::string::npos;
       at = both.find("200 OK", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 2u) << both;

  // A chunked body (whose room grows once a read is full), in chunks of 1 byte to 40 KB, with a
  // request after it in the same write.
  std::string chunked;
  for (std::size_t at = 0, chunk = 1; at < large.size(); at += chunk, chunk = chunk * 7 + 3) {
    const std::string part = large.substr(at, chunk);
    char size_line[32];
    std::snprintf(size_line, sizeof size_line, "%zx\r\n", part.size());
    chunked += size_line + part + "\r\n";
  }
  const std::string chunked_then_tail =
      HttpClient(daemon.port())
          .RawExchange(
              "POST /classify HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n" +
              chunked + "0\r\n\r\n" +
              "POST /classify HTTP/1.1\r\nHost: localhost\r\nConnection: "
              "close\r\nContent-Length: " +
              std::to_string(tail.size()) + "\r\n\r\n" + tail);
  std::vector<double> scores;
  for (std::size_t at = chunked_then_tail.find("\"log_odds\":"); at != std::string::npos;
       at = chunked_then_tail.find("\"log_odds\":", at + 1)) {
    scores.push_back(std::stod(chunked_then_tail.substr(at + 11)));
  }
  ASSERT_EQ(scores.size(), 2u) << chunked_then_tail;
  EXPECT_EQ(scores[0], expected);
  EXPECT_EQ(scores[1], expected);
}

// HEAD answers with what a GET would get but its body: a monitor's `curl -I` works, and the
// connection goes on with the next request.
TEST_F(DaemonTest, HeadAnswersTheHeadOfAGet) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  const auto stats = client.Send(http::verb::get, "/stats");
  ASSERT_EQ(stats.result(), http::status::ok);
  const std::string exchange = client.RawExchange(
      "HEAD /stats HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /classify HTTP/1.1\r\nHost: "
      "localhost\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  // The first head: a 200 with the length of the stats a GET gets, and no body after it.
  const std::string length = "Content-Length: " + std::to_string(stats.body().size()) + "\r\n";
  ASSERT_TRUE(exchange.starts_with("HTTP/1.1 200 OK\r\n")) << exchange;
  const std::size_t first_end = exchange.find("\r\n\r\n");
  ASSERT_NE(first_end, std::string::npos) << exchange;
  EXPECT_THAT(exchange.substr(0, first_end + 2), HasSubstr(length)) << exchange;
  EXPECT_THAT(exchange.substr(0, first_end), HasSubstr("application/json"));
  // Then, at once, /classify's 405 head (it takes POST only), and the GET's whole answer.
  const std::string rest = exchange.substr(first_end + 4);
  ASSERT_TRUE(rest.starts_with("HTTP/1.1 405 Method Not Allowed\r\n")) << exchange;
  EXPECT_THAT(rest, HasSubstr("Allow: POST\r\n"));
  const std::size_t second_end = rest.find("\r\n\r\n");
  ASSERT_NE(second_end, std::string::npos) << exchange;
  EXPECT_TRUE(rest.substr(second_end + 4).starts_with("HTTP/1.1 200 OK\r\n")) << exchange;
  EXPECT_THAT(rest.substr(second_end + 4), HasSubstr("\"status\":\"ok\"")) << exchange;
  // A method a GET endpoint does not take names both it allows.
  const auto deleted = client.Send(http::verb::delete_, "/stats");
  EXPECT_EQ(deleted.result(), http::status::method_not_allowed);
  EXPECT_EQ(deleted[http::field::allow], "GET, HEAD");
}

TEST_F(DaemonTest, SigtermLetsTheRequestInFlightFinishAndKeepsTheModel) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  HttpClient idle(daemon.port());
  ASSERT_EQ(idle.Send(http::verb::get, "/healthz").result(), http::status::ok);  // Stays open.

  // A train request whose body is still arriving when SIGTERM comes. "100 Continue" says that
  // the daemon has read the header, so the request is in flight before the signal is sent.
  const std::string message = "account account password";
  RawConnection in_flight(daemon.port());
  in_flight.Write("POST /train?label=spam&id=late HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                  std::to_string(message.size()) + "\r\nExpect: 100-continue\r\n\r\n");
  std::string continued;
  ASSERT_TRUE(in_flight.ReadUntil("\r\n\r\n", continued)) << continued;
  ASSERT_THAT(continued, HasSubstr("100 Continue"));
  in_flight.Write(message.substr(0, 8));
  kill(daemon.pid(), SIGTERM);
  // The rest of the body comes only once the daemon is draining.
  ASSERT_TRUE(WaitForLog(daemon, "finishing requests in flight")) << daemon.Log();
  in_flight.Write(message.substr(8));
  const std::string answer = in_flight.ReadUntilClosed();
  EXPECT_THAT(answer, HasSubstr("200 OK"));
  EXPECT_THAT(answer, HasSubstr("\"status\":\"learned\""));
  EXPECT_THAT(answer, HasSubstr("Connection: close"));
  EXPECT_EQ(daemon.Wait(), 0) << daemon.Log();
  EXPECT_THAT(daemon.Log(), HasSubstr("closing the model"));

  DaemonProcess restarted = Start();
  HttpClient again(restarted.port());
  EXPECT_EQ(again.GetJson("/stats").at("documents").as_int64(), 7);
}

TEST_F(DaemonTest, RepeatedSignalsStillEndCleanly) {
  for (const int gap_ms : {0, 5, 50}) {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    TrainSeed(client);
    kill(daemon.pid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    kill(daemon.pid(), SIGINT);
    EXPECT_EQ(daemon.Wait(), 0) << "gap " << gap_ms << " ms\n" << daemon.Log();
    DaemonProcess restarted = Start();
    HttpClient again(restarted.port());
    EXPECT_EQ(again.GetJson("/stats").at("documents").as_int64(), 6);
  }
}

TEST_F(DaemonTest, IdleConnectionsAreClosed) {
  DaemonProcess daemon = Start({"--idle-timeout-seconds", "1"});
  RawConnection idle(daemon.port());
  EXPECT_TRUE(idle.ClosedByServerWithin(std::chrono::seconds(5)));
  RawConnection slow(daemon.port());
  slow.Write("POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nabc");
  EXPECT_TRUE(slow.ClosedByServerWithin(std::chrono::seconds(5)));
  HttpClient client(daemon.port());
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
}

TEST_F(DaemonTest, AcknowledgedTrainingSurvivesKillNine) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  TrainSeed(client);
  daemon.Kill();
  DaemonProcess restarted = Start();
  HttpClient again(restarted.port());
  const json::value stats = again.GetJson("/stats");
  EXPECT_EQ(stats.at("documents").as_int64(), 6);
  EXPECT_NEAR(again.PostJson("/classify", "review account").at("probability").to_number<double>(),
              0.5154362416, 1e-9);
}

TEST_F(DaemonTest, BindFailureExitsNonZeroWithAClearMessage) {
  DaemonProcess daemon = Start();
  TempDir other;
  const ProcessExit exit = RunToExit({"--listen", "127.0.0.1:" + std::to_string(daemon.port()),
                                      "--data-dir", other.Join("model")});
  EXPECT_EQ(exit.status, 1) << exit.output;
  EXPECT_THAT(exit.output,
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(daemon.port())));
}

TEST_F(DaemonTest, SecondDaemonOnTheSameDataFolderIsRefused) {
  DaemonProcess daemon = Start();
  const ProcessExit exit = RunToExit(Args());
  EXPECT_EQ(exit.status, 1) << exit.output;
  EXPECT_THAT(exit.output, HasSubstr("lock"));
}

TEST_F(DaemonTest, CommandLine) {
  const ProcessExit help = RunToExit({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_THAT(help.output, HasSubstr("--data-dir"));
  const ProcessExit version = RunToExit({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_THAT(version.output, HasSubstr("nbspamd 0.1.0"));
  const ProcessExit unknown = RunToExit({"--no-such-flag"});
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.output, HasSubstr("no-such-flag"));
  const ProcessExit bad_alpha = RunToExit(Args({"--alpha", "0"}));
  EXPECT_EQ(bad_alpha.status, 2);
  EXPECT_THAT(bad_alpha.output, HasSubstr("alpha"));
}

}  // namespace
}  // namespace nbspamd::testing
