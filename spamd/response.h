// The SPAMD side of the protocol: the score a response shows, and the bytes of each response.
// Pure functions, laid out as SpamAssassin's spamd lays them out for each protocol version, so
// that spamc and Exim read them as they read spamd's.
//
//   SPAMD/1.1 0 EX_OK\r\n
//   Content-length: 13\r\n            (from SPAMC/1.3 on, for all but CHECK)
//   Spam: True ; 10.0 / 5.0\r\n
//   \r\n
//   NBSPAMD_SPAM                      (SYMBOLS; REPORT: a report; PROCESS: the marked message)
//
// Score mapping (docs/SPAMD.md): spamd's clients compare a score S with a threshold T, and
// nbspamd's own score has its own scale and threshold. The response shows
//   S = 5 + 5 · (score − spam_threshold), rounded to one decimal, and T = 5.0,
// and then makes S agree with the verdict: at least 5.0 for spam, at most 4.9 otherwise (the
// verdict is spam only when score > spam_threshold, and rounding could put a score just under
// the threshold at 5.0). So S ≥ T exactly when the verdict is spam: spamc -c exits 1, and Exim's
// spam condition (score ≥ threshold) holds, exactly for spam; $spam_score_int is 10·S. Without a
// score (the model lacks spam or ham examples) S is 0.0, or 5.0 for a spam verdict.
#ifndef NBSPAMD_SPAMD_RESPONSE_H_
#define NBSPAMD_SPAMD_RESPONSE_H_

#include <string>
#include <string_view>

#include "spamd/backend.h"
#include "spamd/request.h"
#include "spamd/status.h"

namespace nbspamd::spamd {

inline constexpr double kSpamdThreshold = 5.0;  // T in every response.

struct SpamdScore {
  double score = 0;                    // S, a multiple of 0.1.
  double threshold = kSpamdThreshold;  // T.
  bool spam = false;                   // The verdict is spam; then and only then S ≥ T.
};

[[nodiscard]] SpamdScore MapScore(const SpamdVerdict& verdict);

// One decimal, '.' whatever the locale, and never "-0.0": "10.0", "-3.5", "4.9".
[[nodiscard]] std::string FormatScore(double value);

// The rule name SYMBOLS lists: NBSPAMD_SPAM, NBSPAMD_UNSURE or NBSPAMD_HAM.
[[nodiscard]] std::string_view SymbolOf(SpamdVerdictKind verdict);

// "SPAMD/1.0 <code> <message>\r\n": spamd sends only this line on an error, then closes.
[[nodiscard]] std::string ErrorResponse(const SpamdFailure& failure);
// "SPAMD/1.5 0 PONG\r\n".
[[nodiscard]] std::string PongResponse();
// The answer to TELL: DidSet: local when the message was learned (its counts changed),
// DidRemove: local when it was forgotten.
[[nodiscard]] std::string TellResponse(bool did_set_local, bool did_remove_local);

// The answer to CHECK, SYMBOLS, REPORT, REPORT_IFSPAM, PROCESS or HEADERS, laid out for the
// request's protocol version. REQUIRES: request.command is one of those.
[[nodiscard]] std::string VerdictResponse(const SpamdRequest& request, const SpamdVerdict& verdict);

// The message with nbspamd's X-Spam-* headers at the end of its header section, and every
// X-Spam-* header it arrived with removed (so a sender cannot forge X-Spam-Flag or
// X-Spam-Status). Lines added end as the message's first line does (CRLF or LF).
//   X-Spam-Checker-Version: nbspamd
//   X-Spam-Flag: YES                                         (spam only)
//   X-Spam-Level: **********                                 (one star per whole point of S)
//   X-Spam-Status: Yes, score=10.0 required=5.0 tests=NBSPAMD_SPAM verdict=spam
//     nbspamd_score=2.000 nbspamd_threshold=1.000 confidence=0.970   (one line, unfolded;
//     nbspamd_score is "none" without a score, confidence only when the core has one)
[[nodiscard]] std::string MarkMessage(std::string_view message, const SpamdVerdict& verdict);

// MarkMessage's result up to and including the blank line that ends the header section.
[[nodiscard]] std::string MarkHeaders(std::string_view message, const SpamdVerdict& verdict);

// The text REPORT returns: the verdict, S and T, and one line per rule hit, in the layout of
// SpamAssassin's report ("Content analysis details").
[[nodiscard]] std::string ReportText(const SpamdVerdict& verdict);

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_RESPONSE_H_
