// Reliability: the model survives kill -9 at any moment, online backups restore to the same
// scores, `nbspamd check` verifies a data folder, bearer tokens guard training, and overload is
// answered with 503 instead of a queue. The real daemon over HTTP, as elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <random>
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
using ::testing::HasSubstr;
using ::testing::Not;

// Message number `n`: a deterministic text of 8 to 40 words from a small vocabulary, so that
// messages share tokens and every learn changes counts other learns also touch.
std::string MessageText(std::uint64_t n) {
  static const std::vector<std::string> kWords = {
      "offer", "free",    "meeting", "report",   "winner", "invoice", "lunch",  "cheap",
      "money", "project", "urgent",  "account",  "friday", "click",   "agenda", "prize",
      "loan",  "review",  "credit",  "deadline", "bonus",  "team",    "viagra", "notes"};
  std::mt19937_64 random(n * 7919 + 13);
  const std::size_t length = 8 + random() % 33;
  std::string text = "message " + std::to_string(n);
  for (std::size_t i = 0; i < length; ++i) text += " " + kWords[random() % kWords.size()];
  return text;
}

std::string LabelOf(std::uint64_t n) { return n % 3 == 0 ? "ham" : "spam"; }

class ReliabilityTest : public ::testing::Test {
 protected:
  std::vector<std::string> Args(const std::string& data_dir,
                                std::vector<std::string> extra = {}) const {
    // Every fed-back message counted (train_margin ""): the clients' order varies, and under
    // error-driven training what is counted depends on it; the counts below are exact.
    std::vector<std::string> args = {
        "--listen", "127.0.0.1:0",  "--data-dir",         data_dir,         "--threads",
        "2",        "--backup-dir", dir_.Join("backups"), "--train-margin", ""};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  DaemonProcess Start(std::vector<std::string> extra = {}) { return StartOn(data_, extra); }
  DaemonProcess StartOn(const std::string& data_dir, std::vector<std::string> extra = {}) {
    auto daemon = DaemonProcess::Start(Args(data_dir, std::move(extra)));
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  ProcessExit Check(const std::string& data_dir, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"check", "--data-dir", data_dir};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunToExit(args);
  }

  TempDir dir_;
  std::string data_ = dir_.Join("model");
};

// KILL_TEST_CYCLES sets the number of kills (25 by default, for CI) for a longer run.
TEST_F(ReliabilityTest, KillNineAtRandomMomentsLosesNoAcknowledgedTraining) {
  const char* cycles_variable = std::getenv("KILL_TEST_CYCLES");
  const int kCycles = cycles_variable != nullptr ? std::max(1, std::atoi(cycles_variable)) : 25;
  constexpr int kClients = 4;
  std::mt19937 random(20261123);
  std::vector<std::uint64_t> acknowledged;  // Message numbers whose /train answered 200.
  std::size_t verified = 0;                 // acknowledged[0, verified) were found after a kill.
  std::atomic<std::uint64_t> next_message = 0;
  for (int cycle = 0; cycle <= kCycles; ++cycle) {
    DaemonProcess daemon = Start();
    {
      // What was acknowledged before the last kill is there, learned as its label: learning it
      // again changes nothing. The last restart looks at everything once more.
      HttpClient client(daemon.port());
      const std::size_t from = cycle == kCycles ? 0 : verified;
      for (std::size_t i = from; i < acknowledged.size(); ++i) {
        const std::uint64_t n = acknowledged[i];
        const json::value answer = client.PostJson(
            "/train?label=" + LabelOf(n) + "&id=m" + std::to_string(n), MessageText(n));
        ASSERT_EQ(answer.at("status").as_string(), "unchanged") << "message " << n;
      }
      verified = acknowledged.size();
      // Documents: every acknowledged one, and at most those sent.
      const std::int64_t documents = client.GetJson("/stats").at("documents").as_int64();
      EXPECT_GE(documents, static_cast<std::int64_t>(acknowledged.size()));
      EXPECT_LE(documents, static_cast<std::int64_t>(next_message.load()));
    }
    if (cycle == kCycles) break;

    std::atomic<bool> stop = false;
    std::mutex mutex;
    std::atomic<std::size_t> acknowledged_now = 0;  // Acknowledged in this cycle.
    std::vector<std::thread> clients;
    for (int c = 0; c < kClients; ++c) {
      clients.emplace_back([&] {
        try {
          HttpClient client(daemon.port());
          while (!stop) {
            const std::uint64_t n = next_message++;
            const auto response = client.Send(
                http::verb::post, "/train?label=" + LabelOf(n) + "&id=m" + std::to_string(n),
                MessageText(n));
            if (response.result() != http::status::ok) continue;
            std::lock_guard lock(mutex);
            acknowledged.push_back(n);
            ++acknowledged_now;
          }
        } catch (const boost::system::system_error&) {
          // The daemon was killed under this client.
        }
      });
    }
    // The kill lands after a random number of acknowledged trains of this cycle, mid-stream:
    // waited for as an event, not a time.
    const std::size_t kill_after = 2 + random() % 40;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (acknowledged_now.load() < kill_after && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::size_t reached = acknowledged_now.load();
    daemon.Kill();
    stop = true;
    for (std::thread& client : clients) client.join();
    ASSERT_GE(reached, kill_after) << "cycle " << cycle << ": training stalled";

    // The folder the kill left is consistent before the daemon touches it again.
    const ProcessExit check = Check(data_);
    ASSERT_EQ(check.status, 0) << "cycle " << cycle << "\n" << check.output;
    EXPECT_THAT(check.output, HasSubstr("consistent"));
  }
  std::printf("[ kill -9 ] %d cycles, %zu acknowledged trains of %llu sent, none lost\n", kCycles,
              acknowledged.size(), static_cast<unsigned long long>(next_message.load()));
  EXPECT_GT(acknowledged.size(), static_cast<std::size_t>(kCycles));
}

TEST_F(ReliabilityTest, RestoredBackupGivesBitIdenticalScores) {
  std::vector<std::string> probes;
  for (std::uint64_t n = 1000; n < 1010; ++n) probes.push_back(MessageText(n));
  std::vector<std::string> answers_at_backup;
  std::string backup_path;
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    for (std::uint64_t n = 0; n < 60; ++n) {
      ASSERT_EQ(
          client.Send(http::verb::post, "/train?label=" + LabelOf(n), MessageText(n)).result(),
          http::status::ok);
    }
    for (const std::string& probe : probes) {
      answers_at_backup.push_back(
          WithoutScanId(client.Send(http::verb::post, "/classify", probe).body()));
    }
    const auto backup = client.Send(http::verb::post, "/admin/backup");
    ASSERT_EQ(backup.result(), http::status::ok) << backup.body();
    backup_path = std::string(json::parse(backup.body()).at("path").as_string());
    EXPECT_THAT(backup_path, HasSubstr(dir_.Join("backups/nbspamd-")));
    // Learning more afterwards changes the live model's scores, not the backup's.
    for (std::uint64_t n = 60; n < 80; ++n) {
      client.Send(http::verb::post, "/train?label=" + LabelOf(n), MessageText(n));
    }
    EXPECT_NE(WithoutScanId(client.Send(http::verb::post, "/classify", probes[0]).body()),
              answers_at_backup[0]);
    EXPECT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  DaemonProcess restored = StartOn(backup_path);
  HttpClient client(restored.port());
  for (std::size_t i = 0; i < probes.size(); ++i) {
    EXPECT_EQ(WithoutScanId(client.Send(http::verb::post, "/classify", probes[i]).body()),
              answers_at_backup[i]);
  }
  EXPECT_EQ(client.GetJson("/stats").at("documents").as_int64(), 60);
}

TEST_F(ReliabilityTest, BackupTakenWhileTrainingIsAConsistentModel) {
  std::string backup_path;
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    for (std::uint64_t n = 0; n < 30; ++n) {
      client.Send(http::verb::post, "/train?label=" + LabelOf(n), MessageText(n));
    }
    std::atomic<bool> stop = false;
    std::atomic<int> trained = 0;
    std::vector<std::thread> trainers;
    for (int t = 0; t < 3; ++t) {
      trainers.emplace_back([&, t] {
        HttpClient trainer(daemon.port());
        for (std::uint64_t n = 100 + t; n < 1000 && !stop; n += 3) {
          trainer.Send(http::verb::post, "/train?label=" + LabelOf(n), MessageText(n));
          ++trained;
        }
      });
    }
    // The backup is taken while the trainers are busy: once each has had answers.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (trained.load() < 15 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const int reached = trained.load();
    const auto backup = client.Send(http::verb::post, "/admin/backup");
    stop = true;
    for (std::thread& trainer : trainers) trainer.join();
    ASSERT_GE(reached, 15) << "training stalled";
    ASSERT_EQ(backup.result(), http::status::ok) << backup.body();
    backup_path = std::string(json::parse(backup.body()).at("path").as_string());
  }
  const ProcessExit check = Check(backup_path);
  EXPECT_EQ(check.status, 0) << check.output;
  DaemonProcess restored = StartOn(backup_path);
  HttpClient client(restored.port());
  EXPECT_GE(client.GetJson("/stats").at("documents").as_int64(), 30);
}

TEST_F(ReliabilityTest, CheckCommand) {
  {
    DaemonProcess daemon = Start();
    HttpClient client(daemon.port());
    for (std::uint64_t n = 0; n < 20; ++n) {
      client.Send(http::verb::post, "/train?label=" + LabelOf(n), MessageText(n));
    }
    EXPECT_EQ(daemon.Terminate(), 0);
  }
  const ProcessExit ok = Check(data_);
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("ledger records: 20"));
  const ProcessExit repaired = Check(data_, {"--repair"});
  EXPECT_EQ(repaired.status, 0) << repaired.output;
  const ProcessExit missing = Check(dir_.Join("nothing"));
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_THAT(missing.output, HasSubstr("no model in"));
  const ProcessExit bad_flag = Check(data_, {"--no-such-flag"});
  EXPECT_EQ(bad_flag.status, 2) << bad_flag.output;
  // Repairing needs the folder to itself.
  DaemonProcess daemon = Start();
  const ProcessExit busy = Check(data_, {"--repair"});
  EXPECT_EQ(busy.status, 1) << busy.output;
  EXPECT_THAT(busy.output, HasSubstr("lock"));
}

