// HttpConnectionRegistry: the HTTP server's live connections, so that shutdown can tell each one
// to finish its request (common/connection_registry.h). Thread-safe.
#ifndef NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_
#define NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_

#include "common/connection_registry.h"

namespace nbspamd::http_server {

class HttpConnection;

using HttpConnectionRegistry = ConnectionRegistry<HttpConnection>;

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_CONNECTION_REGISTRY_H_
