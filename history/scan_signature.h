// ScanSignature: what makes nbspamd's scan header its own. The milter and spamd write, beside a
// scan's id, a MAC of the id and of the digest of the body that was classified (body_digest.h)
// under a secret of the installation (ScanKey): "X-Nbspamd: … scan=<id> sig=<mac>",
// "X-Spam-Scan-Id: <id>; sig=<mac>". A reported copy is learned as the scan it names only when
// the signature holds for that id and for the reported body, so a header cannot be forged, and a
// real header copied onto other mail does not pass: a scan id that is guessed is harmless.
//
// The key is made at random at first start and kept with the data (in the scan history,
// scan_history.h); in cluster mode it is the cluster's, kept in Redis, so that a header one
// daemon wrote holds on every daemon. The MAC is the first 16 bytes of
// HMAC-SHA256(key, "nbspamd-scan-1" NUL id NUL digest), as 32 lower-case hex digits.
//
// Pure; thread-safe.
#ifndef NBSPAMD_HISTORY_SCAN_SIGNATURE_H_
#define NBSPAMD_HISTORY_SCAN_SIGNATURE_H_

#include <array>
#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::history {

inline constexpr std::size_t kScanKeyBytes = 32;
inline constexpr std::size_t kScanSignatureLength = 32;  // Hex digits.
using ScanKey = std::array<unsigned char, kScanKeyBytes>;

// A new key from the system's random source. Throws std::runtime_error when it has none (a
// start-up error).
[[nodiscard]] ScanKey NewScanKey();

// The key as 64 hex digits, and back. Errors: kInvalidArgument for anything but 64 hex digits.
[[nodiscard]] std::string ScanKeyHex(const ScanKey& key);
[[nodiscard]] std::expected<ScanKey, Error> ParseScanKeyHex(std::string_view text);

// The signature of the scan `scan_id` of a body whose digest is `body_digest`.
[[nodiscard]] std::string SignScan(const ScanKey& key, std::string_view scan_id,
                                   std::string_view body_digest);

// Whether `signature` is SignScan(key, scan_id, body_digest); compared in constant time.
[[nodiscard]] bool ScanSignatureHolds(const ScanKey& key, std::string_view scan_id,
                                      std::string_view body_digest, std::string_view signature);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_SIGNATURE_H_
