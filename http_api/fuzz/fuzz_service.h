// FuzzService: what the server's fuzz targets send requests to, and the checks every response
// must pass. A SpamFilter over a storage::MemoryStore that has learned a few spam and ham
// messages, served by two Routers: an open one, and one whose bearer token guards every
// endpoint (kFuzzToken).
//
//   FuzzService& service = FuzzService::ForNextInput();
//   Response response = service.Handle(request);  // aborts on a broken rule
//
// The model learns what the fuzz inputs train; so that it stays small, every kInputsPerModel
// inputs start over with a fresh one. A crash may therefore depend on the inputs before it:
// replay the crash input on its own first (it usually fails alone), else the inputs before it.
//
// Not thread-safe: one fuzzing thread.
#ifndef NBSPAMD_HTTP_API_FUZZ_FUZZ_SERVICE_H_
#define NBSPAMD_HTTP_API_FUZZ_FUZZ_SERVICE_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "core/spam_filter.h"
#include "http_api/http_errors.h"
#include "http_api/router.h"

namespace nbspamd::http_api::fuzz {

// The secret that the guarded router accepts ("Authorization: Bearer <it>").
inline constexpr std::string_view kFuzzToken = "fuzz-secret-0123456789";

class FuzzService {
 public:
  static constexpr std::size_t kInputsPerModel = 500;

  // The service for the next input: the same as before, or a fresh one every kInputsPerModel
  // calls.
  static FuzzService& ForNextInput();

  // Routes `request` (to the guarded router when it has an Authorization header), waits for the
  // response and checks it:
  //   - never 500: bad input is never a fault of the machine;
  //   - Content-Type application/json and a body that is JSON;
  //   - on 4xx and 5xx, {"error": {"code": string, "message": string}};
  //   - 405 names the allowed method, 401 asks for a Bearer token;
  //   - the response serialises as HTTP.
  // Aborts, printing the request, when a check fails.
  Response Handle(const Request& request) const;

 private:
  FuzzService();

  std::unique_ptr<core::SpamFilter> filter_;
  std::unique_ptr<Router> open_;
  std::unique_ptr<Router> guarded_;
};

}  // namespace nbspamd::http_api::fuzz

#endif  // NBSPAMD_HTTP_API_FUZZ_FUZZ_SERVICE_H_
