// HttpLoad: a small closed-loop HTTP/1.1 load generator on Asio. K keep-alive connections each
// send one request, wait for its response, and send the next, until a fixed number of requests
// has been answered; every request's latency is recorded.
//
//   LoadOptions options{.port = 7830, .connections = 32, .requests = 5000};
//   auto result = RunLoad(options, [](std::size_t i) {
//     return LoadRequest{"/train?label=spam&id=m" + std::to_string(i), "cheap pills"};
//   });
//   std::printf("%.0f/s p99 %.2f ms\n", result->Throughput(), result->LatencyMs(0.99));
#ifndef NBSPAMD_BENCH_PERF_LOAD_CLIENT_HTTP_LOAD_H_
#define NBSPAMD_BENCH_PERF_LOAD_CLIENT_HTTP_LOAD_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <vector>

namespace nbspamd::bench {

// One POST request.
struct LoadRequest {
  std::string target;  // Path and query, e.g. "/train?label=spam&id=m1".
  std::string body;
  std::string content_type = "message/rfc822";
};

struct LoadOptions {
  std::string host = "127.0.0.1";  // An IP address.
  std::uint16_t port = 0;
  std::size_t connections = 1;  // K, each with one request in flight at a time.
  std::size_t requests = 1000;  // Requests to send in all, numbered 0 .. requests-1.
  unsigned threads = 1;         // Client I/O threads.
};

// What a run measured. Latency is from writing a request to reading its whole response.
struct LoadResult {
  std::size_t ok = 0;                // 2xx responses.
  std::size_t failed = 0;            // Other statuses.
  double seconds = 0;                // Wall time from the first request to the last response.
  std::vector<double> latencies_ms;  // Sorted ascending, one per response.
  std::string first_failure;         // Status and body of the first non-2xx response.

  [[nodiscard]] double Throughput() const { return seconds > 0 ? (ok + failed) / seconds : 0; }
  // The latency at quantile q in [0, 1] (nearest rank); 0 when nothing was measured.
  [[nodiscard]] double LatencyMs(double q) const;
};

// Builds request number i (called from the client's I/O threads, so it must be thread-safe).
using RequestMaker = std::function<LoadRequest(std::size_t index)>;

// Runs the load. Errors: a connection or network failure, with its message.
[[nodiscard]] std::expected<LoadResult, std::string> RunLoad(const LoadOptions& options,
                                                             const RequestMaker& make_request);

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_PERF_LOAD_CLIENT_HTTP_LOAD_H_
