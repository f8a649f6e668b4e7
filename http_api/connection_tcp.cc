// BasicHttpConnection over plain TCP, compiled apart from the other stream type.
#include "http_api/connection_impl.h"

namespace nbspamd::http_api {

template class BasicHttpConnection<beast::tcp_stream>;

}  // namespace nbspamd::http_api
