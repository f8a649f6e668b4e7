#include "history/scan_signature.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstring>
#include <stdexcept>

#include "common/hex.h"

namespace nbspamd::history {
namespace {

constexpr std::string_view kDomain = "nbspamd-scan-1";

// A thread's HMAC-SHA256 context, keyed with the last key it signed with. OpenSSL 3's one-shot
// HMAC() fetches the digest and sets the key up on every call (about 1.3 µs a signature here);
// initialising a keyed context again for the same key costs a fifth of that.
class ThreadMac {
 public:
  ThreadMac() : mac_(EVP_MAC_fetch(nullptr, "HMAC", nullptr)) {
    if (mac_ != nullptr) context_ = EVP_MAC_CTX_new(mac_);
  }
  ~ThreadMac() {
    EVP_MAC_CTX_free(context_);
    EVP_MAC_free(mac_);
    OPENSSL_cleanse(key_.data(), key_.size());
  }
  ThreadMac(const ThreadMac&) = delete;
  ThreadMac& operator=(const ThreadMac&) = delete;

  // The MAC of `input` under `key`, kScanSignatureLength / 2 bytes of it into `out`. Throws
  // std::runtime_error when libcrypto has no HMAC-SHA256 (a broken installation: a bug here).
  void Sign(const ScanKey& key, std::string_view input, unsigned char* out) {
    if (context_ == nullptr) throw std::runtime_error("HMAC-SHA256 is not available");
    int initialised = 0;
    if (keyed_ && std::memcmp(key_.data(), key.data(), key.size()) == 0) {
      initialised = EVP_MAC_init(context_, nullptr, 0, nullptr);  // The same key again.
    } else {
      OSSL_PARAM params[] = {
          OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
          OSSL_PARAM_construct_end()};
      initialised = EVP_MAC_init(context_, key.data(), key.size(), params);
      key_ = key;
      keyed_ = initialised == 1;
    }
    unsigned char mac[EVP_MAX_MD_SIZE];
    std::size_t size = 0;
    if (initialised != 1 ||
        EVP_MAC_update(context_, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) != 1 ||
        EVP_MAC_final(context_, mac, &size, sizeof mac) != 1 || size < kScanSignatureLength / 2) {
      keyed_ = false;
      throw std::runtime_error("HMAC-SHA256 failed");
    }
    std::memcpy(out, mac, kScanSignatureLength / 2);
  }

 private:
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* context_ = nullptr;
  ScanKey key_{};
  bool keyed_ = false;
};

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
  thread_local ThreadMac thread_mac;
  unsigned char mac[kScanSignatureLength / 2];
  thread_mac.Sign(key, input, mac);
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
