// Error: the one error type of nbspamd, carried in std::expected<T, Error>.
//
//   std::expected<Settings, Error> LoadSettings(...);
//   if (!settings) return std::unexpected(settings.error());
//
// Each code says when to use it; http_api/http_errors.cc maps codes to HTTP statuses in one table,
// and the command-line front ends map them to exit codes.
#ifndef NBSPAMD_COMMON_ERROR_H_
#define NBSPAMD_COMMON_ERROR_H_

#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace nbspamd {

enum class ErrorCode {
  kInvalidArgument,      // The caller sent something malformed: bad JSON, bad label, bad value.
  kNotFound,             // The named thing (a learned message id, a path) does not exist.
  kFailedPrecondition,   // The request is well-formed but the state forbids it (empty model).
  kUnauthenticated,      // The request needs a bearer token and has none.
  kPermissionDenied,     // The request's bearer token is not one of the configured ones.
  kResourceExhausted,    // A size or count budget was exceeded.
  kUnavailable,          // Temporarily unable to serve (shutting down, overloaded, I/O fault).
  kInsufficientStorage,  // The data folder's disk is full: writes wait until space returns.
  kDataLoss,             // Stored data is corrupt or of another schema version.
  kInternal,             // A bug or an I/O failure of the machine; never caused by client input.
  kExpired,              // The named thing existed but is no longer kept (a scan aged out).
};

// A failure: a code for programs and a message for people. The message never holds secrets.
struct Error {
  ErrorCode code;
  std::string message;
};

// Whether `code` says the caller asked for something wrong (a 4xx over HTTP), not that the daemon
// failed (kUnavailable, kInsufficientStorage, kDataLoss, kInternal: a 5xx).
[[nodiscard]] constexpr bool IsCallerError(ErrorCode code) {
  return code != ErrorCode::kUnavailable && code != ErrorCode::kInsufficientStorage &&
         code != ErrorCode::kDataLoss && code != ErrorCode::kInternal;
}

[[nodiscard]] inline std::unexpected<Error> MakeError(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message)});
}

// A short stable name for each code ("invalid_argument"), used in JSON error bodies.
[[nodiscard]] constexpr std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kUnauthenticated:
      return "unauthenticated";
    case ErrorCode::kPermissionDenied:
      return "permission_denied";
    case ErrorCode::kResourceExhausted:
      return "resource_exhausted";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInsufficientStorage:
      return "insufficient_storage";
    case ErrorCode::kDataLoss:
      return "data_loss";
    case ErrorCode::kInternal:
      return "internal";
    case ErrorCode::kExpired:
      return "expired";
  }
  return "internal";
}

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_ERROR_H_
