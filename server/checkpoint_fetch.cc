#include "server/checkpoint_fetch.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/file.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/file_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/json.hpp>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/sha256.h"
#include "common/version.h"

namespace nbspamd::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::uint64_t kMaxManifestBytes = 16 * 1024 * 1024;
constexpr std::uint64_t kMaxErrorBodyBytes = 64 * 1024;

std::unexpected<Error> PeerError(const PeerRequest& request, ErrorCode code,
                                 const std::string& what) {
  return MakeError(code, request.peer.url + ": " + what);
}

// One connection to the peer (over TLS for an https:// one, its certificate checked against the
// peer's host name), each asynchronous step run to its end on a private I/O context within
// io_timeout and the deadline (Beast's timeouts hold for asynchronous operations only).
class PeerConnection {
 public:
  explicit PeerConnection(const PeerRequest& request) : request_(request) {
    if (!request.peer.tls) {
      plain_.emplace(context_);
      return;
    }
    beast::error_code ec;
    tls_.set_verify_mode(net::ssl::verify_peer, ec);
    if (request.ca_file.empty()) {
      tls_.set_default_verify_paths(ec);
    } else {
      tls_.load_verify_file(request.ca_file, ec);
    }
    if (ec) tls_error_ = ec.message();
    secure_.emplace(context_, tls_);
  }

  // Connects, and shakes hands over TLS. Errors: kInvalidArgument for a CA file that cannot be
  // read, kFailedPrecondition for a handshake TLS refused (a certificate not trusted or not the
  // peer's), kUnavailable for no answer.
  std::expected<void, Error> Connect() {
    if (!tls_error_.empty()) {
      return MakeError(ErrorCode::kInvalidArgument, "cluster_join_ca_file: cannot read " +
                                                        request_.ca_file + " (" + tls_error_ + ")");
    }
    tcp::resolver resolver(context_);
    beast::error_code ec;
    const auto endpoints =
        resolver.resolve(request_.peer.host, std::to_string(request_.peer.port), ec);
    if (!ec) {
      ec = Visit([&](auto& stream, auto handler) {
        beast::get_lowest_layer(stream).async_connect(endpoints, std::move(handler));
      });
    }
    if (ec) return PeerError(request_, ErrorCode::kUnavailable, "no answer (" + ec.message() + ")");
    if (!secure_) return {};
    beast::error_code not_ip;
    (void)net::ip::make_address(request_.peer.host, not_ip);
    if (not_ip) SSL_set_tlsext_host_name(secure_->native_handle(), request_.peer.host.c_str());
    secure_->set_verify_callback(net::ssl::host_name_verification(request_.peer.host));
    ec = Visit([&](auto& stream, auto handler) {
      if constexpr (requires { stream.async_handshake(net::ssl::stream_base::client, handler); }) {
        stream.async_handshake(net::ssl::stream_base::client, std::move(handler));
      }
    });
    if (!ec) return {};
    if (ec.category() == net::error::get_ssl_category()) {
      return PeerError(request_, ErrorCode::kFailedPrecondition,
                       "the TLS handshake failed (" + ec.message() +
                           "): is its certificate signed by cluster_join_ca_file, for this name?");
    }
    return PeerError(request_, ErrorCode::kUnavailable,
                     "the TLS handshake broke off (" + ec.message() + ")");
  }

  template <class Message>
  beast::error_code Write(Message& message) {
    return Visit([&](auto& stream, auto handler) {
      http::async_write(stream, message, std::move(handler));
    });
  }
  template <class Parser>
  beast::error_code ReadHeader(Parser& parser) {
    return Visit([&](auto& stream, auto handler) {
      http::async_read_header(stream, buffer_, parser, std::move(handler));
    });
  }
  template <class Parser>
  beast::error_code Read(Parser& parser) {
    return Visit([&](auto& stream, auto handler) {
      http::async_read(stream, buffer_, parser, std::move(handler));
    });
  }
  template <class Parser>
  beast::error_code ReadSome(Parser& parser) {
    return Visit([&](auto& stream, auto handler) {
      http::async_read_some(stream, buffer_, parser, std::move(handler));
    });
  }

