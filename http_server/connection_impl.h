// The definitions of BasicHttpConnection's members, for the two files that instantiate it
// (connection_tcp.cc, connection_tls.cc): each stream type compiles on its own. Include
// nowhere else.
#ifndef NBSPAMD_HTTP_SERVER_CONNECTION_IMPL_H_
#define NBSPAMD_HTTP_SERVER_CONNECTION_IMPL_H_

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream_base.hpp>
#include <boost/beast/core/buffers_generator.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/file_body.hpp>
#include <boost/beast/http/message_generator.hpp>
#include <boost/beast/http/read.hpp>
#include <string>

#include "common/handler_guard.h"
#include "common/log.h"
#include "http_api/endpoints.h"
#include "http_server/connection.h"
#include "http_server/file_from.h"
#include "http_server/head_response.h"
#include "http_server/request_id.h"

namespace nbspamd::http_server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;

template <class Stream>
BasicHttpConnection<Stream>::BasicHttpConnection(net::ip::tcp::socket&& socket,
                                                 const http_api::Router& router,
                                                 const http_api::HttpLimits& limits,
                                                 HttpConnectionRegistry& registry) requires(!kTls)
    : stream_(std::move(socket)), router_(router), limits_(limits), registry_(registry) {
  router_.metrics().HttpConnections().open.fetch_add(1, std::memory_order_relaxed);
}

template <class Stream>
BasicHttpConnection<Stream>::BasicHttpConnection(net::ip::tcp::socket&& socket,
                                                 net::ssl::context& tls,
                                                 const http_api::Router& router,
                                                 const http_api::HttpLimits& limits,
                                                 HttpConnectionRegistry& registry) requires(kTls)
    : stream_(std::move(socket), tls), router_(router), limits_(limits), registry_(registry) {
  router_.metrics().HttpConnections().open.fetch_add(1, std::memory_order_relaxed);
}

template <class Stream>
BasicHttpConnection<Stream>::~BasicHttpConnection() {
  registry_.Remove(this);
  ReleaseBody();
  auto& gauges = router_.metrics().HttpConnections();
  gauges.read_buffer_bytes.fetch_sub(static_cast<std::int64_t>(counted_buffer_bytes_),
                                     std::memory_order_relaxed);
  gauges.open.fetch_sub(1, std::memory_order_relaxed);
}

template <class Stream>
template <class Step>
void BasicHttpConnection<Stream>::Guarded(Step&& step) noexcept {
  if (GuardStep("http connection", request_id_,
                router_.metrics().HandlerExceptions(http_api::InternalError::kHttpConnection),
                step))
    return;
  // Whatever the step left half done, this connection cannot go on: close it. Its pending
  // operations then complete with errors and release the connection.
  beast::error_code ignored;
  Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  Tcp().socket().close(ignored);
}

template <class Stream>
void BasicHttpConnection<Stream>::Run() {
  // Start on the connection's strand: all later handlers run there too.
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      if (!self->registry_.Add(self.get(), self)) return self->DoClose();
      if constexpr (kTls) {
        // The handshake has the idle timeout of a request's first bytes.
        self->Tcp().expires_after(self->limits_.idle_timeout);
        self->stream_.async_handshake(net::ssl::stream_base::server, [self](beast::error_code ec) {
          self->Guarded([&] { self->OnHandshake(ec); });
        });
      } else {
        self->DoReadHeader();
      }
    });
  });
}

template <class Stream>
void BasicHttpConnection<Stream>::OnHandshake(beast::error_code ec) {
  // A client that speaks plain HTTP, or fails to agree on TLS, is closed: there is no channel to
  // answer it on.
  if (ec) {
    beast::error_code ignored;
    Tcp().socket().close(ignored);
    return;
  }
  DoReadHeader();
}

template <class Stream>
void BasicHttpConnection<Stream>::Shutdown() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
    self->Guarded([&] {
      self->shutting_down_ = true;
      // Waiting for a request with none of it received: stop waiting. A request in flight, or
      // one whose first bytes have arrived, is answered first; OnWrite then closes.
      if (!self->in_flight_ && self->buffer_.size() == 0) self->Tcp().cancel();
    });
  });
}

