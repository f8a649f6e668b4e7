// milter_load: milter throughput and latency, as an MTA sees them. K connections (one thread
// each, milter/testing/mta_client.h) negotiate as Postfix does and send a fixed number of
// messages between them, one at a time per connection; a message's latency runs from its first
// packet (MAIL's macros) to the final end-of-body reply. Prints, per K, messages/s, p50, p99 and
// the largest latency, and how the messages ended.
//
//   milter_load --connections 1,8,32 --messages 4000        # an in-process listener
//   milter_load --connect inet:127.0.0.1:8891 --messages 4000  # a running milter (nbspamd)
//   milter_load --connect inet:127.0.0.1:8891 --http 127.0.0.1:7830   # and the same over HTTP
//
// With --http, each K is also run as POST /classify?id=<Message-ID> of the same messages (header
// fields, a blank line, the body) against that daemon's HTTP port (bench/perf/load_client), so
// that the two front ends are compared on the same model in one run.
//
// Without --connect the listener runs in this process (on --io-threads Asio threads) in front of
// a deterministic backend that answers at once (spam when the body says "viagra"), so what is
// measured is the protocol, the session and the sockets: the ceiling a real backend lowers. Every
// --spam-every-th message is spam. Not a test: nothing is asserted beyond every message getting a
// final reply (a message without one is counted as failed, and the exit status is 1).
#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/perf/load_client/http_load.h"
#include "milter/listener.h"
#include "milter/protocol.h"
#include "milter/testing/fake_backend.h"
#include "milter/testing/mta_client.h"

namespace nbspamd::bench {
namespace {

using Clock = std::chrono::steady_clock;
using milter::testing::MtaClient;
using milter::testing::TestMessage;

struct Settings {
  std::optional<std::string> connect;
  std::optional<std::string> http;  // HOST:PORT of the daemon's HTTP listener.
  std::vector<std::size_t> connections = {1, 8, 32};
  std::size_t messages = 2000;
  std::size_t body_bytes = 2000;
  std::size_t spam_every = 4;
  unsigned io_threads = 2;
};

[[noreturn]] void Usage(const std::string& problem) {
  std::fprintf(stderr,
               "milter_load: %s\n"
               "usage: milter_load [--connect unix:PATH|inet:HOST:PORT] [--connections 1,8,32]\n"
               "  [--messages 2000] [--body-bytes 2000] [--spam-every 4] [--io-threads 2]\n",
               problem.c_str());
  std::exit(2);
}

std::size_t Number(const std::string& text, const char* flag) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value == 0) {
    Usage(std::string(flag) + " needs a positive whole number");
  }
  return static_cast<std::size_t>(value);
}

Settings Parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--connect") {
      settings.connect = value;
    } else if (flag == "--connections") {
      settings.connections.clear();
      for (std::size_t start = 0; start <= value.size();) {
        const std::size_t comma = std::min(value.find(',', start), value.size());
        settings.connections.push_back(Number(value.substr(start, comma - start), "--connections"));
        start = comma + 1;
      }
    } else if (flag == "--http") {
      settings.http = value;
    } else if (flag == "--messages") {
      settings.messages = Number(value, "--messages");
    } else if (flag == "--body-bytes") {
      settings.body_bytes = Number(value, "--body-bytes");
    } else if (flag == "--spam-every") {
      settings.spam_every = Number(value, "--spam-every");
    } else if (flag == "--io-threads") {
      settings.io_threads = static_cast<unsigned>(Number(value, "--io-threads"));
    } else {
      Usage("unknown option " + flag);
    }
  }
  return settings;
}

// Answers at once, keeping nothing (FakeBackend keeps every call, which a long run cannot).
class InstantBackend : public milter::MilterBackend {
 public:
  void ClassifyAsync(std::string message, milter::MessageContext,
                     milter::ClassifyDone done) override {
    done(milter::testing::FakeBackend::Verdict(message));
  }
};

TestMessage MakeMessage(std::size_t index, const Settings& settings) {
  // Appended rather than concatenated: GCC 12 warns (-Wrestrict) about "literal" + std::string.
  const std::string number = std::to_string(index);
  TestMessage message;
  message.queue_id.append("Q").append(number);
  std::string id;
  id.append("<").append(number).append("@load.example>");
  std::string subject;
  subject.append("load message ").append(number);
  message.headers = {{"Message-ID", id}, {"From", "sender@example.org"}, {"Subject", subject}};
  const bool spam = settings.spam_every != 0 && index % settings.spam_every == 0;
  std::string body = spam ? "cheap viagra " : "";
  static constexpr const char* kWords[] = {"meeting", "tomorrow", "report", "lunch",  "project",
                                           "numbers", "review",   "thanks", "please", "draft"};
  for (std::size_t w = index; body.size() < settings.body_bytes; ++w) {
    body += kWords[w % std::size(kWords)];
    body += (w % 12 == 11) ? "\r\n" : " ";
  }
  message.body = body + "\r\n";
  return message;
}

struct RunResult {
  std::vector<double> latencies_ms;
  std::size_t rejected = 0;
  std::size_t continued = 0;
  std::size_t failed = 0;
  double seconds = 0;
};

