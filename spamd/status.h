// SpamdStatus: the response codes of the SPAMD protocol, which are the sysexits.h exit codes
// (spamd's %resphash), and the one table that turns nbspamd's errors into them.
//
//   SPAMD/1.0 76 Bad header line: (Content-Length contains non-numeric bytes)\r\n
//
// spamc 4.0 does not read the code of an error response: it fails because the connection ends
// after the status line (see docs/SPAMD.md, "Errors").
#ifndef NBSPAMD_SPAMD_STATUS_H_
#define NBSPAMD_SPAMD_STATUS_H_

#include <string>
#include <string_view>

#include "common/error.h"

namespace nbspamd::spamd {

enum class SpamdStatus {
  kOk = 0,
  kUsage = 64,        // EX_USAGE: a request nbspamd does not serve.
  kDataErr = 65,      // EX_DATAERR: the message is unusable: too big, bad zlib data, refused.
  kUnavailable = 69,  // EX_UNAVAILABLE: the model cannot answer yet (nothing learned).
  kSoftware = 70,     // EX_SOFTWARE: a fault inside nbspamd; never caused by the request.
  kTempFail = 75,     // EX_TEMPFAIL: overloaded, shutting down or disk full: try again later.
  kProtocol = 76,     // EX_PROTOCOL: malformed request line, header or length.
  kNoPerm = 77,       // EX_NOPERM: TELL from a client or user not allowed to train.
  kTimeout = 79,      // EX_TIMEOUT: the request did not arrive within the read deadline.
};

// The code's sysexits name ("EX_PROTOCOL").
[[nodiscard]] std::string_view SpamdStatusName(SpamdStatus status);

// An error response: its code and a short text for people, never holding the request's bytes.
struct SpamdFailure {
  SpamdStatus status = SpamdStatus::kProtocol;
  std::string message;
};

// The failure to answer for an error of the backend. The text names the kind of failure only:
// the backend's own message stays in nbspamd's log, never reaching the client.
//   kInvalidArgument, kNotFound, kResourceExhausted  → EX_DATAERR
//   kFailedPrecondition                               → EX_UNAVAILABLE
//   kUnavailable, kInsufficientStorage                → EX_TEMPFAIL
//   kUnauthenticated, kPermissionDenied               → EX_NOPERM
//   kDataLoss, kInternal                              → EX_SOFTWARE
[[nodiscard]] SpamdFailure FailureOf(const Error& error);

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_STATUS_H_
