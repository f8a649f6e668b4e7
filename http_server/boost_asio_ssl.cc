// The compiled part of Boost.Asio's SSL (OpenSSL) streams, built once here as
// common/boost_asio_beast.cc builds the rest of Asio and Beast: only the HTTP front end, the one
// user of TLS, links OpenSSL.
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/ssl.hpp>