RunResult Run(const milter::MilterAddress& address, std::size_t connections,
              const Settings& settings) {
  std::vector<TestMessage> messages;
  for (std::size_t i = 0; i < settings.messages; ++i) messages.push_back(MakeMessage(i, settings));
  RunResult result;
  std::mutex mutex;
  std::atomic<std::size_t> next{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < connections; ++c) {
    threads.emplace_back([&] {
      std::vector<double> latencies;
      std::size_t rejected = 0, continued = 0, failed = 0;
      auto client = MtaClient::Connect(address);
      bool ok = client.has_value() && client->Negotiate().has_value();
      while (true) {
        const std::size_t index = next.fetch_add(1);
        if (index >= messages.size()) break;
        if (!ok) {
          ++failed;
          continue;
        }
        const auto sent = Clock::now();
        auto replies = client->SendMessage(messages[index]);
        if (!replies) {
          ++failed;
          ok = false;  // The connection is gone; count the rest of its share as failed.
          continue;
        }
        latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - sent).count());
        if (replies->back().code == milter::kReplyReplyCode) {
          ++rejected;
        } else {
          ++continued;
        }
      }
      std::lock_guard lock(mutex);
      result.latencies_ms.insert(result.latencies_ms.end(), latencies.begin(), latencies.end());
      result.rejected += rejected;
      result.continued += continued;
      result.failed += failed;
    });
  }
  for (auto& thread : threads) thread.join();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(result.latencies_ms.begin(), result.latencies_ms.end());
  return result;
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const std::size_t index =
      std::min(sorted.size() - 1, static_cast<std::size_t>(p * static_cast<double>(sorted.size())));
  return sorted[index];
}

int Main(int argc, char** argv) {
  const Settings settings = Parse(argc, argv);
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::vector<std::thread> io_threads;
  InstantBackend backend;
  milter::MilterCounters counters;
  std::shared_ptr<milter::MilterListener> listener;
  milter::MilterAddress address;
  if (settings.connect) {
    auto parsed = milter::ParseMilterAddress(*settings.connect);
    if (!parsed) Usage(parsed.error().message);
    address = *parsed;
  } else {
    milter::ConnectionContext context;
    context.conversation.reject_score = 5.0;
    context.backend = &backend;
    context.counters = &counters;
    auto created = milter::MilterListener::Create(
        io, *milter::ParseMilterAddress("inet:127.0.0.1:0"), std::move(context));
    if (!created) {
      std::fprintf(stderr, "milter_load: %s\n", created.error().message.c_str());
      return 1;
    }
    listener = *created;
    listener->Run();
    for (unsigned t = 0; t < settings.io_threads; ++t) io_threads.emplace_back([&io] { io.run(); });
    address = listener->LocalAddress();
  }
  std::printf("milter_load: %zu messages of ~%zu body bytes, 1 in %zu spam, against %s\n",
              settings.messages, settings.body_bytes, settings.spam_every,
              settings.connect ? settings.connect->c_str()
                               : ("an in-process listener (" + std::to_string(settings.io_threads) +
                                  " I/O threads)")
                                     .c_str());
  std::printf("%11s %10s %9s %9s %9s %9s %9s %7s\n", "connections", "messages/s", "p50 ms",
              "p99 ms", "max ms", "continued", "rejected", "failed");
  std::size_t failed = 0;
  for (const std::size_t k : settings.connections) {
    const RunResult result = Run(address, k, settings);
    const double rate = static_cast<double>(result.latencies_ms.size()) / result.seconds;
    std::printf("%11zu %10.0f %9.3f %9.3f %9.3f %9zu %9zu %7zu\n", k, rate,
                Percentile(result.latencies_ms, 0.50), Percentile(result.latencies_ms, 0.99),
                result.latencies_ms.empty() ? 0.0 : result.latencies_ms.back(), result.continued,
                result.rejected, result.failed);
    std::fflush(stdout);
    failed += result.failed;
    if (settings.http) {
      const std::size_t colon = settings.http->rfind(':');
      if (colon == std::string::npos) Usage("--http needs HOST:PORT");
      bench::LoadOptions options;
      options.host = settings.http->substr(0, colon);
      options.port = static_cast<std::uint16_t>(Number(settings.http->substr(colon + 1), "--http"));
      options.connections = k;
      options.requests = settings.messages;
      options.threads = settings.io_threads;
      auto http = bench::RunLoad(options, [&settings](std::size_t i) {
        const TestMessage message = MakeMessage(i, settings);
        std::string text;
        std::string id;
        for (const auto& [name, value] : message.headers) {
          text.append(name).append(": ").append(value).append("\r\n");
          if (name == "Message-ID") id = value;
        }
        text.append("\r\n").append(message.body);
        // '<' and '>' percent-encoded; the rest of these ids is safe in a query.
        std::string query = "%3C" + id.substr(1, id.size() - 2) + "%3E";
        return bench::LoadRequest{"/classify?id=" + query, std::move(text)};
      });
      if (!http) {
        std::fprintf(stderr, "milter_load: http: %s\n", http.error().c_str());
        return 1;
      }
      std::printf("%6zu http %10.0f %9.3f %9.3f %9.3f %9zu %9s %7zu\n", k, http->Throughput(),
                  http->LatencyMs(0.50), http->LatencyMs(0.99),
                  http->latencies_ms.empty() ? 0.0 : http->latencies_ms.back(), http->ok, "-",
                  http->failed);
      std::fflush(stdout);
      failed += http->failed;
    }
  }
  if (listener) {
    std::printf("listener: %llu connections, %llu messages, %llu rejected, %llu protocol errors\n",
                static_cast<unsigned long long>(counters.connections.load()),
                static_cast<unsigned long long>(counters.messages.load()),
                static_cast<unsigned long long>(counters.rejected.load()),
                static_cast<unsigned long long>(counters.protocol_errors.load()));
    listener->Stop();
  }
  work.reset();
  for (auto& thread : io_threads) thread.join();
  return failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace nbspamd::bench

int main(int argc, char** argv) { return nbspamd::bench::Main(argc, argv); }