TEST_F(ReliabilityTest, BearerTokensGuardTrainingForgettingAndBackups) {
  const std::string file_secret = "file-secret-0123456789abcdef";
  const std::string flag_secret = "flag-secret-abcdef0123456789";
  const std::string tokens_file = dir_.Join("tokens");
  std::ofstream(tokens_file) << "# feedback from users\nfeedback:" << file_secret << "\n";
  DaemonProcess daemon =
      Start({"--auth-tokens", "mx1:" + flag_secret, "--auth-tokens-file", tokens_file});
  HttpClient client(daemon.port());
  const auto bearer = [](const std::string& secret) {
    return std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer " + secret}};
  };
  for (const char* target : {"/train?label=spam&id=a", "/forget?id=a", "/admin/backup"}) {
    const auto none = client.Send(http::verb::post, target, "cheap money");
    EXPECT_EQ(none.result(), http::status::unauthorized) << target;
    EXPECT_EQ(none[http::field::www_authenticate], "Bearer");
    EXPECT_THAT(none.body(), HasSubstr("\"unauthenticated\""));
    const auto wrong = client.Send(http::verb::post, target, "cheap money", "text/plain",
                                   bearer(flag_secret + "x"));
    EXPECT_EQ(wrong.result(), http::status::forbidden) << target;
    EXPECT_THAT(wrong.body(), HasSubstr("\"permission_denied\""));
    const auto basic = client.Send(http::verb::post, target, "cheap money", "text/plain",
                                   {{"Authorization", "Basic " + flag_secret}});
    EXPECT_EQ(basic.result(), http::status::unauthorized) << target;
  }
  EXPECT_EQ(client
                .Send(http::verb::post, "/train?label=spam&id=a", "cheap money", "text/plain",
                      bearer(flag_secret))
                .result(),
            http::status::ok);
  EXPECT_EQ(client
                .Send(http::verb::post, "/train?label=ham&id=b", "lunch on friday", "text/plain",
                      bearer(file_secret))
                .result(),
            http::status::ok);
  EXPECT_EQ(client.Send(http::verb::post, "/admin/backup", "", "text/plain", bearer(file_secret))
                .result(),
            http::status::ok);
  // Classifying, stats and health stay open unless auth_classify is set.
  EXPECT_EQ(client.Send(http::verb::post, "/classify", "cheap money").result(), http::status::ok);
  EXPECT_EQ(client.Send(http::verb::get, "/stats").result(), http::status::ok);
  EXPECT_EQ(
      client.Send(http::verb::post, "/forget?id=a", "", "text/plain", bearer(flag_secret)).result(),
      http::status::ok);
  EXPECT_EQ(daemon.Terminate(), 0);
  EXPECT_THAT(daemon.Log(), Not(HasSubstr(flag_secret)));
  EXPECT_THAT(daemon.Log(), Not(HasSubstr(file_secret)));

  DaemonProcess strict = Start({"--auth-tokens", "mx1:" + flag_secret, "--auth-classify", "true"});
  HttpClient strict_client(strict.port());
  EXPECT_EQ(strict_client.Send(http::verb::post, "/classify", "cheap money").result(),
            http::status::unauthorized);
  EXPECT_EQ(
      strict_client
          .Send(http::verb::post, "/classify", "cheap money", "text/plain", bearer(flag_secret))
          .result(),
      http::status::ok);
  EXPECT_EQ(strict_client.Send(http::verb::get, "/healthz").result(), http::status::ok);
}