template <class Stream>
void BasicHttpConnection<Stream>::DoReadHeader() {
  // The buffer keeps the room its last requests needed, so that the next one of their size is
  // read whole at once; room grown past 16 KiB for a large body is given back once its request
  // is answered.
  if (buffer_.capacity() > kReadRoomBytes) buffer_.shrink_to_fit();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_.max_header_bytes));
  parser_->body_limit(limits_.max_body_bytes);
  // One deadline for the whole request, header and body: a client that sends its header slowly
  // does not get the timeout a second time for its body.
  read_deadline_ = std::chrono::steady_clock::now() + limits_.idle_timeout;
  Tcp().expires_at(read_deadline_);
  Receive(ReadUntil::kHeader);
}

template <class Stream>
void BasicHttpConnection<Stream>::Receive(ReadUntil until) {
  // Beast's async_read_header and async_read are this loop, each a whole instantiation.
  const bool done = until == ReadUntil::kHeader ? parser_->is_header_done() : parser_->is_done();
  if (done) return until == ReadUntil::kHeader ? OnReadHeader() : OnReadBody();
  // Beast's first read takes 512 bytes; taking them here lets the gauge count them.
  if (buffer_.capacity() == 0) buffer_.reserve(kFirstReadBytes);
  if (buffer_.capacity() != counted_buffer_bytes_) {
    router_.metrics().HttpConnections().read_buffer_bytes.fetch_add(
        static_cast<std::int64_t>(buffer_.capacity()) -
            static_cast<std::int64_t>(counted_buffer_bytes_),
        std::memory_order_relaxed);
    counted_buffer_bytes_ = buffer_.capacity();
  }
  http::async_read_some(
      stream_, buffer_, *parser_,
      [self = shared_from_this(), until](beast::error_code ec, std::size_t parsed) {
        self->Guarded([&] {
          if (ec) return self->OnReadError(ec);
          // A chunked body that filled its read comes faster than 512 bytes a read: room.
          if (parsed >= kFirstReadBytes && self->parser_->chunked()) {
            self->buffer_.reserve(kReadRoomBytes);  // No-op when it has it.
          }
          self->Receive(until);
        });
      });
}

