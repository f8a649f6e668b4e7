// SpamdListener over real sockets on 127.0.0.1: malformed requests get spamd's error line and
// the listener goes on serving; deadlines, backend errors and exceptions; graceful Stop.
#include "spamd/listener.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/write.hpp>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "spamd/testing/fake_backend.h"

namespace nbspamd::spamd {
namespace {

namespace net = boost::asio;
using net::ip::tcp;

// Sends `request` on a new connection, ends the input when `end_input`, and returns all the
// server sent until it closed.
std::string Exchange(unsigned short port, std::string_view request, bool end_input = true) {
  net::io_context io;
  tcp::socket socket(io);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  net::write(socket, net::buffer(request));
  if (end_input) socket.shutdown(tcp::socket::shutdown_send);
  std::string response;
  char buffer[4096];
  boost::system::error_code ec;
  for (;;) {
    const std::size_t bytes = socket.read_some(net::buffer(buffer), ec);
    if (ec) break;
    response.append(buffer, bytes);
  }
  return response;
}

std::string CheckRequest(std::string_view message, std::string_view user = "alice") {
  return "CHECK SPAMC/1.5\r\nUser: " + std::string(user) +
         "\r\nContent-length: " + std::to_string(message.size()) + "\r\n\r\n" +
         std::string(message);
}

class SpamdListenerTest : public testing::Test {
 protected:
  void Start(SpamdOptions options = {}) {
    auto listener = SpamdListener::Create(context_, {net::ip::make_address("127.0.0.1"), 0},
                                          backend_, std::move(options));
    ASSERT_TRUE(listener.has_value()) << listener.error().message;
    listener_ = *listener;
    port_ = listener_->LocalEndpoint().port();
    listener_->Run();
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { context_.run(); });
  }

  void TearDown() override {
    if (listener_ && !stopped_) {
      std::promise<void> drained;
      listener_->Stop([&] { drained.set_value(); });
      drained.get_future().wait();
    }
    guard_.reset();
    context_.stop();
    for (auto& thread : threads_) thread.join();
  }

  net::io_context context_;
  net::executor_work_guard<net::io_context::executor_type> guard_ = net::make_work_guard(context_);
  std::vector<std::thread> threads_;
  FakeSpamdBackend backend_;
  std::shared_ptr<SpamdListener> listener_;
  unsigned short port_ = 0;
  bool stopped_ = false;
};

TEST_F(SpamdListenerTest, AnswersCheck) {
  Start();
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: buy viagra\r\n\r\nnow\r\n")),
            "SPAMD/1.1 0 EX_OK\r\nSpam: True ; 10.0 / 5.0\r\n\r\n");
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: lunch\r\n\r\nat noon\r\n")),
            "SPAMD/1.1 0 EX_OK\r\nSpam: False ; -5.0 / 5.0\r\n\r\n");
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].operation, "classify");
  EXPECT_EQ(calls[0].context.user, "alice");
  EXPECT_EQ(calls[0].context.source, "");  // Only TELL trains under a source.
  EXPECT_EQ(calls[0].message, "Subject: buy viagra\r\n\r\nnow\r\n");
  EXPECT_EQ(listener_->counters().answered.load(), 2u);
}

// spamc -z (when built with zlib; Debian's spamc is not) sends the message deflated.
TEST_F(SpamdListenerTest, InflatesACompressedMessage) {
  Start();
  const std::string message = "Subject: cheap viagra\r\n\r\nnow\r\n";
  uLongf size = compressBound(static_cast<uLong>(message.size()));
  std::string compressed(size, '\0');
  ASSERT_EQ(
      compress(reinterpret_cast<Bytef*>(compressed.data()), &size,
               reinterpret_cast<const Bytef*>(message.data()), static_cast<uLong>(message.size())),
      Z_OK);
  compressed.resize(size);
  EXPECT_EQ(Exchange(port_, "SYMBOLS SPAMC/1.5\r\nCompress: zlib\r\nContent-length: " +
                                std::to_string(compressed.size()) + "\r\n\r\n" + compressed),
            "SPAMD/1.1 0 EX_OK\r\nContent-length: 12\r\nSpam: True ; 10.0 / 5.0\r\n\r\n"
            "NBSPAMD_SPAM");
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].message, message);
}

