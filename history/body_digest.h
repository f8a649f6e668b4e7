// BodyDigest: what binds a reported copy of a message to the scan of that message. A message
// that names a scan in nbspamd's scan header (scan_header.h) is learned as that scan only when
// its body has the digest the scan recorded; otherwise it is learned as itself. So a spam
// carrying the header of another, harmless message's scan (forged or copied) teaches the model
// its own words, not the harmless message's.
//
// The body is what follows the header block (the first empty line), or the whole message when it
// has none; carriage returns are left out and empty lines at its end too, so that the copy in a
// mailbox (LF) matches the one classified over SMTP (CRLF). The digest is the first 16 bytes of
// SHA-256: finding another body with a given digest is out of reach.
//
// Pure; thread-safe.
#ifndef NBSPAMD_HISTORY_BODY_DIGEST_H_
#define NBSPAMD_HISTORY_BODY_DIGEST_H_

#include <string>
#include <string_view>

namespace nbspamd::history {

inline constexpr std::size_t kBodyDigestBytes = 16;

// The digest of `message`'s body, kBodyDigestBytes raw bytes.
[[nodiscard]] std::string BodyDigest(std::string_view message);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_BODY_DIGEST_H_