template <class Stream>
void BasicHttpConnection<Stream>::OnReadHeader() {
  in_flight_ = true;
  BeginRequest();
  const auto& request = parser_->get();
  if (const auto length = parser_->content_length(); length && *length > limits_.max_body_bytes) {
    unread_input_ = true;
    return DoWrite(http_api::ErrorResponse(http::status::payload_too_large, "payload_too_large",
                                           "the body is larger than the limit of " +
                                               std::to_string(limits_.max_body_bytes) + " bytes",
                                           request.version()),
                   /*close=*/true);
  }
  // Admission of the body's bytes, before it is read (a probe is never refused).
  const http_api::EndpointSpec* spec = http_api::SpecOf(endpoint_);
  if (spec == nullptr || spec->admitted) {
    const std::uint64_t bytes =
        parser_->content_length().value_or(parser_->chunked() ? limits_.max_body_bytes : 0);
    if (bytes > 0) {
      std::optional<Admission::Ticket> ticket = registry_.body_bytes.TryAdmit(bytes);
      if (!ticket) {
        unread_input_ = true;
        http_api::Response response = http_api::ErrorResponse(
            http::status::service_unavailable, "overloaded",
            "too many request bytes in flight (max_in_flight_bytes); try again shortly",
            request.version());
        response.set(http::field::retry_after, "1");
        return DoWrite(std::move(response), /*close=*/true);
      }
      body_ticket_.emplace(std::move(*ticket));
      body_ticket_bytes_ = bytes;
      router_.metrics().HttpConnections().body_bytes_in_flight.fetch_add(
          static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
    }
  }
  // A client that waits for "100 Continue" (curl does for bodies over 1 KiB) gets it now.
  // (No Content-Length: an empty string body adds nothing to the head.)
  if (beast::iequals(request[http::field::expect], "100-continue")) {
    return Send(http_api::Response(http::status::continue_, request.version()),
                AfterWrite::kReadBody);
  }
  DoReadBody();
}

template <class Stream>
void BasicHttpConnection<Stream>::BeginRequest() {
  started_ = std::chrono::steady_clock::now();
  endpoint_ = http_api::Endpoint::kOther;
  method_.clear();
  request_id_.clear();
  // What the parser got of the header: all of it, or the start line and fields before an error
  // such as a body over the limit (nothing, for a malformed start line).
  auto& request = parser_->get();
  if (!request.target().empty()) {
    endpoint_ = http_api::EndpointOf(request.target());
    method_ = std::string(request.method_string());
    const std::string_view client_id = request["X-Request-Id"];
    if (IsUsableRequestId(client_id)) request_id_ = std::string(client_id);
  }
  if (request_id_.empty()) request_id_ = NewRequestId();
  request.set("X-Request-Id", request_id_);  // The router's log lines can name it.
}

template <class Stream>
void BasicHttpConnection<Stream>::DoReadBody() {
  // Beast reads at most the buffer's free capacity, and 512 bytes when it has none: a 5 KB
  // message took eleven reads. The room follows what the client has declared: the rest of a
  // declared body, up to Beast's largest read (64 KiB), in one read where it fits. (A chunked
  // body, whose size is unknown, gets 16 KiB once a read has filled its 512 bytes: Receive.) A
  // client that stalls holds no more than it said it would send, or has sent.
  // (The buffer holds the body's first bytes, unparsed, and perhaps the next request.)
  if (const auto length = parser_->content_length_remaining(); length) {
    const std::uint64_t unread = *length > buffer_.size() ? *length - buffer_.size() : 0;
    buffer_.reserve(buffer_.size() + std::min<std::uint64_t>(unread, kBodyReadBytes));
  }
  Tcp().expires_at(read_deadline_);
  Receive(ReadUntil::kBody);
}

template <class Stream>
void BasicHttpConnection<Stream>::OnReadBody() {
  const http_api::Request request = parser_->release();
  // Training is answered from the writer thread once durable: come back to the strand to write.
  // In the meantime this I/O thread serves other connections.
  router_.HandleAsync(request, [self = shared_from_this(), close = !request.keep_alive()](
                                   http_api::Response response) mutable {
    net::dispatch(self->stream_.get_executor(),
                  [self, close, response = std::move(response)]() mutable {
                    self->Guarded([&] { self->DoWrite(std::move(response), close); });
                  });
  });
}

template <class Stream>
void BasicHttpConnection<Stream>::OnReadError(beast::error_code ec) {
  const unsigned version = parser_->is_header_done() ? parser_->get().version() : 11;
  if (ec == http::error::end_of_stream || ec == net::error::operation_aborted ||
      ec == beast::error::timeout || ec == net::error::connection_reset || ec == net::error::eof ||
      ec == net::ssl::error::stream_truncated) {  // A TLS peer that left without close_notify.
    return DoClose();  // The peer left, went idle, or shutdown asked us to stop waiting.
  }
  in_flight_ = true;
  unread_input_ = true;  // The rest of this request was not read.
  BeginRequest();
  if (ec == http::error::body_limit) {
    return DoWrite(http_api::ErrorResponse(http::status::payload_too_large, "payload_too_large",
                                           "the body is larger than the limit of " +
                                               std::to_string(limits_.max_body_bytes) + " bytes",
                                           version),
                   true);
  }
  if (ec == http::error::header_limit) {
    return DoWrite(
        http_api::ErrorResponse(http::status::request_header_fields_too_large, "header_too_large",
                                "the request headers are too large", version),
        true);
  }
  if (ec == http::error::partial_message) return DoClose();
  DoWrite(http_api::ErrorResponse(http::status::bad_request, "bad_request",
                                  "malformed HTTP request: " + ec.message(), version),
          true);
}

template <class Stream>
void BasicHttpConnection<Stream>::ReleaseBody() {
  if (!body_ticket_) return;
  router_.metrics().HttpConnections().body_bytes_in_flight.fetch_sub(
      static_cast<std::int64_t>(body_ticket_bytes_), std::memory_order_relaxed);
  body_ticket_.reset();
  body_ticket_bytes_ = 0;
}

template <class Stream>
void BasicHttpConnection<Stream>::DoWrite(http_api::Response response, bool close) {
  ReleaseBody();  // The request is answered: its body's bytes are free for others.
  if (method_ == "HEAD") response = HeadOf(std::move(response));
  close = close || shutting_down_;
  response.keep_alive(!close);
  response.set("X-Request-Id", request_id_);
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - started_);
  router_.metrics().RecordResponse(endpoint_, response.result_int(), latency);
  if (LogEnabled(LogLevel::kDebug) || response.result_int() >= 500) {
    const std::string status = std::to_string(response.result_int());
    const std::string micros = std::to_string(latency.count());
    Log(response.result_int() >= 500 ? LogLevel::kError : LogLevel::kDebug, "request",
        {{"request_id", request_id_},
         {"method", method_},
         {"endpoint", EndpointName(endpoint_)},
         {"status", status},
         {"micros", micros}});
  }
  if (const auto file = response.find(http_api::kBodyFileField); file != response.end()) {
    return DoWriteFile(std::move(response), std::string(file->value()), close);
  }
  Send(std::move(response), close ? AfterWrite::kClose : AfterWrite::kReadNext);
}

