#include "http_api/fuzz/fuzz_service.h"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "storage/memory_store.h"

namespace nbspamd::http_api::fuzz {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// What the model knows before any fuzz input: enough for /classify to answer, and ids for
// /forget and /train to find.
struct Seed {
  const char* label;
  const char* id;
  const char* message;
};
constexpr Seed kSeeds[] = {
    {"spam", "seed-spam-1",
     "Subject: You won a FREE prize\nFrom: Lucky <win@prize.example>\n\n"
     "Claim your free prize now at http://prize.example/claim cheap pills casino"},
    {"spam", "seed-spam-2", "Cheap pills, casino bonus, act now, free money, click here"},
    {"ham", "seed-ham-1",
     "Subject: Lunch on Friday?\nFrom: Alice <alice@example.org>\n\n"
     "Shall we meet for lunch on Friday at noon? The usual place."},
    {"ham", "seed-ham-2", "The quarterly report is attached; comments welcome before Monday."},
};

[[noreturn]] void Fail(const Request& request, const Response& response, const char* what) {
  std::ostringstream text;
  text << request << "\n---\n" << response;
  std::fprintf(stderr, "response rule broken: %s\n%s\n", what, text.str().c_str());
  std::abort();
}

// The error object of an error response's body, or null.
const json::object* ErrorObject(const json::value& body) {
  if (!body.is_object()) return nullptr;
  const json::value* error = body.as_object().if_contains("error");
  if (error == nullptr || !error->is_object()) return nullptr;
  const json::object& object = error->as_object();
  const json::value* code = object.if_contains("code");
  const json::value* message = object.if_contains("message");
  if (code == nullptr || !code->is_string() || code->as_string().empty()) return nullptr;
  if (message == nullptr || !message->is_string()) return nullptr;
  return &object;
}

void Check(const Request& request, const Response& response) {
  const unsigned status = response.result_int();
  if (status == 500) Fail(request, response, "500 for a request");
  if (status < 200 || status > 599) Fail(request, response, "status out of range");
  if (response[http::field::content_type] != "application/json") {
    Fail(request, response, "Content-Type is not application/json");
  }
  boost::system::error_code ec;
  const json::value body = json::parse(response.body(), ec);
  if (ec) Fail(request, response, "the body is not JSON");
  if (status >= 400 && ErrorObject(body) == nullptr) {
    Fail(request, response, "an error without {\"error\": {\"code\", \"message\"}}");
  }
  if (status < 400 && !body.is_object()) Fail(request, response, "a body that is not an object");
  if (status == 405 && response[http::field::allow].empty()) {
    Fail(request, response, "405 without Allow");
  }
  if (status == 401 && response[http::field::www_authenticate] != "Bearer") {
    Fail(request, response, "401 without WWW-Authenticate: Bearer");
  }
  std::ostringstream wire;
  wire << response;  // Beast's serializer: a response it cannot write would throw here.
  if (wire.str().size() < response.body().size()) Fail(request, response, "short serialisation");
}

}  // namespace

FuzzService::FuzzService()
    : filter_(std::make_unique<core::SpamFilter>(std::make_unique<storage::MemoryStore>(),
                                                 core::SpamFilterOptions{})) {
  for (const Seed& seed : kSeeds) {
    if (!filter_->Train(seed.message, seed.label, seed.id)) {
      std::fprintf(stderr, "fuzz service: cannot learn seed %s\n", seed.id);
      std::abort();
    }
  }
  open_ = std::make_unique<Router>(*filter_);
  RouterOptions guarded;
  guarded.authenticator =
      Authenticator(std::vector<config::AuthToken>{{"fuzz", std::string(kFuzzToken)}});
  guarded.auth_classify = true;
  guarded.backup_dir = "/nonexistent/nbspamd-fuzz-backups";  // MemoryStore refuses anyway.
  guarded_ = std::make_unique<Router>(*filter_, std::move(guarded));
}

FuzzService& FuzzService::ForNextInput() {
  static std::unique_ptr<FuzzService> service;
  static std::size_t inputs = 0;
  if (service == nullptr || ++inputs % kInputsPerModel == 0) {
    service.reset();  // The old filter stops its writer before the new one starts.
    service.reset(new FuzzService());
  }
  return *service;
}

Response FuzzService::Handle(const Request& request) const {
  const bool authorized = request.find(http::field::authorization) != request.end();
  Response response = (authorized ? guarded_ : open_)->Handle(request);
  Check(request, response);
  return response;
}

}  // namespace nbspamd::http_api::fuzz
