// BasicHttpConnection over TLS, compiled apart from the other stream type.
#include "http_server/connection_impl.h"

namespace nbspamd::http_server {

template class BasicHttpConnection<beast::ssl_stream<beast::tcp_stream>>;

}  // namespace nbspamd::http_server
