#include "history/body_digest.h"

#include <openssl/evp.h>

#include <array>
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

// A thread's SHA-256 context, and the digest fetched once: OpenSSL 3 fetches the algorithm
// again on every EVP_DigestInit_ex given EVP_sha256().
class ThreadSha256 {
 public:
  ThreadSha256() : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)), context_(EVP_MD_CTX_new()) {}
  ~ThreadSha256() {
    EVP_MD_CTX_free(context_);
    EVP_MD_free(md_);
  }
  ThreadSha256(const ThreadSha256&) = delete;
  ThreadSha256& operator=(const ThreadSha256&) = delete;

  // The context, started on a new digest. Throws std::runtime_error when libcrypto has no
  // SHA-256 (a broken installation: a bug here).
  EVP_MD_CTX* Start() {
    if (md_ == nullptr || context_ == nullptr || EVP_DigestInit_ex(context_, md_, nullptr) != 1) {
      throw std::runtime_error("SHA-256 is not available");
    }
    return context_;
  }

 private:
  EVP_MD* md_;
  EVP_MD_CTX* context_;
};

}  // namespace

std::string BodyDigest(std::string_view message) {
  std::string_view body = message.substr(BodyStart(message));
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.remove_suffix(1);
  thread_local ThreadSha256 sha256;
  EVP_MD_CTX* const context = sha256.Start();
  // The body without carriage returns, fed in runs between them.
  while (!body.empty()) {
    const std::size_t cr = body.find('\r');
    const std::string_view run = body.substr(0, cr);
    if (!run.empty()) EVP_DigestUpdate(context, run.data(), run.size());
    body.remove_prefix(cr == std::string_view::npos ? body.size() : cr + 1);
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context, digest.data(), &size);
  return std::string(reinterpret_cast<const char*>(digest.data()), kBodyDigestBytes);
}

}  // namespace nbspamd::history