 private:
  // Runs the operation `start(stream, handler)` begins on the connection's stream to its end.
  template <class Start>
  beast::error_code Visit(Start start) {
    if (secure_) return Run(*secure_, start);
    return Run(*plain_, start);
  }
  template <class Stream, class Start>
  beast::error_code Run(Stream& stream, Start& start) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= request_.deadline) return beast::error::timeout;
    beast::get_lowest_layer(stream).expires_after(std::min<std::chrono::steady_clock::duration>(
        request_.io_timeout, request_.deadline - now));
    beast::error_code result = net::error::operation_not_supported;
    start(stream, [&result](beast::error_code ec, auto&&...) { result = ec; });
    context_.restart();
    context_.run();
    return result;
  }

  const PeerRequest& request_;
  net::io_context context_;
  net::ssl::context tls_{net::ssl::context::tls_client};
  std::string tls_error_;  // Why the CA file could not be read.
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure_;
  beast::flat_buffer buffer_;
};

http::request<http::empty_body> PeerMessage(const PeerRequest& request, http::verb method,
                                            const std::string& target) {
  http::request<http::empty_body> message(method, target, 11);
  const bool v6 = request.peer.host.find(':') != std::string::npos;
  message.set(http::field::host, (v6 ? "[" + request.peer.host + "]" : request.peer.host) + ":" +
                                     std::to_string(request.peer.port));
  message.set(http::field::user_agent, std::string("nbspamd/") + kVersion);
  if (!request.token.empty()) message.set(http::field::authorization, "Bearer " + request.token);
  message.keep_alive(false);
  message.prepare_payload();
  return message;
}

// The error a non-2xx answer stands for, with the peer's own message when it sent one.
std::unexpected<Error> AnswerError(const PeerRequest& request, unsigned status,
                                   std::string_view body) {
  std::string said;
  boost::system::error_code ec;
  const boost::json::value value = boost::json::parse(body, ec);
  if (!ec && value.is_object()) {
    const auto* error = value.get_object().if_contains("error");
    const auto* message =
        error && error->is_object() ? error->get_object().if_contains("message") : nullptr;
    if (message && message->is_string()) said = std::string(message->get_string());
  }
  const std::string answer =
      "answered " + std::to_string(status) + (said.empty() ? std::string() : " (" + said + ")");
  switch (status) {
    case 401:
      return PeerError(request, ErrorCode::kUnauthenticated,
                       "it wants a token (set cluster_join_token_file to one of its "
                       "auth_tokens): " +
                           answer);
    case 403:
      return PeerError(request, ErrorCode::kPermissionDenied,
                       "it refused the token of cluster_join_token_file: " + answer);
    case 404:
      return PeerError(request, ErrorCode::kNotFound, answer);
    case 409:
      return PeerError(request, ErrorCode::kFailedPrecondition, answer);
    default:
      break;
  }
  if (status >= 500) return PeerError(request, ErrorCode::kUnavailable, answer);
  return PeerError(request, ErrorCode::kFailedPrecondition, answer);
}

// Reads the rest of an answer whose header `head` holds, and the error it stands for.
std::unexpected<Error> ReadAnswerError(const PeerRequest& request, PeerConnection& connection,
                                       http::response_parser<http::string_body>& head) {
  const unsigned status = head.get().result_int();
  (void)connection.Read(head);  // A body cut short still has its status.
  return AnswerError(request, status, head.get().body());
}

}  // namespace

std::expected<http_api::CheckpointManifest, Error> RequestCheckpoint(const PeerRequest& request) {
  PeerConnection connection(request);
  if (auto connected = connection.Connect(); !connected) {
    return std::unexpected(std::move(connected.error()));
  }
  auto message = PeerMessage(request, http::verb::post, "/admin/checkpoint");
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxManifestBytes);
  beast::error_code ec = connection.Write(message);
  if (!ec) ec = connection.Read(parser);
  if (ec) {
    return PeerError(request, ErrorCode::kUnavailable,
                     "asking for a checkpoint broke off (" + ec.message() + ")");
  }
  if (parser.get().result() != http::status::ok) {
    return AnswerError(request, parser.get().result_int(), parser.get().body());
  }
  auto manifest = http_api::ParseCheckpointManifest(parser.get().body());
  if (!manifest) return PeerError(request, manifest.error().code, manifest.error().message);
  return manifest;
}

std::expected<void, Error> ReleaseCheckpoint(const PeerRequest& request, const std::string& id) {
  PeerConnection connection(request);
  if (auto connected = connection.Connect(); !connected) {
    return std::unexpected(std::move(connected.error()));
  }
  auto message = PeerMessage(request, http::verb::delete_, "/admin/checkpoint/" + id);
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxErrorBodyBytes);
  beast::error_code ec = connection.Write(message);
  if (!ec) ec = connection.Read(parser);
  if (ec) {
    return PeerError(request, ErrorCode::kUnavailable,
                     "releasing checkpoint " + id + " broke off (" + ec.message() + ")");
  }
  if (parser.get().result() != http::status::ok) {
    return AnswerError(request, parser.get().result_int(), parser.get().body());
  }
  return {};
}

