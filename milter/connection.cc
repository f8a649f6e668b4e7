#include "milter/connection.h"

#include <boost/asio/buffer.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <exception>

#include "common/handler_guard.h"
#include "common/log.h"

namespace nbspamd::milter {

namespace net = boost::asio;

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

}  // namespace

MilterConnection::MilterConnection(Socket socket, std::shared_ptr<const ConnectionContext> context,
                                   std::function<void(MilterConnection*)> on_closed)
    : socket_(std::move(socket)),
      deadline_(socket_.get_executor()),
      verdict_deadline_(socket_.get_executor()),
      context_(std::move(context)),
      on_closed_(std::move(on_closed)),
      decoder_(context_->connection.max_packet_bytes),
      conversation_(context_->conversation, *context_->counters) {}

MilterConnection::~MilterConnection() {
  if (on_closed_) on_closed_(this);
}

template <class Step>
void MilterConnection::Guarded(Step&& step) noexcept {
  // Of any type, a std::exception or not: counted and noted alike.
  if (GuardStep("milter connection", "", context_->counters->internal_errors, step)) return;
  // Whatever the step left half done, this connection cannot go on. Its pending operations then
  // complete with errors and release it.
  Close();
}

void MilterConnection::Run() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      MilterCounters::Add(self->context_->counters->connections);
      self->Process();
    });
  });
}

void MilterConnection::Shutdown() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      self->shutting_down_ = true;
      // Waiting between messages, with nothing of the next command received: stop waiting. A
      // message in flight is finished first; Process then closes.
      if (self->read_in_flight_ && !self->conversation_.InMessage() &&
          !self->decoder_.HasPartialPacket()) {
        self->Close();
      }
    });
  });
}

// Handles every complete command buffered, then writes, waits for the backend, closes or reads.
// REQUIRES: no read or write in flight.
void MilterConnection::Process() {
  if (closed_ || write_in_flight_ || read_in_flight_) return;
  while (!conversation_.AwaitingVerdict() && !close_after_write_) {
    auto next = decoder_.Next();
    if (!next) return Fail(next.error().message);
    if (!*next) break;
    Conversation::Step step = conversation_.Handle(std::move(**next));
    if (step.error) return Fail(step.error->message);
    for (const Reply& reply : step.replies) AppendEncoded(reply, output_);
    if (step.close) close_after_write_ = true;
    if (step.classify) StartClassify(std::move(*step.classify));
  }
  if (!output_.empty()) return DoWrite();
  if (close_after_write_) return Close();
  if (conversation_.AwaitingVerdict()) return;  // OnVerdict goes on.
  if (shutting_down_ && !conversation_.InMessage() && !decoder_.HasPartialPacket()) return Close();
  DoRead();
}

void MilterConnection::ArmDeadline() {
  deadline_.expires_after(context_->connection.read_timeout);
  deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    self->Guarded([&] {
      // A deadline that was cancelled, or moved on by a later read or write, is not a timeout.
      if (ec || !(self->read_in_flight_ || self->write_in_flight_) ||
          self->deadline_.expiry() > std::chrono::steady_clock::now()) {
        return;
      }
      MilterCounters::Add(self->context_->counters->timeouts);
      ReportIncident(
          self->context_->on_incident,
          {"milter", IncidentKind::kTimeout,
           self->read_in_flight_ ? "closed after the read timeout"
                                 : "closed, the MTA left our replies unread for the read timeout"});
      self->Close();  // Cancels the read or write; its handler then finds the connection closed.
    });
  });
}

void MilterConnection::DoRead() {
  read_in_flight_ = true;
  read_buffer_.resize(kReadChunk);
  ArmDeadline();
  socket_.async_read_some(
      net::buffer(read_buffer_),
      [self = shared_from_this()](boost::system::error_code ec, std::size_t bytes) {
        self->Guarded([&] { self->OnRead(ec, bytes); });
      });
}

void MilterConnection::OnRead(boost::system::error_code ec, std::size_t bytes) {
  read_in_flight_ = false;
  deadline_.cancel();
  if (ec) {
    // The MTA left. With part of a packet read, that packet was truncated: a protocol error.
    if (ec == net::error::eof && decoder_.HasPartialPacket()) {
      return Fail("the connection ended inside a packet");
    }
    return Close();
  }
  decoder_.Feed(std::string_view(read_buffer_.data(), bytes));
  Process();
}

void MilterConnection::DoWrite() {
  write_in_flight_ = true;
  writing_.swap(output_);
  output_.clear();
  ArmDeadline();  // An MTA that stops reading must not hold the connection for ever.
  net::async_write(socket_, net::buffer(writing_),
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     self->Guarded([&] { self->OnWrite(ec); });
                   });
}

void MilterConnection::OnWrite(boost::system::error_code ec) {
  write_in_flight_ = false;
  deadline_.cancel();
  writing_.clear();
  if (ec) return Close();
  Process();
}

void MilterConnection::StartClassify(ClassifyRequest request) {
  const std::uint64_t id = ++verdict_id_;
  verdict_pending_ = true;
  // A worker busy or stuck must not hold the MTA for ever: past verdict_timeout the fail mode
  // answers the message.
  verdict_deadline_.expires_after(context_->connection.verdict_timeout);
  verdict_deadline_.async_wait([self = shared_from_this(), id](boost::system::error_code ec) {
    self->Guarded([&] {
      if (ec || self->closed_ || !self->verdict_pending_ || id != self->verdict_id_) return;
      MilterCounters::Add(self->context_->counters->verdict_timeouts);
      ReportIncident(self->context_->on_incident,
                     {"milter", IncidentKind::kTimeout,
                      "no verdict within the verdict timeout: the fail mode answered"});
      self->OnVerdict(id, std::unexpected(Error{ErrorCode::kUnavailable,
                                                "no verdict within the verdict timeout"}));
    });
  });
  // The answer may come on any thread, or before ClassifyAsync returns: it always comes back to
  // the strand through post, so that it never runs inside Process.
  context_->backend->ClassifyAsync(
      std::move(request.message), std::move(request.context),
      [self = shared_from_this(), id](std::expected<MilterVerdict, Error> verdict) mutable {
        auto executor = self->socket_.get_executor();
        net::post(executor, [self = std::move(self), id, verdict = std::move(verdict)]() mutable {
          self->Guarded([&] { self->OnVerdict(id, std::move(verdict)); });
        });
      });
}

void MilterConnection::OnVerdict(std::uint64_t id, std::expected<MilterVerdict, Error> verdict) {
  if (closed_ || !verdict_pending_ || id != verdict_id_) return;  // Late: already answered.
  verdict_pending_ = false;
  verdict_deadline_.cancel();
  for (const Reply& reply : conversation_.Finish(std::move(verdict))) AppendEncoded(reply, output_);
  Process();
}

void MilterConnection::Fail(std::string_view why) {
  MilterCounters::Add(context_->counters->protocol_errors);
  ReportIncident(context_->on_incident, {"milter", IncidentKind::kProtocolError, why});
  // The replies to the commands before the bad one (the verdict of a whole message, say) are
  // still owed: written first, then the connection closes. Nothing more is read.
  close_after_write_ = true;
  if (!output_.empty() && !write_in_flight_) return DoWrite();
  Close();
}

void MilterConnection::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  deadline_.cancel();
  verdict_deadline_.cancel();
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
}

}  // namespace nbspamd::milter
