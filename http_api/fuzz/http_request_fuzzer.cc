// Fuzz target: the input is what a client sends on one connection. Beast's request parser reads
// it with the daemon's default limits (http_api/http_limits.h), as http_server/connection_impl.h
// does, and each complete request (up to kMaxRequests, pipelined) goes to the Router of a
// FuzzService, whose checks every response must pass (http_api/fuzz/fuzz_service.h). Input the
// parser rejects is what the connection answers 400, 413 or 431 without the router: nothing more to
// check there. Built with libFuzzer when NBSPAMD_FUZZ is on; tokenizer/fuzz/replay_main.cc runs
// saved inputs without it.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "http_api/fuzz/fuzz_service.h"
#include "http_api/http_limits.h"

namespace {

namespace http = boost::beast::http;
using nbspamd::http_api::HttpLimits;
using nbspamd::http_api::fuzz::FuzzService;

constexpr int kMaxRequests = 8;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const FuzzService& service = FuzzService::ForNextInput();
  const HttpLimits limits;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < kMaxRequests && !rest.empty(); ++i) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
    parser.body_limit(limits.max_body_bytes);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done() && !rest.empty()) {
      const std::size_t used = parser.put(boost::asio::buffer(rest.data(), rest.size()), ec);
      rest.remove_prefix(used);
      if (ec || used == 0) break;
    }
    // need_more: the connection ended inside the request, which the connection just closes.
    if (!parser.is_done()) return 0;
    // The connection answers 413 itself for a declared length over the limit.
    if (const auto length = parser.content_length(); length && *length > limits.max_body_bytes) {
      return 0;
    }
    const bool keep_alive = parser.get().keep_alive();
    service.Handle(parser.release());
    if (!keep_alive) return 0;  // The connection closes after answering.
  }
  return 0;
}
