#include "client/bulk_command.h"

#include <atomic>
#include <boost/beast/http/verb.hpp>
#include <boost/json/parse.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "client/bounded_queue.h"
#include "client/bulk_tally.h"
#include "client/exit_codes.h"
#include "client/http_connection.h"
#include "client/message_source.h"
#include "client/progress.h"

namespace nbspamd::client {
namespace http = boost::beast::http;
namespace {

constexpr int kAttempts = 5;  // For 429 and 503 answers.

// What a worker makes of one message.
struct SendResult {
  Outcome outcome = Outcome::kFailed;
  std::string reason;           // For kFailed.
  std::optional<int> stop_run;  // The exit status, when the whole run must stop.
};

SendResult Succeeded(Outcome outcome) { return SendResult{outcome, "", std::nullopt}; }

SendResult Failed(std::string reason, std::optional<int> stop_run = std::nullopt) {
  return SendResult{Outcome::kFailed, std::move(reason), stop_run};
}

std::optional<Outcome> OutcomeNamed(const std::string& status) {
  if (status == "learned") return Outcome::kLearned;
  if (status == "relearned") return Outcome::kRelearned;
  if (status == "unchanged") return Outcome::kUnchanged;
  if (status == "checked") return Outcome::kChecked;
  if (status == "forgotten") return Outcome::kForgotten;
  if (status == "queued") return Outcome::kQueued;
  return std::nullopt;
}

// The request target for a message of `label` (or, with no body, for forget --id and --scan-id).
std::string Target(const ClientOptions& options, const std::string& label) {
  if (options.command == Command::kTrain) {
    std::string target = "/train?label=" + PercentEncode(label);
    if (options.id) target += "&id=" + PercentEncode(*options.id);
    if (options.scan_id) target += "&scan_id=" + PercentEncode(*options.scan_id);
    // PATHs are an archive, counted whole; a scan is feedback, under the regime (docs/CLIENT.md).
    if (!options.error_driven && (!options.scan_id || options.count_all_given)) {
      target += "&count=all";
    }
    return target;
  }
  if (options.scan_id) return "/forget?scan_id=" + PercentEncode(*options.scan_id);
  return options.id ? "/forget?id=" + PercentEncode(*options.id) : "/forget";
}

SendResult Send(HttpConnection& connection, const ClientOptions& options, const std::string& label,
                const std::string& body, const std::atomic<bool>& stopping) {
  const std::string target = Target(options, label);
  for (int attempt = 1;; ++attempt) {
    auto reply = connection.Send(http::verb::post, target, body);
    if (!reply) {
      const bool unreachable = reply.error().code == ErrorCode::kUnavailable;
      return Failed(reply.error().message,
                    unreachable ? std::optional<int>(kExitUnreachable) : std::nullopt);
    }
    if (reply->status == 200) {
      boost::system::error_code ec;
      const boost::json::value answer = boost::json::parse(reply->body, ec);
      const auto* status =
          !ec && answer.is_object() ? answer.as_object().if_contains("status") : nullptr;
      if (status != nullptr && status->is_string()) {
        if (auto outcome = OutcomeNamed(std::string(status->as_string())))
          return Succeeded(*outcome);
      }
      return Failed("unexpected answer: " + reply->body);
    }
    if (reply->status == 404 && options.command == Command::kForget)
      return Succeeded(Outcome::kNotFound);
    if (reply->status == 401 || reply->status == 403) {
      return Failed(ErrorMessage(*reply), kExitDaemonError);
    }
    if ((reply->status == 429 || reply->status == 503) && attempt < kAttempts && !stopping) {
      std::this_thread::sleep_for(std::chrono::seconds(std::max(1u, reply->retry_after_seconds)));
      continue;
    }
    return Failed(ErrorMessage(*reply));
  }
}

// The run: the reader, the workers, and what stops them.
class BulkRun {
 public:
  BulkRun(const ClientOptions& options, const ConnectOptions& connect)
      : options_(options), connect_(connect), queue_(2 * static_cast<std::size_t>(options.jobs)) {}

