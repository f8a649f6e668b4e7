// Fuzz target: the input, after its first byte, is the JSON body of a POST to /classify, /train
// or /forget, sent to the Router of a FuzzService, whose checks every response must pass
// (http_api/fuzz/fuzz_service.h). This reaches the JSON paths (Boost.JSON parsing, the fields and
// their types, the message in "text") without the HTTP framing in the way.
//
// First byte: bits 0-1 pick the endpoint (0 /classify, 1 /train, 2 /forget, 3 /classify with
// ?explain=5); bit 2 sends the request with the bearer token to the guarded router; bit 3 adds a
// query parameter the endpoint knows (?label=spam for /train, ?id=seed-ham-1 for /forget), to mix
// query and JSON parameters.
// Built with libFuzzer when NBSPAMD_FUZZ is on; tokenizer/fuzz/replay_main.cc runs saved inputs
// without it.
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "http_api/fuzz/fuzz_service.h"

namespace {

namespace http = boost::beast::http;
using nbspamd::http_api::Request;
using nbspamd::http_api::fuzz::FuzzService;
using nbspamd::http_api::fuzz::kFuzzToken;

std::string TargetFor(std::uint8_t selector) {
  const bool query = (selector & 0x08) != 0;
  switch (selector & 0x03) {
    case 0:
      return "/classify";
    case 1:
      return query ? "/train?label=spam" : "/train";
    case 2:
      return query ? "/forget?id=seed-ham-1" : "/forget";
    default:
      return "/classify?explain=5";
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const FuzzService& service = FuzzService::ForNextInput();
  Request request(http::verb::post, TargetFor(selector), 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::content_type, "application/json");
  if ((selector & 0x04) != 0) {
    request.set(http::field::authorization, "Bearer " + std::string(kFuzzToken));
  }
  request.body().assign(reinterpret_cast<const char*>(data + 1), size - 1);
  request.prepare_payload();
  service.Handle(request);
  return 0;
}
