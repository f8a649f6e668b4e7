// The scan history's cost at scale (issue 27): how fast scans are written, their bytes on disk,
// and how long one page of GET /history takes on a history of N scans.
//
//   build/release/bench/history_benchmark [--scans 1000000] [--bag 300] [--bound N] [--dir /tmp/h]
//
// Writes N scans of `bag` distinct tokens (random hashes, as real token hashes are) and 20
// explaining tokens, then times 200 listings of each kind: the newest page, a page filtered by
// verdict, a page deep in the history (by its cursor), and a text search few scans match.
// Prints medians and p99 in milliseconds, and the folder's size per scan. --bound keeps at most N
// scans (the default: all of them), so that the bounds remove the oldest while scans are written
// and the listings then read past what they removed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "history/scan_history.h"
#include "history/scan_id.h"

namespace {

using nbspamd::history::ScanHistory;
using nbspamd::history::ScanQuery;
using nbspamd::history::ScanRecord;
using Clock = std::chrono::steady_clock;

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::uint64_t FolderBytes(const std::filesystem::path& path) {
  std::uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  return bytes;
}

void Report(const char* what, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  std::printf("%-34s median %7.3f ms  p99 %7.3f ms  max %7.3f ms\n", what, times[times.size() / 2],
              times[times.size() * 99 / 100], times.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t scans = 1'000'000;
  std::size_t bag = 300;
  std::uint64_t bound = 0;
  std::string dir = "/tmp/nbspamd-history-benchmark";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--scans") scans = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--bag") bag = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--bound") bound = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--dir") dir = argv[i + 1];
  }
  std::filesystem::remove_all(dir);
  const std::int64_t start_ms = 1'790'000'000'000;
  std::int64_t now = start_ms;
  auto opened = ScanHistory::Open({.path = dir,
                                   .max_scans = bound > 0 ? bound : scans,
                                   .max_age_ms = 3650LL * 86'400'000,
                                   .queue_limit = 1 << 20,
                                   .clock_ms = [&now] { return now; }});
  if (!opened) {
    std::fprintf(stderr, "%s\n", opened.error().message.c_str());
    return 1;
  }
  ScanHistory& history = **opened;
  nbspamd::history::ScanIdGenerator ids(0x5eed0000);
  std::mt19937_64 random(42);
  const char* verdicts[] = {"ham", "ham", "ham", "spam", "unsure"};
  const auto write_start = Clock::now();
  for (std::uint64_t i = 0; i < scans; ++i) {
    now = start_ms + static_cast<std::int64_t>(i) * 10;
    ScanRecord record;
    auto& s = record.summary;
    s.scan_id = ids.Next(now);
    s.time_ms = now;
    s.front_end = i % 3 == 0 ? "milter" : "http";
    s.user = i % 10 == 0 ? "user" + std::to_string(i % 1000) + "@example.org" : "";
    s.message_key = "<" + std::to_string(random()) + "@mx.example.org>";
    s.verdict = verdicts[i % 5];
    s.label = s.verdict == "ham" ? "ham" : "spam";
    s.score = static_cast<double>(random() % 4000) / 1000.0 - 2;
    s.spam_confidence = 0.5;
    s.size = 4000 + random() % 20000;
    s.tokens = bag + 50;
    s.facts = {.message_id = s.message_key.substr(1, s.message_key.size() - 2),
               .from_domain = "sender" + std::to_string(i % 5000) + ".example.com",
               .subject = "#0123456789abcdef",
               .client = "192.0.2." + std::to_string(i % 250),
               .recipients = "#fedcba9876543210"};
    for (int t = 0; t < 20; ++t) {
      record.detail.top.push_back(
          {"subject:word" + std::to_string(t), nbspamd::TokenSource::kHeader, 1, 1.5});
    }
    record.detail.bag.resize(bag);
    for (auto& entry : record.detail.bag) entry = {random(), 1};
    std::sort(record.detail.bag.begin(), record.detail.bag.end(),
              [](const auto& a, const auto& b) { return a.hash < b.hash; });
    history.Record(std::move(record));
    if (i % 100'000 == 99'999) history.Flush();  // Keep the queue's memory bounded.
  }
  history.Flush();
  const double write_seconds = Millis(Clock::now() - write_start) / 1000;
  const auto figures = history.Figures();
  const std::uint64_t bytes = FolderBytes(dir);
  std::printf("scans %llu (kept %llu, dropped %llu), bag %zu: written in %.1f s (%.0f scans/s)\n",
              static_cast<unsigned long long>(scans), static_cast<unsigned long long>(figures.kept),
              static_cast<unsigned long long>(figures.dropped), bag, write_seconds,
              static_cast<double>(scans) / write_seconds);
  std::printf(
      "folder %.1f MiB, %.0f bytes a scan kept\n", static_cast<double>(bytes) / (1 << 20),
      static_cast<double>(bytes) / static_cast<double>(std::max<std::uint64_t>(figures.kept, 1)));

  const auto time_queries = [&](const char* what, auto make_query) {
    std::vector<double> times;
    for (int i = 0; i < 200; ++i) {
      const ScanQuery query = make_query(i);
      const auto t = Clock::now();
      auto page = history.List(query);
      times.push_back(Millis(Clock::now() - t));
      if (!page) {
        std::fprintf(stderr, "%s\n", page.error().message.c_str());
        std::exit(1);
      }
    }
    Report(what, std::move(times));
  };
  time_queries("newest page of 50", [](int) { return ScanQuery{}; });
  time_queries("page of 50 spam", [](int) { return ScanQuery{.verdict = "spam"}; });
  time_queries("page of 50 deep in the history", [&](int i) {
    return ScanQuery{.before = nbspamd::history::FirstScanIdAt(
                         start_ms + static_cast<std::int64_t>((i * 4999) % scans) * 10)};
  });
  time_queries("text search, one domain in 5000", [](int i) {
    return ScanQuery{.text = "sender" + std::to_string(i) + ".example.com"};
  });
  time_queries("one user's scans", [](int i) {
    return ScanQuery{.user = "user" + std::to_string(i * 10) + "@example.org"};
  });
  opened->reset();  // Closed first: RocksDB's threads may still be writing files into the folder.
  std::filesystem::remove_all(dir);
  return 0;
}