// One malformed or hostile request, and the status line it must get (the response is that line
// alone, as spamd sends it, and the connection then closes).
struct BadRequest {
  std::string name;
  std::string input;
  bool end_input;                  // The client closes its sending side after the input.
  std::string status_line_prefix;  // "SPAMD/1.0 76 ", or "" for a connection closed unanswered.
};

std::string HeaderLines(std::size_t count) {
  std::string lines;
  for (std::size_t i = 0; i < count; ++i) lines += "X-Filler: " + std::to_string(i) + "\r\n";
  return lines;
}

// Each request gets spamd's error line (EX_PROTOCOL 76 for what is malformed, EX_DATAERR 65 for
// a message over the size limit, EX_TIMEOUT 79 for one that does not arrive within the read
// deadline, EX_NOPERM 77 for a refused TELL) or, having sent nothing, a closed connection; and
// after each the listener serves the next connection.
TEST_F(SpamdListenerTest, MalformedRequestsGetAnErrorAndTheListenerServesOn) {
  SpamdOptions options;
  options.limits.max_header_bytes = 8 << 10;
  options.limits.max_body_bytes = 64 << 10;
  options.read_timeout = std::chrono::milliseconds(300);
  Start(options);
  const std::string kCheck = "CHECK SPAMC/1.5\r\n";
  const BadRequest requests[] = {
      // Cut short, the client then closing its side.
      {"nothing sent", "", true, ""},
      {"truncated request line", "CHECK SPA", true, "SPAMD/1.0 76 "},
      {"truncated header line", kCheck + "Content-len", true, "SPAMD/1.0 76 "},
      {"headers never ended", kCheck + "Content-length: 5\r\n", true, "SPAMD/1.0 76 "},
      {"body shorter than announced", kCheck + "Content-length: 100\r\n\r\nshort", true,
       "SPAMD/1.0 76 "},
      // Cut short, the client then waiting: the read deadline answers.
      {"request line, then silence", "CHECK SPAMC/1.5", false, "SPAMD/1.0 79 "},
      {"headers, then silence", kCheck + "Content-length: 5\r\n", false, "SPAMD/1.0 79 "},
      {"body shorter than announced, then silence", kCheck + "Content-length: 100\r\n\r\nshort",
       false, "SPAMD/1.0 79 "},
      {"Content-length missing, input never ended", kCheck + "\r\nSubject: x\r\n\r\nbody", false,
       "SPAMD/1.0 79 "},
      // Lengths.
      {"absurd Content-length", kCheck + "Content-length: 99999999999999999999999999\r\n\r\n",
       false, "SPAMD/1.0 65 "},
      {"Content-length over the limit", kCheck + "Content-length: 70000\r\n\r\nabc", false,
       "SPAMD/1.0 65 "},
      {"body to the end of input over the limit", kCheck + "\r\n" + std::string(70000, 'x'), false,
       "SPAMD/1.0 65 "},
      {"negative Content-length", kCheck + "Content-length: -1\r\n\r\n", false, "SPAMD/1.0 76 "},
      {"hexadecimal Content-length", kCheck + "Content-length: 0x10\r\n\r\n", false,
       "SPAMD/1.0 76 "},
      {"empty Content-length", kCheck + "Content-length:\r\n\r\n", false, "SPAMD/1.0 76 "},
      {"two different Content-lengths", kCheck + "Content-length: 1\r\nContent-length: 2\r\n\r\nx",
       false, "SPAMD/1.0 76 "},
      // Request lines.
      {"unknown command", "FROB SPAMC/1.5\r\n\r\n", true, "SPAMD/1.0 76 "},
      {"lower-case command", "check SPAMC/1.5\r\n\r\n", true, "SPAMD/1.0 76 "},
      {"no protocol version", "CHECK\r\n\r\n", true, "SPAMD/1.0 76 "},
      {"bad protocol version", "CHECK SPAMC/3.0\r\n\r\n", true, "SPAMD/1.0 76 "},
      {"not SPAMC", "CHECK SPAMD/1.5\r\n\r\n", true, "SPAMD/1.0 76 "},
      {"HTTP", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", false, "SPAMD/1.0 76 "},
      {"binary", std::string("\0\xff\xfe\r\n", 5), false, "SPAMD/1.0 76 "},
      {"endless request line", std::string(10000, 'C'), false, "SPAMD/1.0 76 "},
      // Headers.
      {"header line too long", kCheck + "X-Long: " + std::string(10000, 'h') + "\r\n\r\n", false,
       "SPAMD/1.0 76 "},
      {"too many headers", kCheck + HeaderLines(kMaxHeaderLines + 1) + "\r\n", false,
       "SPAMD/1.0 76 "},
      {"header without a colon", kCheck + "Content-length 5\r\n\r\nhello", false, "SPAMD/1.0 76 "},
      {"User with a control character", kCheck + "User: a\x1b[2Jb\r\n\r\n", false, "SPAMD/1.0 76 "},
      {"unknown compression", kCheck + "Compress: gzip\r\nContent-length: 1\r\n\r\nx", false,
       "SPAMD/1.0 76 "},
      {"zlib data that does not inflate",
       kCheck + "Compress: zlib\r\nContent-length: 5\r\n\r\nhello", false, "SPAMD/1.0 65 "},
      // TELL.
      {"TELL when disabled",
       "TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nContent-length: 5\r\n\r\nhello",
       true, "SPAMD/1.0 77 "},
      {"TELL to set and remove at once",
       "TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nRemove: local\r\n"
       "Content-length: 1\r\n\r\nx",
       false, "SPAMD/1.0 76 "},
      {"TELL with an unknown class",
       "TELL SPAMC/1.5\r\nMessage-class: eggs\r\nSet: local\r\nContent-length: 1\r\n\r\nx", false,
       "SPAMD/1.0 76 "},
  };
  std::size_t errors = 0;
  std::size_t timeouts = 0;
  for (const BadRequest& request : requests) {
    const std::string response = Exchange(port_, request.input, request.end_input);
    if (request.status_line_prefix.empty()) {
      EXPECT_EQ(response, "") << request.name;
    } else {
      ++errors;
      if (request.status_line_prefix == "SPAMD/1.0 79 ") ++timeouts;
      EXPECT_TRUE(response.starts_with(request.status_line_prefix))
          << request.name << ": " << response;
      // Only the status line, as spamd: the connection then closes.
      EXPECT_EQ(response.find("\r\n"), response.size() - 2) << request.name << ": " << response;
    }
    EXPECT_EQ(Exchange(port_, "PING SPAMC/1.5\r\n\r\n"), "SPAMD/1.5 0 PONG\r\n") << request.name;
    EXPECT_EQ(Exchange(port_, CheckRequest("Subject: lunch\r\n\r\nat noon\r\n")),
              "SPAMD/1.1 0 EX_OK\r\nSpam: False ; -5.0 / 5.0\r\n\r\n")
        << request.name;
  }
  // Only the good requests reached the backend.
  const auto calls = backend_.Calls();
  EXPECT_EQ(calls.size(), std::size(requests));
  for (const auto& call : calls) EXPECT_EQ(call.message, "Subject: lunch\r\n\r\nat noon\r\n");
  EXPECT_EQ(listener_->counters().errors.load(), errors);
  EXPECT_EQ(listener_->counters().timeouts.load(), timeouts);
  EXPECT_EQ(listener_->counters().tells_refused.load(), 1u);
  EXPECT_EQ(listener_->counters().handler_exceptions.load(), 0u);
}

// A client that resets its connection mid-request (SO_LINGER 0) ends only that connection.
TEST_F(SpamdListenerTest, ResetMidRequestEndsOnlyThatConnection) {
  Start();
  for (int i = 0; i < 3; ++i) {
    net::io_context io;
    tcp::socket socket(io);
    socket.connect({net::ip::make_address("127.0.0.1"), port_});
    net::write(socket,
               net::buffer(std::string("CHECK SPAMC/1.5\r\nContent-length: 1000\r\n\r\nab")));
    socket.set_option(net::socket_base::linger(true, 0));
    socket.close();
  }
  EXPECT_EQ(Exchange(port_, "PING SPAMC/1.5\r\n\r\n"), "SPAMD/1.5 0 PONG\r\n");
  EXPECT_TRUE(backend_.Calls().empty());
}

TEST_F(SpamdListenerTest, ConnectionThatSendsNothingGetsNothing) {
  Start();
  EXPECT_EQ(Exchange(port_, ""), "");
  EXPECT_EQ(Exchange(port_, "SKIP SPAMC/1.5\r\n\r\n"), "");
  EXPECT_EQ(Exchange(port_, "PING SPAMC/1.2\r\n"), "SPAMD/1.5 0 PONG\r\n");
}

TEST_F(SpamdListenerTest, RequestNotSentInTimeGetsExTimeout) {
  SpamdOptions options;
  options.read_timeout = std::chrono::milliseconds(200);
  Start(options);
  const std::string response = Exchange(port_, "CHECK SPAMC/1.5\r\nContent-length: 10\r\n", false);
  EXPECT_TRUE(response.starts_with("SPAMD/1.0 79 Timeout: ")) << response;
  EXPECT_EQ(listener_->counters().timeouts.load(), 1u);
}

// A worker stuck on a request: past verdict_timeout the client gets EX_TEMPFAIL (Exim defers the
// message) at once, the late answer is dropped, and the listener serves on. TELL likewise.
TEST_F(SpamdListenerTest, ARequestWithoutAnAnswerInTimeGetsExTempfail) {
  SpamdOptions options;
  options.verdict_timeout = std::chrono::milliseconds(200);
  options.tell.grants.push_back({.source = "job", .addresses = {}, .users = {}});
  Start(options);
  backend_.HoldCompletions(true);
  const auto started = std::chrono::steady_clock::now();
  const std::string response = Exchange(port_, CheckRequest("Subject: viagra\r\n\r\nx"));
  EXPECT_TRUE(response.starts_with("SPAMD/1.0 75 Timeout: (0 second timeout waiting")) << response;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  const std::string tell = Exchange(
      port_,
      "TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nContent-length: 5\r\n\r\nhello");
  EXPECT_TRUE(tell.starts_with("SPAMD/1.0 75 ")) << tell;
  EXPECT_EQ(listener_->counters().verdict_timeouts.load(), 2u);
  backend_.Release();  // The late answers: dropped, no second response, no fault.
  backend_.HoldCompletions(false);
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: viagra\r\n\r\nx")),
            "SPAMD/1.1 0 EX_OK\r\nSpam: True ; 10.0 / 5.0\r\n\r\n");
  EXPECT_EQ(listener_->counters().handler_exceptions.load(), 0u);
  EXPECT_EQ(listener_->counters().verdict_timeouts.load(), 2u);
}