template <class Stream>
void BasicHttpConnection<Stream>::DoWriteFile(http_api::Response head, const std::string& path,
                                              bool close) {
  http::response<http::basic_file_body<FileFrom>> response(head.result(), head.version());
  beast::error_code ec;
  FileFrom file(BodyFileOffset(head));
  file.open(path.c_str(), beast::file_mode::scan, ec);
  ::unlink(path.c_str());  // The open file stays readable until the body is sent.
  if (!ec) response.body().reset(std::move(file), ec);
  if (ec) {
    LogError("cannot send the body file " + path + ": " + ec.message());
    return DoWrite(http_api::ErrorResponse(http::status::internal_server_error, "internal",
                                           "the response's body could not be read", head.version()),
                   true);
  }
  for (const auto& field : head) {
    if (field.name_string() != http_api::kBodyFileField &&
        field.name_string() != http_api::kBodyFileOffsetField)
      response.insert(field.name_string(), field.value());
  }
  response.keep_alive(!close);
  response.prepare_payload();
  Send(std::move(response), close ? AfterWrite::kClose : AfterWrite::kReadNext);
}

template <class Stream>
void BasicHttpConnection<Stream>::Send(http::message_generator message, AfterWrite next) {
  Tcp().expires_after(limits_.idle_timeout);
  beast::async_write(stream_, std::move(message),
                     [self = shared_from_this(), next](beast::error_code ec, std::size_t) {
                       self->Guarded([&] { self->OnWrite(next, ec); });
                     });
}

template <class Stream>
void BasicHttpConnection<Stream>::OnWrite(AfterWrite next, beast::error_code ec) {
  if (next == AfterWrite::kReadBody) {  // "100 Continue" is out: the request's body follows.
    if (ec) return DoClose();
    return DoReadBody();
  }
  in_flight_ = false;
  if (ec || next == AfterWrite::kClose || shutting_down_) return DoClose();
  DoReadHeader();
}

template <class Stream>
void BasicHttpConnection<Stream>::DoClose() {
  beast::error_code ignored;
  if constexpr (kTls) {
    if (!unread_input_) {
      // TLS ends with close_notify both ways, for at most 2 s, then the socket closes.
      Tcp().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = shared_from_this()](beast::error_code) {
        self->Guarded([&] {
          beast::error_code ignored_too;
          self->Tcp().socket().close(ignored_too);
        });
      });
      return;
    }
  } else {
    Tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    if (!unread_input_) {
      Tcp().socket().close(ignored);
      return;
    }
  }
  // Closing with unread bytes would reset the connection and could destroy the error response
  // before the client reads it (an early 413 leaves the body unread): read and drop what the
  // client still sends, for a short while, then close.
  Tcp().expires_after(std::chrono::seconds(2));
  DoDrain();
}

template <class Stream>
void BasicHttpConnection<Stream>::DoDrain() {
  buffer_.clear();
  stream_.async_read_some(buffer_.prepare(64 * 1024),
                          [self = shared_from_this()](beast::error_code ec, std::size_t) {
                            self->Guarded([&] {
                              if (!ec) return self->DoDrain();
                              beast::error_code ignored;
                              self->Tcp().socket().close(ignored);
                            });
                          });
}

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_CONNECTION_IMPL_H_
