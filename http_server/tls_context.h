// MakeTlsContext: the TLS settings of the HTTP listener (settings tls_cert_file and
// tls_key_file) as an OpenSSL context for Beast's ssl_stream: TLS 1.2 or later, the certificate
// chain and its private key read from PEM files once, at start-up.
//
//   auto tls = MakeTlsContext("/etc/nbspamd/cert.pem", "/etc/nbspamd/key.pem");
//   if (!tls) return Fail(tls.error());      // kInvalidArgument: which file and why
//   options.tls = *tls;
//
// Errors: kInvalidArgument naming the file that cannot be read or does not hold a PEM
// certificate chain or key, or a key that is not the certificate's.
// Thread safety: the context is read by every connection's handshake, never changed after.
#ifndef NBSPAMD_HTTP_SERVER_TLS_CONTEXT_H_
#define NBSPAMD_HTTP_SERVER_TLS_CONTEXT_H_

#include <boost/asio/ssl/context.hpp>
#include <expected>
#include <memory>
#include <string>

#include "common/error.h"

namespace nbspamd::http_server {

[[nodiscard]] std::expected<std::shared_ptr<boost::asio::ssl::context>, Error> MakeTlsContext(
    const std::string& cert_file, const std::string& key_file);

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_TLS_CONTEXT_H_
