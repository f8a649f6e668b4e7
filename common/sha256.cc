#include "common/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace nbspamd {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  if (context_->md == nullptr || EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 is not available");  // A broken libcrypto.
  }
}

Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::Update(std::string_view bytes) {
  if (!bytes.empty()) EVP_DigestUpdate(context_->md, bytes.data(), bytes.size());
}

std::string Sha256::HexDigest() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context_->md, digest.data(), &size);
  static constexpr char kHexDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHexDigits[digest[i] >> 4];
    hex += kHexDigits[digest[i] & 0xf];
  }
  return hex;
}

std::expected<FileDigest, Error> Sha256OfFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rbe");
  if (file == nullptr) {
    return MakeError(ErrorCode::kNotFound, "cannot open " + path + ": " + std::strerror(errno));
  }
  Sha256 hash;
  FileDigest digest;
  std::array<char, 64 * 1024> block{};
  std::size_t read = 0;
  while ((read = std::fread(block.data(), 1, block.size(), file)) > 0) {
    hash.Update(std::string_view(block.data(), read));
    digest.size += read;
  }
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return MakeError(ErrorCode::kInternal, "cannot read " + path);
  digest.sha256 = hash.HexDigest();
  return digest;
}

bool IsSha256Hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace nbspamd