// Records what the listener reports, from any thread.
struct IncidentLog {
  void Add(const Incident& incident) {
    std::lock_guard lock(mutex);
    entries.push_back(std::string(incident.front_end) + " " +
                      std::string(IncidentKindName(incident.kind)) + " " +
                      std::string(incident.detail));
  }
  std::vector<std::string> Entries() {
    std::lock_guard lock(mutex);
    return entries;
  }
  std::mutex mutex;
  std::vector<std::string> entries;
};

// The client gets the status code only; the backend's own message goes to the incident hook.
TEST_F(SpamdListenerTest, BackendErrorsBecomeStatusCodes) {
  auto log = std::make_shared<IncidentLog>();
  SpamdOptions options;
  options.on_incident = [log](const Incident& incident) {
    log->Add(incident);
    throw std::runtime_error("a hook that throws is swallowed");
  };
  Start(options);
  backend_.SetClassifyError(Error{ErrorCode::kFailedPrecondition, "nothing learned"});
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: x\r\n\r\ny")),
            "SPAMD/1.0 69 the model cannot classify yet\r\n");
  backend_.SetClassifyError(Error{ErrorCode::kUnavailable, "shutting down"});
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: x\r\n\r\ny")),
            "SPAMD/1.0 75 temporarily unavailable, try again later\r\n");
  EXPECT_EQ(log->Entries(), (std::vector<std::string>{
                                "spamd backend_error CHECK: failed_precondition: nothing learned",
                                "spamd backend_error CHECK: unavailable: shutting down"}));
}

