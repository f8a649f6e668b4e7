// Group commit through the real daemon: many clients train at once, the daemon is killed with
// SIGKILL right after the last acknowledgement, and every acknowledged message must be in the
// model after a restart, exactly as if the messages had been learned one by one.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/beast/http/status.hpp>
#include <boost/json.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

struct Message {
  std::string id;
  std::string label;
  std::string text;
};

// Message i of client c: a few shared words and two of its own, so counts and |V| both move.
Message MakeMessage(int client, int i) {
  static const char* const kWords[] = {"cheap", "lunch", "offer", "meeting", "prize", "report"};
  std::string own = "c";
  own.append(std::to_string(client)).append("x").append(std::to_string(i));
  Message message;
  message.id.append("id-").append(own);
  message.label = (client + i) % 3 == 0 ? "ham" : "spam";
  message.text.append(kWords[i % 6]).append(" ").append(kWords[(i * 5 + client) % 6]);
  message.text.append(" word").append(own).append(" other").append(own);
  message.text.append(" ").append(kWords[client % 6]);
  return message;
}

// count=all: every message counted whatever the order the group commit applies them in (under
// error-driven training what is counted depends on that order), so that the model equals the
// one-by-one reference.
std::string Target(const Message& message) {
  return "/train?count=all&label=" + message.label + "&id=" + message.id;
}

TEST(GroupCommitTest, EveryAcknowledgedTrainSurvivesKillNineUnderConcurrentLoad) {
  constexpr int kClients = 16;
  constexpr int kMessagesPerClient = 40;
  constexpr int kKillAfter = kClients * kMessagesPerClient * 3 / 4;
  TempDir dir;
  DaemonProcess daemon = StartTestDaemon(dir.Join("model"));

  // Clients train until the daemon is killed; the kill comes once kKillAfter trains are
  // acknowledged, with the others still in flight.
  std::mutex mutex;
  std::vector<Message> acknowledged;
  std::vector<Message> in_flight;  // Sent, not acknowledged: may or may not have been written.
  std::atomic<int> acknowledged_count{0};
  std::atomic<int> clients_done{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      struct Done {
        std::atomic<int>& count;
        ~Done() { ++count; }
      } done{clients_done};
      HttpClient client(daemon.port());
      for (int i = 0; i < kMessagesPerClient; ++i) {
        const Message message = MakeMessage(c, i);
        try {
          const auto response = client.Send(http::verb::post, Target(message), message.text);
          if (response.result() != http::status::ok) {
            ADD_FAILURE() << response.body();
            return;
          }
          const json::value body = json::parse(response.body());
          EXPECT_EQ(body.at("status").as_string(), "learned");
        } catch (const std::exception&) {
          std::lock_guard lock(mutex);
          in_flight.push_back(message);
          return;  // The daemon was killed before it acknowledged this one.
        }
        std::lock_guard lock(mutex);
        acknowledged.push_back(message);
        ++acknowledged_count;
      }
    });
  }
  while (acknowledged_count.load() < kKillAfter && clients_done.load() < kClients) {
    std::this_thread::yield();
  }
  daemon.Kill();
  for (std::thread& client : clients) client.join();
  ASSERT_GE(acknowledged.size(), std::size_t{kKillAfter});

  DaemonProcess restarted = StartTestDaemon(dir.Join("model"));
  HttpClient client(restarted.port());
  // Every acknowledged message is in the ledger under its label: learning it again is a no-op.
  for (const Message& message : acknowledged) {
    const json::value body = client.PostJson(Target(message), message.text);
    ASSERT_EQ(body.at("status").as_string(), "unchanged") << message.id;
  }
  // A message in flight at the kill may have been written or not; after learning it again it
  // is there either way.
  for (const Message& message : in_flight) {
    const json::value body = client.PostJson(Target(message), message.text);
    EXPECT_NE(body.at("status").as_string(), "relearned") << message.id;
  }

  // The same messages learned one by one by another daemon give exactly the same model.
  TempDir reference_dir;
  DaemonProcess reference = StartTestDaemon(reference_dir.Join("model"));
  HttpClient one_by_one(reference.port());
  for (const std::vector<Message>* messages : {&acknowledged, &in_flight}) {
    for (const Message& message : *messages) {
      const auto response = one_by_one.Send(http::verb::post, Target(message), message.text);
      ASSERT_EQ(response.result(), http::status::ok) << response.body();
    }
  }
  const json::value stats = client.GetJson("/stats");
  const json::value expected = one_by_one.GetJson("/stats");
  EXPECT_EQ(stats.at("classes"), expected.at("classes"));
  EXPECT_EQ(stats.at("vocabulary"), expected.at("vocabulary"));
  EXPECT_EQ(stats.at("documents").as_int64(),
            static_cast<std::int64_t>(acknowledged.size() + in_flight.size()));
  const std::string probe = "cheap lunch offer prize";
  EXPECT_EQ(client.PostJson("/classify", probe).at("probability"),
            one_by_one.PostJson("/classify", probe).at("probability"));
}

}  // namespace
}  // namespace nbspamd::testing
