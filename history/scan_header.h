// FindScanId: the scan id that nbspamd's own header names in a message, so that the copy of a
// message a user reports later (delivered with the header the milter or spamd added) is known as
// the message that was classified. Reads the message's header block only: the milter's status
// header ("X-Nbspamd: spam 0.99 score=1.7 scan=<id>", any header whose name starts with
// X-Nbspamd) and spamd's "X-Spam-Scan-Id: <id>". The tokenizer gives these fields no tokens.
// Pure and thread-safe.
#ifndef NBSPAMD_HISTORY_SCAN_HEADER_H_
#define NBSPAMD_HISTORY_SCAN_HEADER_H_

#include <optional>
#include <string>
#include <string_view>

namespace nbspamd::history {

// The id in the first such header from the top (the one added last); nullopt when there is none
// or none holds a well-formed scan id.
[[nodiscard]] std::optional<std::string> FindScanId(std::string_view message);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_HEADER_H_
