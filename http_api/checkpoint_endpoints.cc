// POST /admin/checkpoint, GET /admin/checkpoint/{id}/{file} and DELETE /admin/checkpoint/{id}:
// checkpoints for daemons joining the cluster (checkpoint_shelf.h; docs/API.md, docs/SCALING.md
// "Joining a cluster").
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "common/log.h"
#include "http_api/checkpoint_manifest.h"
#include "http_api/checkpoint_shelf.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;

Response NoCheckpointShelf(const Call& call) {
  return call.Error(http::status::conflict, "failed_precondition",
                    "this daemon serves no checkpoints");
}

}  // namespace

std::optional<Response> HandleCheckpointMake(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  if (!call.options.checkpoints) return NoCheckpointShelf(call);
  const auto begin = std::chrono::steady_clock::now();
  auto manifest = call.options.checkpoints->Make(call.filter);
  if (!manifest) {
    if (!IsCallerError(manifest.error().code) && manifest.error().code != ErrorCode::kUnavailable) {
      LogError("checkpoint failed: " + manifest.error().message);
    }
    return call.Error(manifest.error());
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  LogInfo("checkpoint " + manifest->id + " made for source '" + call.source + "' at position " +
          (manifest->position.empty() ? std::string("0-0") : manifest->position) + ": " +
          std::to_string(manifest->files.size()) + " files, " +
          std::to_string(manifest->TotalBytes()) + " bytes, in " + seconds + " s");
  Response response{http::status::ok, call.request.version()};
  response.set(http::field::content_type, "application/json");
  response.set(http::field::cache_control, "no-store");
  response.body() = CheckpointManifestJson(*manifest) + "\n";
  response.prepare_payload();
  return response;
}

std::optional<Response> HandleCheckpointFile(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  if (!call.options.checkpoints) return NoCheckpointShelf(call);
  // The router matched "/admin/checkpoint/{id}/{file}": the last two segments, as sent
  // (percent-encoded: a '%' is no file name's, so "%2e%2e" is refused like "..").
  std::string_view path = call.request.target();
  path = path.substr(0, path.find('?'));
  const std::string_view name = path.substr(path.rfind('/') + 1);
  path.remove_suffix(name.size() + 1);
  const std::string_view id = path.substr(path.rfind('/') + 1);
  auto lent = call.options.checkpoints->Lend(id, name);
  if (!lent) return call.Error(lent.error());
  std::uint64_t from = 0;
  if (const auto range = call.request.find(http::field::range); range != call.request.end()) {
    from = ParseRangeFrom(range->value()).value_or(0);
  }
  const std::string size = std::to_string(lent->size);
  if (from > 0 && from >= lent->size) {
    std::error_code ignored;
    std::filesystem::remove(lent->path, ignored);
    Response response = call.Error(http::status::range_not_satisfiable, "range_not_satisfiable",
                                   "the file " + std::string(name) + " has " + size + " bytes");
    response.set(http::field::content_range, "bytes */" + size);
    return response;
  }
  Response response{from > 0 ? http::status::partial_content : http::status::ok,
                    call.request.version()};
  response.set(http::field::content_type, "application/octet-stream");
  response.set(http::field::cache_control, "no-store");
  response.set(http::field::accept_ranges, "bytes");
  if (from > 0) {
    response.set(http::field::content_range, "bytes " + std::to_string(from) + "-" +
                                                 std::to_string(lent->size - 1) + "/" + size);
    response.set(kBodyFileOffsetField, std::to_string(from));
  }
  // Sent from disk, then the link removed, by the connection (kBodyFileField).
  response.set(kBodyFileField, lent->path);
  return response;
}

std::optional<Response> HandleCheckpointRelease(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  if (!call.options.checkpoints) return NoCheckpointShelf(call);
  std::string_view path = call.request.target();
  path = path.substr(0, path.find('?'));
  const std::string_view id = path.substr(path.rfind('/') + 1);
  if (auto released = call.options.checkpoints->Release(id); !released) {
    return call.Error(released.error());
  }
  LogInfo("checkpoint " + std::string(id) + " released by source '" + call.source + "'");
  return JsonResponse(boost::json::object{{"id", id}, {"status", "removed"}},
                      call.request.version());
}

}  // namespace nbspamd::http_api
