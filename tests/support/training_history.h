// TrainingHistory: the bookkeeping of the tests in which many clients train one model at once
// (one daemon, or a cluster). Each client owns its ids, so the order of its own acknowledged
// operations fixes what its ids end up as: replaying every client's acknowledged operations, one
// client after another, on a fresh standalone daemon must build exactly the same model. A model
// is compared from outside, byte for byte: /stats and the /classify?explain=10 answers of a fixed
// set of probe messages.
//
// spam_confidence and the feedback part of /stats' verdict_thresholds are the exception: they
// come from each message's held-out score, the score of the model just before the message was
// learned, so they depend on the order of learning, and a replay one client after another
// learns in another order than the concurrent run did. Comparisons with such a replay leave
// them out (WithoutCalibration); a restart, a backup or another daemon of a cluster (which
// applies the same stream in the same order) must agree on them too.
#ifndef NBSPAMD_TESTS_SUPPORT_TRAINING_HISTORY_H_
#define NBSPAMD_TESTS_SUPPORT_TRAINING_HISTORY_H_

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/support/http_client.h"

namespace nbspamd::testing {

// One operation that changes (or, for a 404 forget, does not change) the model.
struct Operation {
  enum class Kind { kTrain, kForget } kind = Kind::kTrain;
  std::string id;
  std::string label;  // kTrain.
  int text = -1;      // kTrain: index into the test's message pool.
  int http_status = 200;
  std::string status;    // The "status" field of a 200 answer.
  bool retried = false;  // Its first attempt got no answer: it may have been applied twice.
};

// One client's run: its acknowledged operations in order, and what its ids are by its history.
struct ClientRun {
  std::vector<Operation> acknowledged;
  std::map<std::string, std::string> learned;  // id → label.
  std::map<std::string, int> learned_text;     // id → the pool text it was first learned with.
  int classified = 0;
  int retries = 0;
  std::vector<std::string> failures;
};

// How a client picks its next change from a roll in [0, 100): below `train` it trains one of its
// ids (also below `relearn` while it has learned nothing), below `relearn` it relearns a learned
// id as the other label, else it forgets an id (mostly a learned one).
struct OperationMix {
  int train = 55;
  int relearn = 75;
};

// The next operation of client `client_index`, whose ids are IdOf(client_index, 0..ids - 1).
[[nodiscard]] Operation PickOperation(std::mt19937& rng, int roll, const OperationMix& mix,
                                      int client_index, int ids, int pool_size,
                                      const ClientRun& run);

// What the daemon must answer to `op` after the client's history so far.
struct ExpectedAnswer {
  int http_status = 200;
  std::string status;  // "" for a 404.
};
[[nodiscard]] ExpectedAnswer Expect(const ClientRun& run, const Operation& op);

// Adds `op`, acknowledged, to the client's history.
void Acknowledge(ClientRun& run, Operation op);

// Sends `op`: POST /train?label=&id= with the pool text, or POST /forget?id=.
[[nodiscard]] HttpResponse Perform(HttpClient& client, const std::vector<std::string>& pool,
                                   const Operation& op);

// The "status" field of an answer ("" when the body has none).
[[nodiscard]] std::string StatusField(const HttpResponse& response);

// Reports the runs' failures as test failures, adds the documents each label must hold to
// `documents`, and returns how many operations were acknowledged.
std::size_t CollectRuns(const std::vector<ClientRun>& runs,
                        std::map<std::string, std::int64_t>& documents);

// A daemon's model as seen from outside.
struct ModelView {
  std::string stats;
  std::vector<std::string> answers;  // /classify?explain=10 of each probe, in order.
};

// Every 15th pool message, 6 unseen ones made from `seed`, and one with accents.
[[nodiscard]] std::vector<std::string> Probes(const std::vector<std::string>& pool,
                                              std::uint32_t seed);
[[nodiscard]] ModelView Observe(unsigned short port, const std::vector<std::string>& probes);
void ExpectSameModel(const ModelView& expected, const ModelView& actual, const std::string& what);
// `view` with the "spam_confidence" field taken out of every answer, and /stats without what the
// recent feedback gives (WithoutFeedback): both come from held-out scores.
[[nodiscard]] ModelView WithoutCalibration(ModelView view);
// Each label's document count in the view's /stats must be `documents`'.
void ExpectDocuments(const ModelView& view, std::map<std::string, std::int64_t> documents);

// Replays the runs' acknowledged operations one client after another on a fresh standalone
// daemon and returns its model. With `check_answers`, each answer (but a retried operation's)
// must be the one first given.
[[nodiscard]] ModelView SerialReplay(const std::vector<std::string>& pool,
                                     const std::vector<ClientRun>& runs,
                                     const std::vector<std::string>& probes, bool check_answers);

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_TRAINING_HISTORY_H_
