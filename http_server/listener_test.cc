// HttpListener over a real loopback socket: a connection whose set-up throws, whatever it throws,
// is dropped, noted and counted, and the listener goes on accepting. Injected at the listener's
// accept hook, where a fault of the set-up (out of memory, a socket option refused) strikes.
#include "http_server/listener.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/support/memory_filter.h"

namespace nbspamd::http_server {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

// One request on a fresh connection; what the server sent until it closed (or "" when it closed
// without answering).
std::string Exchange(unsigned short port, const std::string& request) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  boost::system::error_code ec;
  net::write(socket, net::buffer(request), ec);
  std::string received;
  char buffer[4096];
  while (true) {
    const std::size_t n = socket.read_some(net::buffer(buffer), ec);
    if (ec) break;
    received.append(buffer, n);
  }
  return received;
}

TEST(HttpListenerTest, AFaultSettingUpAConnectionDropsItAndAcceptingGoesOn) {
  const std::unique_ptr<core::SpamFilter> filter = testing::MemoryFilter();
  http_api::Router router(*filter);
  http_api::HttpLimits limits;
  HttpConnectionRegistry registry(limits.max_in_flight_bytes);
  net::io_context io;
  auto listener =
      HttpListener::Create(io, {net::ip::make_address("127.0.0.1"), 0}, router, limits, registry);
  ASSERT_TRUE(listener.has_value()) << listener.error().message;
  std::atomic<int> accepted = 0;
  (*listener)->SetAcceptHook([&accepted] {
    const int n = accepted.fetch_add(1);
    if (n == 0) throw 42;  // No std::exception.
    if (n == 1) throw std::runtime_error("no memory for the connection");
  });
  (*listener)->Run();
  auto work = net::make_work_guard(io);
  std::thread thread([&io] { io.run(); });
  const unsigned short port = (*listener)->LocalEndpoint().port();
  const std::string healthz =
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

  EXPECT_EQ(Exchange(port, healthz), "") << "the first connection was dropped";
  EXPECT_EQ(Exchange(port, healthz), "") << "the second connection was dropped";
  const std::string served = Exchange(port, healthz);
  EXPECT_TRUE(served.starts_with("HTTP/1.1 200")) << served;
  EXPECT_EQ(accepted.load(), 3);
  EXPECT_EQ(router.metrics().HandlerExceptionCount(http_api::InternalError::kHttpConnection), 2u);

  (*listener)->Stop();
  work.reset();
  io.stop();
  thread.join();
}

}  // namespace
}  // namespace nbspamd::http_server
