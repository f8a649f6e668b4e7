// BasicHttpConnection over plain TCP, compiled apart from the other stream type.
#include "http_server/connection_impl.h"

namespace nbspamd::http_server {

template class BasicHttpConnection<beast::tcp_stream>;

}  // namespace nbspamd::http_server