  // Returns the exit status of a run that had to stop, if it had to.
  std::optional<int> Run() {
    std::vector<std::jthread> workers;
    for (int i = 0; i < options_.jobs; ++i) workers.emplace_back([this] { Work(); });
    // One source a label (forget: one of every PATH), read in turn: one message of each while
    // each has some.
    std::vector<std::unique_ptr<MessageSource>> sources;
    if (options_.groups.size() > 1) {
      for (const LabelledPaths& group : options_.groups) {
        sources.push_back(std::make_unique<MessageSource>(
            std::vector<std::filesystem::path>(group.paths.begin(), group.paths.end()),
            options_.max_message_bytes));
      }
    } else {
      sources.push_back(std::make_unique<MessageSource>(
          std::vector<std::filesystem::path>(options_.paths.begin(), options_.paths.end()),
          options_.max_message_bytes));
    }
    std::size_t live = sources.size();
    for (std::size_t turn = 0; !stopping_ && live > 0; turn = (turn + 1) % sources.size()) {
      if (!sources[turn]) continue;
      std::optional<Message> message = sources[turn]->Next();
      if (!message) {
        sources[turn].reset();
        --live;
        continue;
      }
      message->group = turn;
      if (message->error) {
        tally_.Record(Outcome::kFailed, message->consumed, message->path, *message->error);
        continue;
      }
      if (!queue_.Push(std::move(*message))) break;
    }
    queue_.Close();
    workers.clear();  // Joins.
    std::lock_guard lock(mutex_);
    return stop_status_;
  }

  const BulkTally& tally() const { return tally_; }
  std::string stop_reason() const {
    std::lock_guard lock(mutex_);
    return stop_reason_;
  }

 private:
  void Work() {
    const std::unique_ptr<HttpConnection> connection = connect_.Open();
    while (std::optional<Message> message = queue_.Pop()) {
      const std::string& label =
          options_.groups.size() > 1 ? options_.groups[message->group].label : options_.label;
      SendResult result = Send(*connection, options_, label, message->body, stopping_);
      if (result.stop_run) {
        Stop(*result.stop_run, result.reason);
        return;
      }
      tally_.Record(result.outcome, message->consumed, message->path, result.reason);
    }
  }

  void Stop(int status, const std::string& reason) {
    {
      std::lock_guard lock(mutex_);
      if (!stop_status_) {
        stop_status_ = status;
        stop_reason_ = reason;
      }
    }
    stopping_ = true;
    queue_.Cancel();
  }

