#include "history/body_digest.h"

#include <openssl/evp.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
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

// The bytes of `word` that are a CR (0x0D), as their high bits: the classic test for a zero byte
// in word XOR 0x0D…0D. Zero exactly when there is none; the lowest bit set is exactly the first
// CR's (a borrow makes false bits only above a true one).
std::uint64_t CarriageReturnBits(std::uint64_t word) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const std::uint64_t x = word ^ (kOnes * '\r');
  return (x - kOnes) & ~x & kHighs;
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
  // The body without carriage returns. A body with none (mail as stored) is fed at once; one
  // with CRLF line ends (mail over SMTP) goes through a buffer of kChunk bytes, 8 bytes at a
  // time where none of them is a CR: a call (or a search) a line cost half again the digest.
  if (body.find('\r') == std::string_view::npos) {
    EVP_DigestUpdate(context, body.data(), body.size());
  } else {
    constexpr std::size_t kChunk = 8192;
    std::array<char, kChunk + 8> chunk;  // Room for a word written beyond kChunk before a flush.
    std::size_t filled = 0;
    std::size_t i = 0;
    if constexpr (std::endian::native == std::endian::little) {
      // A word at a time: written whole, kept up to its first CR, read on after that CR.
      while (i + 8 <= body.size()) {
        std::uint64_t word;
        std::memcpy(&word, body.data() + i, 8);
        std::memcpy(chunk.data() + filled, &word, 8);
        const std::uint64_t carriage_returns = CarriageReturnBits(word);
        if (carriage_returns == 0) {
          filled += 8;
          i += 8;
        } else {
          const auto first = static_cast<std::size_t>(std::countr_zero(carriage_returns) / 8);
          filled += first;
          i += first + 1;
        }
        if (filled >= kChunk) {
          EVP_DigestUpdate(context, chunk.data(), filled);
          filled = 0;
        }
      }
    }
    for (; i < body.size(); ++i) {
      if (filled == kChunk) {
        EVP_DigestUpdate(context, chunk.data(), filled);
        filled = 0;
      }
      chunk[filled] = body[i];
      filled += body[i] != '\r';
    }
    if (filled > 0) EVP_DigestUpdate(context, chunk.data(), filled);
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context, digest.data(), &size);
  return std::string(reinterpret_cast<const char*>(digest.data()), kBodyDigestBytes);
}

}  // namespace nbspamd::history
