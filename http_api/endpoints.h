// The HTTP API's endpoints in one table: path, method, who may call it, whether it takes a
// body, counts against the training rate or the limit on requests in flight. The router
// dispatches by it, the connections label their metrics with it, and /metrics renders one series
// per row, so a new endpoint is one row here and one handler in the router.
//
//   const Endpoint endpoint = EndpointOf("/classify?explain=3");  // Endpoint::kClassify
//   const EndpointSpec* spec = SpecOf(endpoint);                   // nullptr for kOther
//
// A path segment spelt {id} (or any {name}) in the table (/users/{id}) matches any one non-empty
// segment; the console's row ("/ui/") matches /ui and every path under it. The table's path, not
// the request's, is the endpoint's name in /metrics.
#ifndef NBSPAMD_HTTP_API_ENDPOINTS_H_
#define NBSPAMD_HTTP_API_ENDPOINTS_H_

#include <array>
#include <boost/beast/http/verb.hpp>
#include <cstddef>
#include <ostream>  // Boost 1.81 verb.hpp uses std::ostream without including it.
#include <string_view>

namespace nbspamd::http_api {

// The request paths the daemon knows; anything else is kOther. The order is that of kEndpoints
// (and of the /metrics series).
enum class Endpoint {
  kClassify,
  kTrain,
  kForget,
  kStats,
  kHealth,
  kReady,
  kMetrics,
  kAdminBackup,
  kAdminDump,
  kAdminLearned,
  kAdminRollback,
  kAdminRetire,
  kAdminExpire,
  kAdminReload,
  kUserStats,
  kUserDelete,
  kHistory,
  kHistoryScan,
  kActivity,
  kCalibration,
  kConsole,
  kUserList,
  kModelToken,
  kModelStrongest,
  kModelThresholds,
  kAdminCheckpoint,
  kAdminCheckpointFile,
  kAdminCheckpointRelease,
  kOther,
};
inline constexpr std::size_t kEndpointCount = static_cast<std::size_t>(Endpoint::kOther) + 1;

// Who may call an endpoint when bearer tokens are configured.
enum class Guard {
  kOpen,      // Anyone.
  kClassify,  // Anyone, unless auth_classify.
  kToken,     // A token holder.
};

struct EndpointSpec {
  Endpoint endpoint;
  std::string_view path;
  boost::beast::http::verb method;
  Guard guard;
  bool takes_body;    // The message comes in the body (raw or JSON).
  bool rate_limited;  // Counts against the source's training rate (train_rate_limit).
  bool admitted;      // Counts against max_in_flight; health probes do not, so they always answer.
};

// Every endpoint but kOther, in the order of Endpoint.
inline constexpr std::array<EndpointSpec, kEndpointCount - 1> kEndpoints = {{
    {Endpoint::kClassify, "/classify", boost::beast::http::verb::post, Guard::kClassify, true,
     false, true},
    {Endpoint::kTrain, "/train", boost::beast::http::verb::post, Guard::kToken, true, true, true},
    {Endpoint::kForget, "/forget", boost::beast::http::verb::post, Guard::kToken, true, true, true},
    {Endpoint::kStats, "/stats", boost::beast::http::verb::get, Guard::kOpen, false, false, true},
    {Endpoint::kHealth, "/healthz", boost::beast::http::verb::get, Guard::kOpen, false, false,
     false},
    {Endpoint::kReady, "/readyz", boost::beast::http::verb::get, Guard::kOpen, false, false, false},
    {Endpoint::kMetrics, "/metrics", boost::beast::http::verb::get, Guard::kOpen, false, false,
     true},
    {Endpoint::kAdminBackup, "/admin/backup", boost::beast::http::verb::post, Guard::kToken, false,
     false, true},
    // The whole model: an administrator's, as a backup is.
    {Endpoint::kAdminDump, "/admin/dump", boost::beast::http::verb::get, Guard::kToken, false,
     false, true},
    {Endpoint::kAdminLearned, "/admin/learned", boost::beast::http::verb::get, Guard::kToken, false,
     false, true},
    {Endpoint::kAdminRollback, "/admin/rollback", boost::beast::http::verb::post, Guard::kToken,
     false, false, true},
    // A pass of the ledger retention now (docs/STORAGE.md "Ledger retention").
    {Endpoint::kAdminRetire, "/admin/retire", boost::beast::http::verb::post, Guard::kToken, false,
     false, true},
    // A pass of the token expiry's age rule now (docs/STORAGE.md "Token expiry").
    {Endpoint::kAdminExpire, "/admin/expire", boost::beast::http::verb::post, Guard::kToken, false,
     false, true},
    // Reads the settings again (docs/CONFIG.md "Reloading"): an administrator's.
    {Endpoint::kAdminReload, "/admin/reload", boost::beast::http::verb::post, Guard::kToken, false,
     false, true},
    {Endpoint::kUserStats, "/users/{id}/stats", boost::beast::http::verb::get, Guard::kClassify,
     false, false, true},
    // Deleting a user's data is training: the guard and the rate of /forget.
    {Endpoint::kUserDelete, "/users/{id}", boost::beast::http::verb::delete_, Guard::kToken, false,
     true, true},
    // The scan history is read-only: it follows auth_classify.
    {Endpoint::kHistory, "/history", boost::beast::http::verb::get, Guard::kClassify, false, false,
     true},
    {Endpoint::kHistoryScan, "/history/{id}", boost::beast::http::verb::get, Guard::kClassify,
     false, false, true},
    // What the console shows: read-only, as the history.
    {Endpoint::kActivity, "/activity", boost::beast::http::verb::get, Guard::kClassify, false,
     false, true},
    {Endpoint::kCalibration, "/calibration", boost::beast::http::verb::get, Guard::kClassify, false,
     false, true},
    // The console's own files hold no data: anyone may load them (the page then asks for a
    // token when the API wants one). The path is a prefix: /ui, /ui/ and /ui/<file>.
    {Endpoint::kConsole, "/ui/", boost::beast::http::verb::get, Guard::kOpen, false, false, true},
    // The users with a layer, with their sizes: read-only, as /users/{id}/stats.
    {Endpoint::kUserList, "/users", boost::beast::http::verb::get, Guard::kClassify, false, false,
     true},
    // What the model knows (the console's Model page): read-only, as the history.
    {Endpoint::kModelToken, "/model/token", boost::beast::http::verb::get, Guard::kClassify, false,
     false, true},
    {Endpoint::kModelStrongest, "/model/strongest", boost::beast::http::verb::get, Guard::kClassify,
     false, false, true},
    {Endpoint::kModelThresholds, "/model/thresholds", boost::beast::http::verb::get,
     Guard::kClassify, false, false, true},
    // A checkpoint for a daemon joining the cluster, and its files (docs/SCALING.md "Joining a
    // cluster"): the whole model, an administrator's as a backup is.
    {Endpoint::kAdminCheckpoint, "/admin/checkpoint", boost::beast::http::verb::post, Guard::kToken,
     false, false, true},
    {Endpoint::kAdminCheckpointFile, "/admin/checkpoint/{id}/{file}", boost::beast::http::verb::get,
     Guard::kToken, false, false, true},
    {Endpoint::kAdminCheckpointRelease, "/admin/checkpoint/{id}", boost::beast::http::verb::delete_,
     Guard::kToken, false, false, true},
}};

// The endpoint whose path is `path` (no query, percent-encoded as sent): the row whose path it
// is, segment by segment, an {id} segment matching any non-empty one.
[[nodiscard]] Endpoint EndpointOfPath(std::string_view path);
// The endpoint a request target ("/classify?explain=3") names.
[[nodiscard]] Endpoint EndpointOf(std::string_view target);
// Its path, as the `endpoint` label of /metrics shows it ("/classify", or "other").
[[nodiscard]] std::string_view EndpointName(Endpoint endpoint);
// Its row of kEndpoints; nullptr for kOther.
[[nodiscard]] const EndpointSpec* SpecOf(Endpoint endpoint);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_ENDPOINTS_H_