TEST_F(ReliabilityTest, WhatOneSourceTrainedCanBeListedAndRolledBack) {
  const std::string mx1 = "mx1-secret-0123456789abcdef";
  const std::string users = "users-secret-0123456789abcdef";
  DaemonProcess daemon = Start({"--auth-tokens", "mx1:" + mx1 + ",users:" + users});
  HttpClient client(daemon.port());
  const auto train = [&](const std::string& secret, std::uint64_t n, const std::string& label) {
    const auto response =
        client.Send(http::verb::post, "/train?label=" + label + "&id=m" + std::to_string(n),
                    MessageText(n), "text/plain", {{"Authorization", "Bearer " + secret}});
    ASSERT_EQ(response.result(), http::status::ok) << response.body();
  };
  const auto admin = [&](http::verb method, const std::string& target) {
    const auto response =
        client.Send(method, target, "", "text/plain", {{"Authorization", "Bearer " + users}});
    EXPECT_EQ(response.result(), http::status::ok) << target << ": " << response.body();
    return json::parse(response.body());
  };
  const std::int64_t before = std::time(nullptr);
  for (std::uint64_t n = 0; n < 6; ++n) train(mx1, n, "spam");  // A poisoning source.
  for (std::uint64_t n = 10; n < 13; ++n) train(users, n, "ham");
  train(users, 5, "ham");  // Relearned by users: it is theirs now.
  const std::int64_t after = std::time(nullptr) + 1;
  const std::string window = "&since=" + std::to_string(before) + "&until=" + std::to_string(after);

  const json::value listed = admin(http::verb::get, "/admin/learned?source=mx1" + window);
  EXPECT_EQ(listed.at("count").as_int64(), 5);
  const json::value first = listed.at("messages").at(0);
  EXPECT_EQ(first.at("source").as_string(), "mx1");
  EXPECT_EQ(first.at("label").as_string(), "spam");
  EXPECT_GE(first.at("learned_at").as_int64(), before);
  EXPECT_EQ(admin(http::verb::get, "/admin/learned?source=mx1&since=" + std::to_string(after))
                .at("count")
                .as_int64(),
            0);

  const json::value rolled = admin(http::verb::post, "/admin/rollback?source=mx1" + window);
  EXPECT_EQ(rolled.at("forgotten").as_int64(), 5);
  EXPECT_EQ(admin(http::verb::get, "/admin/learned?source=mx1").at("count").as_int64(), 0);
  EXPECT_EQ(admin(http::verb::get, "/admin/learned?source=users").at("count").as_int64(), 4);
  const json::value stats = client.GetJson("/stats");
  EXPECT_EQ(stats.at("documents").as_int64(), 4);
  EXPECT_EQ(stats.at("classes").at(0).at("documents").as_int64(), 0);  // No spam left.

  // Bad selections are clear errors.
  const auto no_source = client.Send(http::verb::get, "/admin/learned", "", "text/plain",
                                     {{"Authorization", "Bearer " + users}});
  EXPECT_EQ(no_source.result(), http::status::bad_request);
  const auto bad_time = client.Send(http::verb::post, "/admin/rollback?source=mx1&since=soon", "",
                                    "text/plain", {{"Authorization", "Bearer " + users}});
  EXPECT_EQ(bad_time.result(), http::status::bad_request);
  EXPECT_THAT(bad_time.body(), HasSubstr("Unix time"));

  // The model after the rollback is exactly one that never saw mx1's messages.
  EXPECT_EQ(daemon.Terminate(), 0);
  TempDir other;
  DaemonProcess clean = StartOn(other.Join("model"));
  HttpClient clean_client(clean.port());
  for (std::uint64_t n : {10, 11, 12, 5}) {
    clean_client.Send(http::verb::post, "/train?label=ham&id=m" + std::to_string(n),
                      MessageText(n));
  }
  // Only ham is left, so /classify has nothing to compare (409): compare the counts.
  EXPECT_EQ(clean_client.GetJson("/stats").at("classes"), stats.at("classes"));
  EXPECT_EQ(clean_client.GetJson("/stats").at("vocabulary"), stats.at("vocabulary"));
}

