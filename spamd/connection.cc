#include "spamd/connection.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#include "common/handler_guard.h"
#include "common/incident.h"
#include "spamd/response.h"

namespace nbspamd::spamd {

namespace net = boost::asio;
using boost::system::error_code;

namespace {

// How long unread input is drained after the response, before the connection closes anyway.
constexpr std::chrono::milliseconds kDrainTime{2000};

}  // namespace

SpamdConnection::SpamdConnection(net::ip::tcp::socket&& socket, SpamdBackend& backend,
                                 std::shared_ptr<const SpamdOptions> options,
                                 std::shared_ptr<SpamdConnectionRegistry> connections)
    : socket_(std::move(socket)),
      deadline_(socket_.get_executor()),
      backend_(backend),
      options_(std::move(options)),
      connections_(std::move(connections)),
      parser_(options_->limits) {}

SpamdConnection::~SpamdConnection() { connections_->Remove(this); }

void SpamdConnection::AnswerBackendError(const Error& error) {
  std::string detail(SpamdCommandName(parser_.request().command));
  detail.append(": ").append(ErrorCodeName(error.code)).append(": ").append(error.message);
  ReportIncident(options_->on_incident, {"spamd", IncidentKind::kBackendError, detail});
  DoWrite(ErrorResponse(FailureOf(error)), false);
}

template <class Step>
void SpamdConnection::Guarded(Step&& step) noexcept {
  if (GuardStep("spamd connection", "", connections_->counters.handler_exceptions, step)) return;
  try {
    Close();
  } catch (...) {
    // Closing cannot throw in practice (error codes are ignored); nothing more to do if it did.
  }
}

template <class Step>
void SpamdConnection::PostGuarded(Step&& step) {
  net::post(socket_.get_executor(),
            [self = shared_from_this(), step = std::forward<Step>(step)]() mutable {
              self->Guarded(step);
            });
}

void SpamdConnection::Run() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      if (!self->connections_->Add(self.get(), self)) return self->Close();
      self->connections_->counters.connections.fetch_add(1, std::memory_order_relaxed);
      error_code ec;
      const auto peer = self->socket_.remote_endpoint(ec);
      if (!ec) self->peer_ = peer.address();
      self->StartDeadline(Deadline::kRead, self->options_->read_timeout);
      self->DoRead();
    });
  });
}

void SpamdConnection::Shutdown() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      self->shutting_down_ = true;
      // Waiting for a request of which nothing has come: stop waiting. A request partly read,
      // or with the backend, is answered first.
      if (self->reading_ && !self->received_any_) self->socket_.cancel();
    });
  });
}

void SpamdConnection::StartDeadline(Deadline kind, std::chrono::milliseconds after) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), kind](error_code ec) {
    if (ec) return;  // Cancelled, or replaced by a later deadline.
    self->Guarded([&] {
      if (kind == Deadline::kRead) {
        if (!self->reading_) return;
        self->timed_out_ = true;
        self->socket_.cancel();
      } else if (kind == Deadline::kVerdict) {
        if (!self->TakeBackendAnswer()) return;
        self->connections_->counters.verdict_timeouts.fetch_add(1, std::memory_order_relaxed);
        const auto seconds =
            std::chrono::duration_cast<std::chrono::seconds>(self->options_->verdict_timeout);
        self->DoWrite(
            ErrorResponse({SpamdStatus::kTempFail, "Timeout: (" + std::to_string(seconds.count()) +
                                                       " second timeout waiting for the verdict)"}),
            false);
      } else {
        self->Close();
      }
    });
  });
}

void SpamdConnection::AwaitBackend() {
  awaiting_backend_ = true;
  StartDeadline(Deadline::kVerdict, options_->verdict_timeout);
}

bool SpamdConnection::TakeBackendAnswer() {
  if (!awaiting_backend_) return false;
  awaiting_backend_ = false;
  return true;
}

void SpamdConnection::DoRead() {
  reading_ = true;
  socket_.async_read_some(net::buffer(read_buffer_),
                          [self = shared_from_this()](error_code ec, std::size_t bytes) {
                            self->Guarded([&] { self->OnRead(ec, bytes); });
                          });
}

void SpamdConnection::OnRead(error_code ec, std::size_t bytes) {
  reading_ = false;
  if (!ec) {
    if (bytes > 0) received_any_ = true;
    return Advance(parser_.Feed(std::string_view(read_buffer_.data(), bytes)));
  }
  if (ec == net::error::eof) {
    input_ended_ = true;
    if (!received_any_) return Close();  // Connected and left: nothing to answer.
    return Advance(parser_.Finish());
  }
  if (ec == net::error::operation_aborted && timed_out_) {
    connections_->counters.timeouts.fetch_add(1, std::memory_order_relaxed);
    answering_ = true;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options_->read_timeout);
    return DoWrite(
        ErrorResponse({SpamdStatus::kTimeout, "Timeout: (" + std::to_string(seconds.count()) +
                                                  " second timeout reading the request)"}),
        false);
  }
  Close();  // Shut down while idle, or the peer reset the connection.
}