TEST_F(SpamdListenerTest, BackendExceptionEndsOnlyThatConnection) {
  auto log = std::make_shared<IncidentLog>();
  SpamdOptions options;
  options.on_incident = [log](const Incident& incident) { log->Add(incident); };
  Start(options);
  backend_.SetThrowOnClassify(true);
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: x\r\n\r\ny")), "");
  EXPECT_EQ(listener_->counters().handler_exceptions.load(), 1u);
  // Noted by NoteHandlerException (counted above, logged), not an incident.
  EXPECT_TRUE(log->Entries().empty());
  backend_.SetThrowOnClassify(false);
  EXPECT_EQ(Exchange(port_, CheckRequest("Subject: x\r\n\r\ny")),
            "SPAMD/1.1 0 EX_OK\r\nSpam: False ; -5.0 / 5.0\r\n\r\n");
}

TEST_F(SpamdListenerTest, TellRefusedBeforeItsMessageIsSent) {
  SpamdOptions options;
  options.tell.grants.push_back(MakeTellGrant("learning-job", {}, {"trainer"}));
  Start(options);
  // The client announces 100000 bytes and sends none: the refusal comes all the same.
  const std::string response =
      Exchange(port_,
               "TELL SPAMC/1.5\r\nMessage-class: spam\r\nSet: local\r\nUser: mallory\r\n"
               "Content-length: 100000\r\n\r\n",
               false);
  EXPECT_EQ(response, "SPAMD/1.0 77 TELL not allowed for this user\r\n");
  EXPECT_TRUE(backend_.Calls().empty());
  // The allowed user learns.
  EXPECT_EQ(Exchange(port_,
                     "TELL SPAMC/1.5\r\nMessage-class: ham\r\nSet: local\r\nUser: trainer\r\n"
                     "Content-length: 5\r\n\r\nhello"),
            "SPAMD/1.1 0 EX_OK\r\nDidSet: local\r\n\r\n");
  const auto calls = backend_.Calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].operation, "learn");
  EXPECT_EQ(calls[0].label, SpamdLabel::kHam);
  EXPECT_EQ(calls[0].context.source, "learning-job");
  EXPECT_EQ(calls[0].message, "hello");
}

