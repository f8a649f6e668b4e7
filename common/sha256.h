// Sha256: SHA-256 (OpenSSL's EVP) of bytes fed in pieces, and of a file read in blocks, as 64
// lower-case hexadecimal digits: the checksums of a checkpoint's files (docs/SCALING.md,
// "Joining a cluster").
//
//   Sha256 hash;
//   hash.Update(piece);                  // as often as needed
//   std::string hex = hash.HexDigest();  // then the object is spent
//
// Thread safety: an object is one thread's at a time; Sha256OfFile is thread-safe.
// Errors: Sha256OfFile answers kNotFound for a file that cannot be opened, kInternal for a read
// error. A libcrypto without SHA-256 is a broken installation: the constructor throws.
#ifndef NBSPAMD_COMMON_SHA256_H_
#define NBSPAMD_COMMON_SHA256_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd {

class Sha256 {
 public:
  Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();

  void Update(std::string_view bytes);
  // The digest of everything fed so far, as 64 lower-case hex digits. REQUIRES: called once.
  [[nodiscard]] std::string HexDigest();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// The SHA-256 of the file at `path` (64 lower-case hex digits) and its size in bytes, read in
// blocks (never whole in memory).
struct FileDigest {
  std::string sha256;
  std::uint64_t size = 0;
};
[[nodiscard]] std::expected<FileDigest, Error> Sha256OfFile(const std::string& path);

// Whether `text` is 64 lower-case hexadecimal digits, as HexDigest writes them.
[[nodiscard]] bool IsSha256Hex(std::string_view text);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_SHA256_H_
