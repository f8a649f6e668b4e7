#include "client/progress.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace nbspamd::client {

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e9) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long hours = total / 3600;
  const long long minutes = total / 60 % 60;
  const long long secs = total % 60;
  char text[64];
  if (hours > 0) {
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", hours, minutes, secs);
  } else {
    std::snprintf(text, sizeof text, "%lld:%02lld", minutes, secs);
  }
  return text;
}

std::string FormatRate(double per_second) {
  char text[64];
  if (!(per_second >= 0)) per_second = 0;
  if (per_second >= 99.5) {
    std::snprintf(text, sizeof text, "%.0f msg/s", per_second);
  } else {
    std::snprintf(text, sizeof text, "%.3g msg/s", per_second);
  }
  return text;
}

double Rate(const ProgressSnapshot& snapshot) {
  if (snapshot.elapsed_seconds <= 0) return 0;
  return static_cast<double>(snapshot.done) / snapshot.elapsed_seconds;
}

std::optional<double> EtaSeconds(const ProgressSnapshot& snapshot) {
  if (!snapshot.total_bytes || snapshot.done_bytes == 0 || snapshot.elapsed_seconds <= 0) {
    return std::nullopt;
  }
  const double total = static_cast<double>(*snapshot.total_bytes);
  const double done = static_cast<double>(snapshot.done_bytes);
  if (done >= total) return 0.0;
  return snapshot.elapsed_seconds * (total - done) / done;
}

std::string FormatProgress(const ProgressSnapshot& snapshot) {
  std::string line = std::to_string(snapshot.done) + " done";
  if (snapshot.failed > 0) line += " (" + std::to_string(snapshot.failed) + " failed)";
  line += ", " + FormatRate(Rate(snapshot));
  if (const std::optional<double> eta = EtaSeconds(snapshot)) {
    const double share = static_cast<double>(snapshot.done_bytes) /
                         static_cast<double>(std::max<std::uint64_t>(*snapshot.total_bytes, 1));
    line += ", " + std::to_string(static_cast<int>(std::min(share, 1.0) * 100)) + "%, ETA " +
            FormatDuration(*eta);
  }
  return line;
}

ProgressDisplay::ProgressDisplay(std::FILE* out, bool in_place, Sampler sample,
                                 std::chrono::milliseconds plain_interval)
    : out_(out),
      in_place_(in_place),
      sample_(std::move(sample)),
      interval_(in_place ? std::chrono::milliseconds(100) : plain_interval) {}

ProgressDisplay::~ProgressDisplay() { Stop(); }

void ProgressDisplay::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ProgressDisplay::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (in_place_ && drawn_width_ > 0) {
    std::fprintf(out_, "\r%*s\r", static_cast<int>(drawn_width_), "");
    std::fflush(out_);
  }
}

void ProgressDisplay::Run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [&] { return stopping_; })) Draw();
}

void ProgressDisplay::Draw() {
  const std::string line = FormatProgress(sample_());
  if (in_place_) {
    // Spaces over what is left of a longer previous line.
    const int pad = static_cast<int>(drawn_width_ > line.size() ? drawn_width_ - line.size() : 0);
    std::fprintf(out_, "\r%s%*s", line.c_str(), pad, "");
    drawn_width_ = line.size();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

}  // namespace nbspamd::client
