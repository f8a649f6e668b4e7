#include "history/scan_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "common/hex.h"

namespace nbspamd::history {
namespace {

constexpr std::string_view kDomain = "nbspamd-scan-1";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

ScanKey NewScanKey() {
  ScanKey key{};
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) {
    throw std::runtime_error("the system's random source gave no key for the scan header");
  }
  return key;
}

std::string ScanKeyHex(const ScanKey& key) {
  std::string text;
  text.reserve(2 * key.size());
  for (const unsigned char byte : key) AppendHex(text, byte, 2);
  return text;
}

std::expected<ScanKey, Error> ParseScanKeyHex(std::string_view text) {
  ScanKey key{};
  if (text.size() != 2 * key.size()) {
    return MakeError(ErrorCode::kInvalidArgument, "a scan key is 64 hex digits");
  }
  for (std::size_t i = 0; i < key.size(); ++i) {
    const int high = HexValue(text[2 * i]);
    const int low = HexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      return MakeError(ErrorCode::kInvalidArgument, "a scan key is 64 hex digits");
    }
    key[i] = static_cast<unsigned char>(high << 4 | low);
  }
  return key;
}

std::string SignScan(const ScanKey& key, std::string_view scan_id, std::string_view body_digest) {
  std::string input;
  input.reserve(kDomain.size() + scan_id.size() + body_digest.size() + 2);
  input.append(kDomain).push_back('\0');
  input.append(scan_id).push_back('\0');
  input.append(body_digest);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac, &size);
  std::string text;
  text.reserve(kScanSignatureLength);
  for (std::size_t i = 0; i < kScanSignatureLength / 2; ++i) AppendHex(text, mac[i], 2);
  return text;
}

bool ScanSignatureHolds(const ScanKey& key, std::string_view scan_id, std::string_view body_digest,
                        std::string_view signature) {
  if (signature.size() != kScanSignatureLength) return false;
  const std::string expected = SignScan(key, scan_id, body_digest);
  return CRYPTO_memcmp(expected.data(), signature.data(), kScanSignatureLength) == 0;
}

}  // namespace nbspamd::history