  const ClientOptions& options_;
  const ConnectOptions& connect_;
  BoundedQueue<Message> queue_;
  BulkTally tally_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::optional<int> stop_status_;
  std::string stop_reason_;
};

// forget --id, train --id with its one message, or train and forget --scan-id.
int RunOne(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
           std::FILE* err) {
  std::string body;
  std::string path = options.scan_id ? "scan " + *options.scan_id : options.id.value_or("");
  if (!options.paths.empty()) {
    MessageSource source({options.paths.front()}, options.max_message_bytes);
    std::optional<Message> message = source.Next();
    if (!message || source.Next()) {
      std::fprintf(err, "nbspamc: --id names one message, and %s holds %s\n",
                   options.paths.front().c_str(), message ? "several" : "none");
      return kExitUsage;
    }
    if (message->error) {
      std::fprintf(err, "nbspamc: %s: %s\n", message->path.c_str(), message->error->c_str());
      return kExitDaemonError;
    }
    body = std::move(message->body);
    path = message->path;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::atomic<bool> stopping{false};
  const std::unique_ptr<HttpConnection> connection = connect.Open();
  const SendResult result = Send(*connection, options, options.label, body, stopping);
  BulkTally tally;
  tally.Record(result.outcome, body.size(), path, result.reason);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (result.outcome == Outcome::kFailed) {
    // The daemon's answers about a scan name it already.
    if (options.scan_id && result.reason.find(*options.scan_id) != std::string::npos) {
      std::fprintf(err, "nbspamc: %s\n", result.reason.c_str());
    } else {
      std::fprintf(err, "nbspamc: %s: %s\n", path.c_str(), result.reason.c_str());
    }
    return result.stop_run.value_or(kExitDaemonError);
  }
  std::fprintf(out, "%s\n",
               FormatSummary(tally, options.command == Command::kForget, elapsed.count()).c_str());
  return kExitOk;
}

// One pass of a bulk run over options.paths: its summary line goes to `out` (after `prefix`).
// Returns the exit status when the pass had to stop or some messages failed, and its tally.
struct PassResult {
  std::optional<int> status;
  std::uint64_t counted = 0;  // Learned or relearned.
  std::uint64_t checked = 0;
};

PassResult RunPass(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
                   std::FILE* err, bool progress_in_place, const std::string& prefix) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  BulkRun run(options, connect);

  // The total input size, for the ETA, found by a walk beside the run.
  std::atomic<bool> total_known{false};
  std::atomic<std::uint64_t> total_bytes{0};
  std::optional<std::jthread> counter;
  std::optional<ProgressDisplay> display;
  if (options.progress) {
    counter.emplace([&](std::stop_token stop) {
      std::vector<std::filesystem::path> paths(options.paths.begin(), options.paths.end());
      if (auto total = TotalInputBytes(paths, stop)) {
        total_bytes = *total;
        total_known = true;
      }
    });
    display.emplace(err, progress_in_place, [&] {
      return ProgressSnapshot{.done = run.tally().Done(),
                              .failed = run.tally().Count(Outcome::kFailed),
                              .elapsed_seconds = elapsed(),
                              .done_bytes = run.tally().DoneBytes(),
                              .total_bytes = total_known
                                                 ? std::optional<std::uint64_t>(total_bytes.load())
                                                 : std::nullopt};
    });
    display->Start();
  }
  const std::optional<int> stopped = run.Run();
  if (display) display->Stop();
  counter.reset();  // Asks the walk to stop, and joins it.

  const BulkTally& tally = run.tally();
  const std::vector<Failure> failures = tally.FirstFailures();
  for (const Failure& failure : failures) {
    std::fprintf(err, "nbspamc: %s: %s\n", failure.path.c_str(), failure.reason.c_str());
  }
  const std::uint64_t failed = tally.Count(Outcome::kFailed);
  if (failed > failures.size()) {
    std::fprintf(err, "nbspamc: ... and %llu more failures\n",
                 static_cast<unsigned long long>(failed - failures.size()));
  }
  if (stopped) {
    std::fprintf(err, "nbspamc: stopped: %s\n", run.stop_reason().c_str());
  }
  std::fprintf(out, "%s%s\n", prefix.c_str(),
               FormatSummary(tally, options.command == Command::kForget, elapsed()).c_str());
  PassResult result;
  result.status = stopped ? stopped : failed > 0 ? std::optional(kExitDaemonError) : std::nullopt;
  result.counted = tally.Count(Outcome::kLearned) + tally.Count(Outcome::kRelearned);
  result.checked = tally.Count(Outcome::kChecked);
  return result;
}

// Under error-driven training (the daemon's /stats gives a train_margin), training spam while the
// model has no ham (or ham while it has no spam) counts every message unscored: says so, and how
// to train both in turn. Says nothing when /stats cannot be read or is not as expected.
void NoteAnEmptyOtherClass(const ClientOptions& options, const ConnectOptions& connect,
                           std::FILE* err) {
  if (options.command != Command::kTrain || !options.error_driven || options.groups.size() > 1) {
    return;
  }
  const std::string other = options.label == "spam"  ? "ham"
                            : options.label == "ham" ? "spam"
                                                     : std::string();
  if (other.empty()) return;
  const std::unique_ptr<HttpConnection> connection = connect.Open();
  const auto reply = connection->Send(http::verb::get, "/stats");
  if (!reply || reply->status != 200) return;
  boost::system::error_code ec;
  const boost::json::value stats = boost::json::parse(reply->body, ec);
  if (ec || !stats.is_object()) return;
  const auto* margin = stats.as_object().if_contains("train_margin");
  const auto* classes = stats.as_object().if_contains("classes");
  if (margin == nullptr || margin->is_null() || classes == nullptr || !classes->is_array()) return;
  for (const boost::json::value& c : classes->as_array()) {
    const auto* label = c.is_object() ? c.as_object().if_contains("label") : nullptr;
    const auto* documents = c.is_object() ? c.as_object().if_contains("documents") : nullptr;
    if (label == nullptr || !label->is_string() || label->as_string() != other) continue;
    if (documents == nullptr || !documents->is_int64() || documents->as_int64() != 0) return;
  }
  std::fprintf(err,
               "nbspamc: note: the daemon trains on or near error and has no %s yet, so every "
               "%s message is counted unscored; to count only what it gets wrong, train both "
               "classes in one run: --label spam PATH... --label ham PATH...\n",
               other.c_str(), options.label.c_str());
}

}  // namespace

int RunBulk(const ClientOptions& options, const ConnectOptions& connect, std::FILE* out,
            std::FILE* err, bool progress_in_place) {
  if (options.id || options.scan_id) return RunOne(options, connect, out, err);
  NoteAnEmptyOtherClass(options, connect, err);
  // Error-driven training: a message checked in one pass may fall within the margin once the
  // pass counted others, so passes go on while one counts some and leaves some only checked.
  // The daemon's ledger keeps a message from being counted twice; one counted stays unchanged.
  const int passes =
      options.command == Command::kTrain && options.error_driven ? options.passes : 1;
  for (int pass = 1;; ++pass) {
    const std::string prefix = pass > 1 ? "pass " + std::to_string(pass) + ": " : "";
    const PassResult result = RunPass(options, connect, out, err, progress_in_place, prefix);
    if (result.status) return *result.status;
    if (pass >= passes || result.counted == 0 || result.checked == 0) return kExitOk;
  }
}

}  // namespace nbspamd::client