TEST_F(ReliabilityTest, EachSourceHasItsOwnTrainingRateLimit) {
  const std::string mx1 = "mx1-secret-0123456789abcdef";
  const std::string users = "users-secret-0123456789abcdef";
  DaemonProcess daemon =
      Start({"--auth-tokens", "mx1:" + mx1 + ",users:" + users, "--train-rate-limit", "3"});
  HttpClient client(daemon.port());
  int accepted = 0;
  int limited = 0;
  for (std::uint64_t n = 0; n < 10; ++n) {
    const auto response = client.Send(http::verb::post, "/train?label=spam", MessageText(n),
                                      "text/plain", {{"Authorization", "Bearer " + mx1}});
    if (response.result() == http::status::ok) {
      ++accepted;
    } else {
      EXPECT_EQ(response.result(), http::status::too_many_requests) << response.body();
      EXPECT_THAT(response.body(), HasSubstr("\"rate_limited\""));
      EXPECT_EQ(response[http::field::retry_after], "1");
      ++limited;
    }
  }
  // A burst of 3, and at most a few more refilled while the requests ran.
  EXPECT_GE(accepted, 3);
  EXPECT_LT(accepted, 10);
  EXPECT_EQ(accepted + limited, 10);
  // Another source is not held back, and classifying is not limited.
  EXPECT_EQ(client
                .Send(http::verb::post, "/train?label=ham", MessageText(50), "text/plain",
                      {{"Authorization", "Bearer " + users}})
                .result(),
            http::status::ok);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(client.Send(http::verb::post, "/classify", MessageText(60)).result(),
              http::status::ok);
  }
}

