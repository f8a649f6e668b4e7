// Progress: what nbspamc shows while it trains or forgets many messages. Pure formatting
// functions (tested alone) and ProgressDisplay, a thread that redraws one line in place on a
// terminal at most 10 times a second, or prints a plain line every few seconds otherwise.
//
//   ProgressDisplay display(stderr, isatty(2), [&] { return counters.Snapshot(); });
//   display.Start();  ... work ...  display.Stop();
#ifndef NBSPAMD_CLIENT_PROGRESS_H_
#define NBSPAMD_CLIENT_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace nbspamd::client {

// The state of a run at one moment.
struct ProgressSnapshot {
  std::uint64_t done = 0;    // Messages finished, successfully or not.
  std::uint64_t failed = 0;  // Of which failed.
  double elapsed_seconds = 0;
  std::uint64_t done_bytes = 0;              // Input bytes of the finished messages.
  std::optional<std::uint64_t> total_bytes;  // Of all input, once known.
};

// "0:07", "12:34", "1:02:03" (hours only when needed); "?" for a negative or absurd value.
[[nodiscard]] std::string FormatDuration(double seconds);

// Messages per second: "0.5 msg/s", "12.3 msg/s", "456 msg/s" (3 significant digits at most
// below 100, whole numbers above).
[[nodiscard]] std::string FormatRate(double per_second);

// Messages per second so far (0 before any time has passed).
[[nodiscard]] double Rate(const ProgressSnapshot& snapshot);

// The estimated time left from the share of input bytes done, when the total is known and some
// bytes are done.
[[nodiscard]] std::optional<double> EtaSeconds(const ProgressSnapshot& snapshot);

// "1234 done (2 failed), 456 msg/s, 45%, ETA 0:12"; the failed part, the percentage and the ETA
// only when they apply.
[[nodiscard]] std::string FormatProgress(const ProgressSnapshot& snapshot);

class ProgressDisplay {
 public:
  using Sampler = std::function<ProgressSnapshot()>;

  // On a terminal (`in_place`), the line is redrawn with '\r' every 100 ms; otherwise a line is
  // printed every `plain_interval`.
  ProgressDisplay(std::FILE* out, bool in_place, Sampler sample,
                  std::chrono::milliseconds plain_interval = std::chrono::seconds(5));
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;
  ~ProgressDisplay();  // Stops.

  void Start();
  // Stops the thread; on a terminal, clears the line. Idempotent.
  void Stop();

 private:
  void Run();
  void Draw();

  std::FILE* const out_;
  const bool in_place_;
  const Sampler sample_;
  const std::chrono::milliseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::size_t drawn_width_ = 0;
  std::thread thread_;
};

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_PROGRESS_H_
