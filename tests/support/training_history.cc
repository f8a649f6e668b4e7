#include "tests/support/training_history.h"

#include <gtest/gtest.h>

#include <boost/beast/http/status.hpp>
#include <boost/beast/http/verb.hpp>
#include <boost/json.hpp>
#include <iterator>
#include <stdexcept>
#include <string_view>

#include "tests/support/daemon_process.h"
#include "tests/support/message_pool.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

const std::string& AnyLearnedId(std::mt19937& rng, const ClientRun& run) {
  auto it = run.learned.begin();
  std::advance(it, std::uniform_int_distribution<std::size_t>(0, run.learned.size() - 1)(rng));
  return it->first;
}

}  // namespace

Operation PickOperation(std::mt19937& rng, int roll, const OperationMix& mix, int client_index,
                        int ids, int pool_size, const ClientRun& run) {
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> any_text(0, pool_size - 1);
  Operation op;
  const std::string random_id =
      IdOf(client_index, std::uniform_int_distribution<int>(0, ids - 1)(rng));
  if (roll < mix.train || (roll < mix.relearn && run.learned.empty())) {
    op.kind = Operation::Kind::kTrain;
    op.id = random_id;
    op.label = percent(rng) < 50 ? "spam" : "ham";
    op.text = any_text(rng);
  } else if (roll < mix.relearn) {
    op.kind = Operation::Kind::kTrain;
    op.id = AnyLearnedId(rng, run);
    const std::string& label = run.learned.at(op.id);
    op.label = label == "spam" ? "ham" : "spam";
    op.text = percent(rng) < 75 ? run.learned_text.at(op.id) : any_text(rng);
  } else {
    op.kind = Operation::Kind::kForget;
    op.id = random_id;
    if (!run.learned.empty() && percent(rng) < 70) op.id = AnyLearnedId(rng, run);
  }
  return op;
}

ExpectedAnswer Expect(const ClientRun& run, const Operation& op) {
  const auto known = run.learned.find(op.id);
  if (op.kind == Operation::Kind::kTrain) {
    return {200, known == run.learned.end()  ? "learned"
                 : known->second == op.label ? "unchanged"
                                             : "relearned"};
  }
  if (known == run.learned.end()) return {404, ""};
  return {200, "forgotten"};
}

void Acknowledge(ClientRun& run, Operation op) {
  if (op.kind == Operation::Kind::kTrain) {
    // A relearn keeps the tokens first learned; so does a retried train whose first attempt was
    // applied (it answers "unchanged").
    if (!run.learned.contains(op.id)) run.learned_text[op.id] = op.text;
    run.learned[op.id] = op.label;
  } else {
    // A 404 forget of an unknown id changes nothing; it is kept so that the replay agrees.
    run.learned.erase(op.id);
    run.learned_text.erase(op.id);
  }
  run.acknowledged.push_back(std::move(op));
}

HttpResponse Perform(HttpClient& client, const std::vector<std::string>& pool,
                     const Operation& op) {
  if (op.kind == Operation::Kind::kTrain) {
    // count=all: every learn counted, so that the expected counts are exact (the regime has tests
    // of its own).
    return client.Send(http::verb::post,
                       "/train?count=all&label=" + op.label + "&id=" + QueryEncode(op.id),
                       pool.at(static_cast<std::size_t>(op.text)));
  }
  return client.Send(http::verb::post, "/forget?id=" + QueryEncode(op.id));
}

std::string StatusField(const HttpResponse& response) {
  boost::system::error_code ec;
  const json::value body = json::parse(response.body(), ec);
  if (ec || !body.is_object()) return "";
  const json::value* status = body.as_object().if_contains("status");
  return status != nullptr && status->is_string() ? std::string(status->as_string()) : "";
}

