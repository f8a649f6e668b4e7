#include "history/body_digest.h"

#include <openssl/evp.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace nbspamd::history {
namespace {

// Where the body starts: after the first empty line (LF LF, or with CRs between), else 0.
std::size_t BodyStart(std::string_view message) {
  std::size_t line_start = 0;
  while (line_start < message.size()) {
    std::size_t end = message.find('\n', line_start);
    if (end == std::string_view::npos) return 0;
    std::string_view line = message.substr(line_start, end - line_start);
    if (line.empty() || line == "\r") return end + 1;
    line_start = end + 1;
  }
  return 0;
}

struct ContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};

}  // namespace

std::string BodyDigest(std::string_view message) {
  std::string_view body = message.substr(BodyStart(message));
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  const std::unique_ptr<EVP_MD_CTX, ContextFree> context(EVP_MD_CTX_new());
  if (!context || EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 is not available");  // A broken libcrypto: a bug here.
  }
  // The body without carriage returns, fed in runs between them.
  while (!body.empty()) {
    const std::size_t cr = body.find('\r');
    const std::string_view run = body.substr(0, cr);
    if (!run.empty()) EVP_DigestUpdate(context.get(), run.data(), run.size());
    body.remove_prefix(cr == std::string_view::npos ? body.size() : cr + 1);
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context.get(), digest.data(), &size);
  return std::string(reinterpret_cast<const char*>(digest.data()), kBodyDigestBytes);
}

}  // namespace nbspamd::history