void SpamdConnection::Advance(ParseStatus status) {
  if (status == ParseStatus::kFailed) {
    answering_ = true;
    return DoWrite(ErrorResponse(parser_.failure()), false);
  }
  const SpamdRequest& request = parser_.request();
  if (parser_.headers_done() && !tell_checked_ && request.command == SpamdCommand::kTell) {
    // Refused before its message is read.
    tell_checked_ = true;
    auto source = CheckTell(options_->tell, peer_, request.user);
    if (!source) {
      connections_->counters.tells_refused.fetch_add(1, std::memory_order_relaxed);
      answering_ = true;
      return DoWrite(ErrorResponse(source.error()), false);
    }
    tell_source_ = std::move(*source);
  }
  if (status == ParseStatus::kComplete) {
    answering_ = true;
    return Serve();
  }
  if (shutting_down_ && !received_any_) return Close();
  DoRead();
}

void SpamdConnection::Serve() {
  deadline_.cancel();
  const SpamdRequest& request = parser_.request();
  switch (request.command) {
    case SpamdCommand::kPing:
      return DoWrite(PongResponse(), true);
    case SpamdCommand::kSkip:
      return DoClose();
    case SpamdCommand::kTell:
      return ServeTell();
    default:
      break;
  }
  RequestContext context;
  context.user = request.user;
  AwaitBackend();
  backend_.ClassifyAsync(
      request.body, context,
      [self = shared_from_this()](std::expected<SpamdVerdict, Error> verdict) mutable {
        self->PostGuarded([self, verdict = std::move(verdict)] {
          if (!self->TakeBackendAnswer()) return;  // Answered EX_TEMPFAIL at the deadline.
          if (!verdict) return self->AnswerBackendError(verdict.error());
          self->DoWrite(VerdictResponse(self->parser_.request(), *verdict), true);
        });
      });
}

void SpamdConnection::ServeTell() {
  const SpamdRequest& request = parser_.request();
  RequestContext context;
  context.user = request.user;
  context.source = tell_source_;
  // Set: remote and Remove: remote (collaborative reporting, spamc -C) have nothing to reach
  // here: they are answered without DidSet/DidRemove: remote, as spamd does when reporting fails.
  if (request.set_local) {
    const SpamdLabel label = request.message_class.value_or(SpamdLabel::kSpam);
    AwaitBackend();
    return backend_.LearnAsync(
        request.body, label, context,
        [self = shared_from_this()](std::expected<SpamdTellOutcome, Error> outcome) mutable {
          self->PostGuarded([self, outcome = std::move(outcome)] {
            if (!self->TakeBackendAnswer()) return;  // Answered EX_TEMPFAIL at the deadline.
            if (!outcome) return self->AnswerBackendError(outcome.error());
            self->DoWrite(TellResponse(outcome->changed, false), true);
          });
        });
  }
  if (request.remove_local) {
    AwaitBackend();
    return backend_.ForgetAsync(
        request.body, context,
        [self = shared_from_this()](std::expected<SpamdTellOutcome, Error> outcome) mutable {
          self->PostGuarded([self, outcome = std::move(outcome)] {
            if (!self->TakeBackendAnswer()) return;  // Answered EX_TEMPFAIL at the deadline.
            if (!outcome) {
              // Never learned: nothing removed, which is no error (spamc: "already un/learned").
              if (outcome.error().code == ErrorCode::kNotFound) {
                return self->DoWrite(TellResponse(false, false), true);
              }
              return self->AnswerBackendError(outcome.error());
            }
            self->DoWrite(TellResponse(false, outcome->changed), true);
          });
        });
  }
  DoWrite(TellResponse(false, false), true);
}

void SpamdConnection::DoWrite(std::string response, bool ok) {
  (ok ? connections_->counters.answered : connections_->counters.errors)
      .fetch_add(1, std::memory_order_relaxed);
  response_ = std::move(response);
  StartDeadline(Deadline::kWrite, options_->write_timeout);
  net::async_write(socket_, net::buffer(response_),
                   [self = shared_from_this()](error_code ec, std::size_t) {
                     self->Guarded([&] { self->OnWrite(ec); });
                   });
}

void SpamdConnection::OnWrite(error_code ec) {
  response_.clear();
  if (ec) return Close();
  DoClose();
}

void SpamdConnection::DoClose() {
  error_code ignored;
  socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  if (input_ended_) return Close();
  // Closing with unread input would reset the connection, and the client could lose the
  // response: read and drop what it still sends, for a moment, then close.
  StartDeadline(Deadline::kDrain, kDrainTime);
  DoDrain();
}

void SpamdConnection::DoDrain() {
  socket_.async_read_some(net::buffer(read_buffer_),
                          [self = shared_from_this()](error_code ec, std::size_t) {
                            self->Guarded([&] {
                              if (!ec) return self->DoDrain();
                              self->Close();
                            });
                          });
}

void SpamdConnection::Close() {
  error_code ignored;
  deadline_.cancel();
  socket_.close(ignored);
}

}  // namespace nbspamd::spamd
