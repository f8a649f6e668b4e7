// FindScanHeader: the scan id and signature that nbspamd's own header names in a message, so that
// the copy of a message a user reports later (delivered with the header the milter or spamd
// added) is known as the message that was classified, once its signature holds
// (scan_signature.h). Reads the message's header block only: the milter's status header
// ("X-Nbspamd: spam 0.99 score=1.7 scan=<id> sig=<mac>", any header whose name starts with
// X-Nbspamd) and spamd's "X-Spam-Scan-Id: <id>; sig=<mac>". The tokenizer gives these fields no
// tokens. Pure and thread-safe.
#ifndef NBSPAMD_HISTORY_SCAN_HEADER_H_
#define NBSPAMD_HISTORY_SCAN_HEADER_H_

#include <optional>
#include <string>
#include <string_view>

namespace nbspamd::history {

struct ScanHeader {
  std::string id;
  std::string signature;  // "" when the header has none (or not a well-formed one).
};

// The first such header from the top (the one added last) that holds a well-formed scan id;
// nullopt when there is none.
[[nodiscard]] std::optional<ScanHeader> FindScanHeader(std::string_view message);

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_HEADER_H_
