// HttpConnectionRegistry: the HTTP server's live connections, so that shutdown can tell each one
// to finish its request (common/connection_registry.h). Thread-safe.
#ifndef NBSPAMD_HTTP_API_CONNECTION_REGISTRY_H_
#define NBSPAMD_HTTP_API_CONNECTION_REGISTRY_H_

#include "common/connection_registry.h"

namespace nbspamd::http_api {

class HttpConnection;

using HttpConnectionRegistry = ConnectionRegistry<HttpConnection>;

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_CONNECTION_REGISTRY_H_
