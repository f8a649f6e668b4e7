#include "http_server/tls_context.h"

namespace nbspamd::http_server {

namespace ssl = boost::asio::ssl;

std::expected<std::shared_ptr<ssl::context>, Error> MakeTlsContext(const std::string& cert_file,
                                                                   const std::string& key_file) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  if (ec) return MakeError(ErrorCode::kInternal, "setting up TLS: " + ec.message());
  if (context->use_certificate_chain_file(cert_file, ec); ec) {
    return MakeError(ErrorCode::kInvalidArgument, "tls_cert_file '" + cert_file +
                                                      "': not a readable PEM certificate chain (" +
                                                      ec.message() + ")");
  }
  if (context->use_private_key_file(key_file, ssl::context::pem, ec); ec) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "tls_key_file '" + key_file + "': not a readable PEM private key of the " +
                         "certificate in tls_cert_file (" + ec.message() + ")");
  }
  return context;
}

}  // namespace nbspamd::http_server