TEST_F(SpamdListenerTest, StopClosesIdleConnectionsAndAnswersTheOneInFlight) {
  Start();
  backend_.HoldCompletions(true);
  auto in_flight = std::async(std::launch::async, [&] {
    return Exchange(port_, CheckRequest("Subject: viagra\r\n\r\nx"));
  });
  backend_.WaitForHeld(1);
  // An idle client: connected, nothing sent.
  net::io_context io;
  tcp::socket idle(io);
  idle.connect({net::ip::make_address("127.0.0.1"), port_});
  // Stop only once it is accepted: closing the acceptor resets connections still in its backlog.
  while (listener_->OpenConnections() < 2)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  std::promise<void> drained;
  auto drained_future = drained.get_future();
  listener_->Stop([&] { drained.set_value(); });
  stopped_ = true;

  char byte;
  boost::system::error_code ec;
  EXPECT_EQ(idle.read_some(net::buffer(&byte, 1), ec), 0u);
  EXPECT_EQ(ec, net::error::eof);
  // The request with the backend is still open, so not drained yet.
  EXPECT_EQ(drained_future.wait_for(std::chrono::seconds(0)), std::future_status::timeout);

  backend_.Release();
  EXPECT_EQ(in_flight.get(), "SPAMD/1.1 0 EX_OK\r\nSpam: True ; 10.0 / 5.0\r\n\r\n");
  drained_future.wait();
  EXPECT_EQ(listener_->OpenConnections(), 0u);
  // No longer accepting.
  tcp::socket late(io);
  late.connect({net::ip::make_address("127.0.0.1"), port_}, ec);
  EXPECT_TRUE(ec) << "connected after Stop";
}

TEST_F(SpamdListenerTest, BindFailureNamesTheAddress) {
  Start();
  auto second = SpamdListener::Create(context_, {net::ip::make_address("127.0.0.1"), port_},
                                      backend_, SpamdOptions{});
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(port_)), std::string::npos);
}

TEST_F(SpamdListenerTest, InvalidTellPolicyIsRefused) {
  SpamdOptions options;
  options.tell.grants.push_back(MakeTellGrant("not a name", {}, {}));
  auto listener = SpamdListener::Create(context_, {net::ip::make_address("127.0.0.1"), 0}, backend_,
                                        std::move(options));
  ASSERT_FALSE(listener.has_value());
  EXPECT_EQ(listener.error().code, ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace nbspamd::spamd
