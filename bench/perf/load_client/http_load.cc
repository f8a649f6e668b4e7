#include "bench/perf/load_client/http_load.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

namespace nbspamd::bench {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;

// State shared by the connections of one run.
struct Shared {
  Shared(const LoadOptions& options, const RequestMaker& make_request)
      : options(options), make_request(make_request) {}

  const LoadOptions& options;
  const RequestMaker& make_request;
  std::atomic<std::size_t> next{0};
  std::mutex mutex;  // Guards the members below.
  LoadResult result;
  std::string error;
};

// One keep-alive connection: takes request numbers until none are left.
net::awaitable<void> Connection(Shared& shared, net::ip::tcp::endpoint endpoint) {
  beast::tcp_stream stream(co_await net::this_coro::executor);
  co_await stream.async_connect(endpoint, net::use_awaitable);
  beast::flat_buffer buffer;
  std::vector<double> latencies;
  std::size_t ok = 0, failed = 0;
  std::string first_failure;
  for (std::size_t index = shared.next++; index < shared.options.requests; index = shared.next++) {
    LoadRequest made = shared.make_request(index);
    http::request<http::string_body> request(http::verb::post, made.target, 11);
    request.set(http::field::host, shared.options.host);
    request.set(http::field::content_type, made.content_type);
    request.body() = std::move(made.body);
    request.prepare_payload();
    const Clock::time_point start = Clock::now();
    co_await http::async_write(stream, request, net::use_awaitable);
    http::response<http::string_body> response;
    co_await http::async_read(stream, buffer, response, net::use_awaitable);
    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (response.result_int() / 100 == 2) {
      ++ok;
    } else {
      if (failed++ == 0)
        first_failure = std::to_string(response.result_int()) + " " + response.body();
    }
  }
  beast::error_code ignored;
  stream.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  std::lock_guard lock(shared.mutex);
  shared.result.ok += ok;
  shared.result.failed += failed;
  shared.result.latencies_ms.insert(shared.result.latencies_ms.end(), latencies.begin(),
                                    latencies.end());
  if (shared.result.first_failure.empty()) shared.result.first_failure = first_failure;
}

}  // namespace

double LoadResult::LatencyMs(double q) const {
  if (latencies_ms.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(latencies_ms.size()));
  const std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return latencies_ms[std::min(index, latencies_ms.size() - 1)];
}

std::expected<LoadResult, std::string> RunLoad(const LoadOptions& options,
                                               const RequestMaker& make_request) {
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) return std::unexpected("bad address " + options.host + ": " + ec.message());
  const net::ip::tcp::endpoint endpoint(address, options.port);

  net::io_context context(static_cast<int>(options.threads));
  Shared shared(options, make_request);
  const Clock::time_point start = Clock::now();
  for (std::size_t i = 0; i < options.connections; ++i) {
    net::co_spawn(net::make_strand(context), Connection(shared, endpoint),
                  [&shared](std::exception_ptr failure) {
                    if (!failure) return;
                    try {
                      std::rethrow_exception(failure);
                    } catch (const std::exception& e) {
                      std::lock_guard lock(shared.mutex);
                      if (shared.error.empty()) shared.error = e.what();
                    }
                  });
  }
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < options.threads; ++i) threads.emplace_back([&] { context.run(); });
  context.run();
  for (std::thread& thread : threads) thread.join();
  shared.result.seconds = std::chrono::duration<double>(Clock::now() - start).count();

  if (!shared.error.empty()) return std::unexpected(shared.error);
  std::sort(shared.result.latencies_ms.begin(), shared.result.latencies_ms.end());
  return std::move(shared.result);
}

}  // namespace nbspamd::bench