TEST_F(ReliabilityTest, BadTokenSettingsStopStartUpWithoutShowingTheSecret) {
  const ProcessExit short_secret = RunToExit(Args(data_, {"--auth-tokens", "mx1:tooshort"}));
  EXPECT_EQ(short_secret.status, 2);
  EXPECT_THAT(short_secret.output, HasSubstr("16 to 256"));
  EXPECT_THAT(short_secret.output, Not(HasSubstr("tooshort")));
  const ProcessExit twice =
      RunToExit(Args(data_, {"--auth-tokens", "a:0123456789abcdef0,b:0123456789abcdef0"}));
  EXPECT_EQ(twice.status, 2);
  EXPECT_THAT(twice.output, HasSubstr("same secret"));
  const ProcessExit no_file = RunToExit(Args(data_, {"--auth-tokens-file", dir_.Join("none")}));
  EXPECT_EQ(no_file.status, 2);
  EXPECT_THAT(no_file.output, HasSubstr("cannot read"));
}

TEST_F(ReliabilityTest, ListeningBeyondLoopbackWithoutTokensWarnsLoudly) {
  auto daemon = DaemonProcess::Start({"--listen", "0.0.0.0:0", "--data-dir", data_});
  ASSERT_TRUE(daemon.has_value()) << daemon.error();
  EXPECT_EQ(daemon->Terminate(), 0);
  EXPECT_THAT(daemon->Log(), HasSubstr("WARNING"));
  EXPECT_THAT(daemon->Log(), HasSubstr("auth_tokens"));
}

