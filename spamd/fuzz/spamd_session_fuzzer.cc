// Fuzz target: the input is what a client sends on one connection to a real SpamdListener (on
// 127.0.0.1, one for the whole run, over FakeSpamdBackend), after one selector byte that picks
// the backend's behaviour and how the bytes are written. The client writes them, closes its
// sending side and reads until the listener closes. What must hold (docs/FUZZING.md):
//   - the answer is nothing (a connection that sent nothing, or SKIP), or starts "SPAMD/1.";
//   - an error answer ("SPAMD/1.0 <code> ...", code not 0) is that one line alone;
//   - no handler throws (handler_exceptions stays 0 unless the backend was told to throw);
//   - TELL reaches the backend only from the allowed user ("trainer"), refused TELL never;
//   - and after each input the listener still answers PING.
// Built with libFuzzer when NBSPAMD_FUZZ is on; tokenizer/fuzz/replay_main.cc runs saved inputs
// without it.
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "spamd/listener.h"
#include "spamd/testing/fake_backend.h"

namespace {

namespace net = boost::asio;
using net::ip::tcp;
using namespace nbspamd::spamd;

[[noreturn]] void Fail(const char* what, std::uint8_t selector, const std::string& answer) {
  std::fprintf(stderr, "spamd_session_fuzzer: %s (selector 0x%02x); answer:\n%s\n", what, selector,
               answer.c_str());
  std::abort();
}

// One listener for the whole run, with small limits so the fuzzer reaches them, a read deadline
// long enough never to fire (the client always ends its input), and TELL for "trainer" only.
struct Harness {
  Harness() {
    SpamdOptions options;
    options.limits.max_header_bytes = 1024;
    options.limits.max_body_bytes = 4096;
    options.read_timeout = std::chrono::seconds(20);
    options.tell.grants.push_back(MakeTellGrant("fuzz", {}, {"trainer"}));
    auto created =
        SpamdListener::Create(context, {net::ip::make_address("127.0.0.1"), 0}, backend, options);
    if (!created) {
      std::fprintf(stderr, "cannot listen: %s\n", created.error().message.c_str());
      std::abort();
    }
    listener = *created;
    port = listener->LocalEndpoint().port();
    listener->Run();
    thread = std::thread([this] { context.run(); });
    thread.detach();  // Runs until the process ends.
  }

  net::io_context context;
  net::executor_work_guard<net::io_context::executor_type> guard = net::make_work_guard(context);
  FakeSpamdBackend backend;
  std::shared_ptr<SpamdListener> listener;
  unsigned short port = 0;
  std::thread thread;
};

Harness& TheHarness() {
  static Harness* harness = new Harness();  // Never destroyed: its thread runs to the end.
  return *harness;
}

// Writes `input` (in pieces of `piece` bytes when not 0), ends the input, and reads until the
// listener closes. Write errors are the listener having closed first: the answer still counts.
//
// Thousands of connections a second are more than one machine's TCP comfortably holds; what
// follows are that machine's limits, not the listener's:
//   - the ends of closed connections pile up in TIME_WAIT, and one source address has only
//     ~28,000 ephemeral ports: each connection comes from the next of 250 loopback source
//     addresses (127.0.1.1 to 127.0.1.250), and a connect that finds no free port is tried again;
//   - now and then a SYN gets no answer (one that meets a TIME_WAIT end of an earlier connection
//     can be dropped), and connect would wait for the kernel's six retries, over a minute: it
//     gives up after two (TCP_SYNCNT) and is tried again;
//   - libFuzzer's timeout timer (SIGALRM) interrupts blocking calls now and then: an interrupted
//     connect starts over on a new socket, an interrupted read or write is made again.
using SynCount = net::detail::socket_option::integer<IPPROTO_TCP, TCP_SYNCNT>;

std::string Exchange(unsigned short port, std::string_view input, std::size_t piece) {
  static std::atomic<unsigned> next_source{0};
  net::io_context io;
  tcp::socket socket(io);
  boost::system::error_code ec;
  for (int attempt = 0; attempt < 50; ++attempt) {
    socket.close(ec);
    socket.open(tcp::v4(), ec);
    const unsigned source = 1 + next_source.fetch_add(1, std::memory_order_relaxed) % 250;
    socket.bind({net::ip::make_address_v4(0x7f000100u + source), 0}, ec);
    if (!ec) socket.set_option(SynCount(2), ec);
    if (!ec) socket.connect({net::ip::make_address("127.0.0.1"), port}, ec);
    if (ec == net::error::interrupted || ec == net::error::timed_out) continue;
    if (ec.value() != EADDRNOTAVAIL && ec != net::error::address_in_use) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (ec) return "connect failed: " + ec.message();
  if (piece == 0) piece = input.size();
  std::size_t written = 0;
  while (written < input.size()) {
    const std::size_t bytes = socket.write_some(
        net::buffer(input.substr(written, std::min(piece, input.size() - written))), ec);
    if (ec == net::error::interrupted) continue;
    if (ec) break;
    written += bytes;
  }
  socket.shutdown(tcp::socket::shutdown_send, ec);
  std::string answer;
  char buffer[4096];
  for (;;) {
    const std::size_t bytes = socket.read_some(net::buffer(buffer), ec);
    if (ec == net::error::interrupted) continue;
    if (ec) break;
    answer.append(buffer, bytes);
  }
  return answer;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  Harness& harness = TheHarness();
  const std::uint8_t selector = data[0];
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

  // Bits 0-1: the backend answers, fails as not ready, fails as overloaded, or throws.
  const int backend_mode = selector & 3;
  harness.backend.SetClassifyError(
      backend_mode == 1   ? std::optional(nbspamd::Error{nbspamd::ErrorCode::kFailedPrecondition,
                                                       "nothing learned"})
      : backend_mode == 2 ? std::optional(nbspamd::Error{nbspamd::ErrorCode::kUnavailable, "busy"})
                          : std::nullopt);
  harness.backend.SetThrowOnClassify(backend_mode == 3);
  // Bits 2-4: written whole, or in pieces of 1 to 64 bytes.
  static constexpr std::size_t kPieces[] = {0, 1, 2, 3, 7, 16, 64, 0};
  const std::size_t piece = kPieces[(selector >> 2) & 7];

  harness.backend.Reset();
  const auto exceptions_before = harness.listener->counters().handler_exceptions.load();
  const std::string answer = Exchange(harness.port, input, piece);

  if (!answer.empty()) {
    if (!answer.starts_with("SPAMD/1.")) Fail("an answer not starting SPAMD/1.", selector, answer);
    const auto first_space = answer.find(' ');
    const bool error =
        first_space == std::string::npos || answer.compare(first_space, 3, " 0 ") != 0;
    if (error && answer.find("\r\n") != answer.size() - 2) {
      Fail("an error answer that is not one line", selector, answer);
    }
  }
  const auto exceptions = harness.listener->counters().handler_exceptions.load();
  if (backend_mode != 3 && exceptions != exceptions_before) {
    Fail("a handler threw", selector, answer);
  }
  const auto calls = harness.backend.Calls();
  for (const auto& call : calls) {
    if (call.operation != "classify" &&
        (call.context.user != "trainer" || call.context.source != "fuzz")) {
      Fail("TELL reached the backend for a user not allowed", selector, answer);
    }
  }
  const std::string pong = Exchange(harness.port, "PING SPAMC/1.5\r\n\r\n", 0);
  if (pong != "SPAMD/1.5 0 PONG\r\n") {
    Fail(("the listener stopped answering PING (it answered \"" + pong + "\")").c_str(), selector,
         answer);
  }
  return 0;
}