std::expected<std::uint64_t, Error> FetchCheckpointFile(const PeerRequest& request,
                                                        const std::string& id,
                                                        const http_api::CheckpointFile& file,
                                                        const std::string& path) {
  std::error_code fs_error;
  std::uint64_t have =
      std::filesystem::exists(path, fs_error) ? std::filesystem::file_size(path, fs_error) : 0;
  if (fs_error || have > file.size) {
    std::filesystem::remove(path, fs_error);
    have = 0;
  }
  std::uint64_t received = 0;
  if (have < file.size || !std::filesystem::exists(path, fs_error)) {
    PeerConnection connection(request);
    if (auto connected = connection.Connect(); !connected) {
      return std::unexpected(std::move(connected.error()));
    }
    auto message =
        PeerMessage(request, http::verb::get, "/admin/checkpoint/" + id + "/" + file.name);
    if (have > 0) message.set(http::field::range, "bytes=" + std::to_string(have) + "-");
    // No limit while the header is read (Beast checks Content-Length against it there): a file
    // is as large as it is; an error answer's body gets one below.
    http::response_parser<http::string_body> head;
    head.body_limit(boost::none);
    beast::error_code ec = connection.Write(message);
    if (!ec) ec = connection.ReadHeader(head);
    if (ec) {
      return PeerError(request, ErrorCode::kUnavailable,
                       "asking for " + file.name + " broke off (" + ec.message() + ")");
    }
    const http::status status = head.get().result();
    const bool resumed = status == http::status::partial_content;
    if (status != http::status::ok && !resumed) {
      if (status == http::status::range_not_satisfiable) std::filesystem::remove(path, fs_error);
      head.body_limit(kMaxErrorBodyBytes);
      return ReadAnswerError(request, connection, head);
    }
    if (resumed && !std::string_view(head.get()[http::field::content_range])
                        .starts_with("bytes " + std::to_string(have) + "-")) {
      std::filesystem::remove(path, fs_error);
      return PeerError(request, ErrorCode::kUnavailable,
                       "it resumed " + file.name + " elsewhere than asked: starting it again");
    }
    // Never more than the manifest's size on disk, whatever the peer sends.
    const std::uint64_t due = file.size - (resumed ? have : 0);
    if (head.content_length() && *head.content_length() != due) {
      return PeerError(request, ErrorCode::kDataLoss,
                       "it sends " + std::to_string(*head.content_length()) + " bytes of " +
                           file.name + " where " + std::to_string(due) + " are due");
    }
    http::response_parser<http::file_body> body(std::move(head));
    body.body_limit(due);
    body.get().body().open(path.c_str(),
                           resumed ? beast::file_mode::append : beast::file_mode::write, ec);
    if (ec) {
      return MakeError(ErrorCode::kInternal, "cannot write " + path + ": " + ec.message());
    }
    while (!ec && !body.is_done()) {
      if (request.stop && request.stop()) ec = net::error::operation_aborted;
      if (!ec) ec = connection.ReadSome(body);
    }
    body.get().body().close();  // A failed write was the read's error.
    std::uint64_t now_have = std::filesystem::file_size(path, fs_error);
    if (fs_error) now_have = resumed ? have : 0;
    received = now_have - std::min(now_have, resumed ? have : std::uint64_t{0});
    if (ec) {
      return PeerError(request, ErrorCode::kUnavailable,
                       "the transfer of " + file.name + " broke off at byte " +
                           std::to_string(now_have) + " of " + std::to_string(file.size) + " (" +
                           ec.message() + ")");
    }
  }
  auto digest = Sha256OfFile(path);
  if (!digest) return std::unexpected(std::move(digest.error()));
  if (digest->size != file.size || digest->sha256 != file.sha256) {
    std::filesystem::remove(path, fs_error);
    return PeerError(request, ErrorCode::kDataLoss,
                     file.name + " arrived with " + std::to_string(digest->size) +
                         " bytes and SHA-256 " + digest->sha256 + ", but the manifest says " +
                         std::to_string(file.size) + " bytes and " + file.sha256);
  }
  return received;
}

}  // namespace nbspamd::server