TEST_F(ReliabilityTest, BeyondMaxInFlightRequestsGet503AtOnce) {
  DaemonProcess daemon = Start({"--max-in-flight", "1"});
  // Messages large enough that classifying one takes a while, so that requests overlap.
  std::string large;
  for (std::uint64_t n = 0; large.size() < (1u << 20); ++n) large += MessageText(n) + "\n";
  {
    HttpClient client(daemon.port());
    client.Send(http::verb::post, "/train?label=spam", MessageText(1));
    client.Send(http::verb::post, "/train?label=ham", MessageText(2));
  }
  std::atomic<int> ok = 0;
  std::atomic<int> overloaded = 0;
  std::atomic<int> other = 0;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      HttpClient client(daemon.port());
      for (int i = 0; i < 50 && overloaded == 0; ++i) {
        const auto response = client.Send(http::verb::post, "/classify", large);
        if (response.result() == http::status::ok) {
          ++ok;
        } else if (response.result() == http::status::service_unavailable &&
                   response.body().find("\"overloaded\"") != std::string::npos &&
                   response[http::field::retry_after] == "1") {
          ++overloaded;
        } else {
          ++other;
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  EXPECT_GT(overloaded, 0);
  EXPECT_GT(ok, 0);
  EXPECT_EQ(other, 0);
  // Health checks are never refused, and the daemon serves again once the load is gone.
  HttpClient client(daemon.port());
  EXPECT_EQ(client.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_EQ(client.Send(http::verb::post, "/classify", MessageText(3)).result(), http::status::ok);
}

// Bytes in flight are bounded as requests are: a body that would take the bytes being read or
// handled beyond max_in_flight_bytes gets 503 with Retry-After before it is read (so a burst of
// large uploads cannot grow memory without bound); probes are never refused; once the bytes
// are answered, the same request is served.
TEST_F(ReliabilityTest, BeyondMaxInFlightBytesABodyGets503BeforeItIsRead) {
  DaemonProcess daemon = Start({"--max-in-flight-bytes", "1048576"});
  {
    HttpClient client(daemon.port());
    client.Send(http::verb::post, "/train?label=spam", MessageText(1));
    client.Send(http::verb::post, "/train?label=ham", MessageText(2));
  }
  std::string body;
  for (std::uint64_t n = 0; body.size() < 700'000; ++n) body += MessageText(n) + "\n";
  const std::string head = "POST /classify HTTP/1.1\r\nHost: localhost\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n";
  // A slow sender: its header is in, so its 700 KB count, and it sends only part of them.
  RawConnection slow(daemon.port());
  slow.Write(head + body.substr(0, 1000));
  // Its header is read on the daemon's own time: the gauge says when its bytes count (a request
  // sent before could be admitted first, and the slow sender refused instead).
  HttpClient client(daemon.port());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (MetricValue(client, "nbspamd_http_body_bytes_in_flight") !=
             static_cast<double>(body.size()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(MetricValue(client, "nbspamd_http_body_bytes_in_flight"),
            static_cast<double>(body.size()));
  const HttpResponse refused = client.Send(http::verb::post, "/classify", body);
  EXPECT_EQ(refused.result(), http::status::service_unavailable) << refused.body();
  EXPECT_NE(refused.body().find("\"overloaded\""), std::string::npos) << refused.body();
  EXPECT_NE(refused.body().find("max_in_flight_bytes"), std::string::npos) << refused.body();
  EXPECT_EQ(refused[http::field::retry_after], "1");
  HttpClient probe(daemon.port());
  EXPECT_EQ(probe.Send(http::verb::get, "/healthz").result(), http::status::ok);
  EXPECT_EQ(probe.Send(http::verb::post, "/classify", MessageText(3)).result(), http::status::ok)
      << "a small body still fits";
  // The slow sender finishes: answered, and its bytes are free again.
  slow.Write(body.substr(1000));
  std::string answer;
  ASSERT_TRUE(slow.ReadUntil("\r\n\r\n", answer)) << answer;
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  HttpClient after(daemon.port());
  EXPECT_EQ(MetricValue(after, "nbspamd_http_body_bytes_in_flight"), 0);
  // A sender that leaves halfway frees its bytes too.
  {
    RawConnection gone(daemon.port());
    gone.Write(head + body.substr(0, 1000));
    const auto admitted = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (MetricValue(after, "nbspamd_http_body_bytes_in_flight") == 0 &&
           std::chrono::steady_clock::now() < admitted) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(MetricValue(after, "nbspamd_http_body_bytes_in_flight"),
              static_cast<double>(body.size()));
  }
  const auto freed = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (MetricValue(after, "nbspamd_http_body_bytes_in_flight") != 0 &&
         std::chrono::steady_clock::now() < freed) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(MetricValue(after, "nbspamd_http_body_bytes_in_flight"), 0);
  EXPECT_EQ(after.Send(http::verb::post, "/classify", body).result(), http::status::ok);
}

}  // namespace
}  // namespace nbspamd::testing