std::size_t CollectRuns(const std::vector<ClientRun>& runs,
                        std::map<std::string, std::int64_t>& documents) {
  std::size_t acknowledged = 0;
  for (const ClientRun& run : runs) {
    for (const std::string& failure : run.failures) ADD_FAILURE() << failure;
    acknowledged += run.acknowledged.size();
    for (const auto& [id, label] : run.learned) ++documents[label];
  }
  return acknowledged;
}

std::vector<std::string> Probes(const std::vector<std::string>& pool, std::uint32_t seed) {
  std::vector<std::string> probes;
  for (std::size_t i = 0; i < pool.size(); i += 15) probes.push_back(pool[i]);
  for (const std::string& unseen : MakeMessages(seed, 6)) probes.push_back(unseen);
  probes.push_back("café lunch meeting prize ÜBER");
  return probes;
}

ModelView Observe(unsigned short port, const std::vector<std::string>& probes) {
  HttpClient client(port);
  ModelView view;
  const auto stats = client.Send(http::verb::get, "/stats");
  EXPECT_EQ(stats.result(), http::status::ok) << stats.body();
  view.stats = stats.body();
  for (const std::string& probe : probes) {
    const auto answer = client.Send(http::verb::post, "/classify?explain=10", probe);
    EXPECT_EQ(answer.result(), http::status::ok) << answer.body();
    view.answers.push_back(WithoutScanId(answer.body()));
  }
  return view;
}

void ExpectSameModel(const ModelView& expected, const ModelView& actual, const std::string& what) {
  EXPECT_EQ(actual.stats, expected.stats) << what << ": /stats differs";
  ASSERT_EQ(actual.answers.size(), expected.answers.size());
  for (std::size_t i = 0; i < expected.answers.size(); ++i) {
    EXPECT_EQ(actual.answers[i], expected.answers[i]) << what << ": probe " << i << " differs";
  }
}

ModelView WithoutCalibration(ModelView view) {
  static constexpr std::string_view kField = "\"spam_confidence\":";
  view.stats = WithoutFeedback(view.stats);  // Also read from held-out scores.
  for (std::string& answer : view.answers) {
    const std::size_t begin = answer.find(kField);
    if (begin == std::string::npos) continue;
    // The value is a number or null: it ends at the next ',' (or at the object's end).
    std::size_t end = answer.find_first_of(",}", begin + kField.size());
    if (end != std::string::npos && answer[end] == ',') ++end;
    answer.erase(begin, end - begin);
  }
  return view;
}

void ExpectDocuments(const ModelView& view, std::map<std::string, std::int64_t> documents) {
  const json::value stats = json::parse(view.stats);
  for (const json::value& c : stats.at("classes").as_array()) {
    const std::string label(c.at("label").as_string());
    EXPECT_EQ(c.at("documents").as_int64(), documents[label]) << label;
  }
}

ModelView SerialReplay(const std::vector<std::string>& pool, const std::vector<ClientRun>& runs,
                       const std::vector<std::string>& probes, bool check_answers) {
  TempDir dir;
  auto replay = DaemonProcess::Start(
      {"--listen", "127.0.0.1:0", "--data-dir", dir.Join("model"), "--threads", "2"});
  if (!replay) throw std::runtime_error(replay.error());
  HttpClient client(replay->port());
  for (std::size_t c = 0; c < runs.size(); ++c) {
    for (const Operation& op : runs[c].acknowledged) {
      const HttpResponse response = Perform(client, pool, op);
      if (!check_answers || op.retried) continue;
      EXPECT_EQ(response.result_int(), op.http_status)
          << "replay of client " << c << " on " << op.id << ": " << response.body();
      EXPECT_EQ(op.http_status == 200 ? StatusField(response) : "", op.status)
          << "replay of client " << c << " on " << op.id << ": " << response.body();
    }
  }
  ModelView view = Observe(replay->port(), probes);
  EXPECT_EQ(replay->Terminate(), 0) << replay->Log();
  return view;
}

}  // namespace nbspamd::testing
