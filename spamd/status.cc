#include "spamd/status.h"

namespace nbspamd::spamd {

std::string_view SpamdStatusName(SpamdStatus status) {
  switch (status) {
    case SpamdStatus::kOk:
      return "EX_OK";
    case SpamdStatus::kUsage:
      return "EX_USAGE";
    case SpamdStatus::kDataErr:
      return "EX_DATAERR";
    case SpamdStatus::kUnavailable:
      return "EX_UNAVAILABLE";
    case SpamdStatus::kSoftware:
      return "EX_SOFTWARE";
    case SpamdStatus::kTempFail:
      return "EX_TEMPFAIL";
    case SpamdStatus::kProtocol:
      return "EX_PROTOCOL";
    case SpamdStatus::kNoPerm:
      return "EX_NOPERM";
    case SpamdStatus::kTimeout:
      return "EX_TIMEOUT";
  }
  return "EX_SOFTWARE";
}

SpamdFailure FailureOf(const Error& error) {
  SpamdFailure failure;
  switch (error.code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNotFound:
    case ErrorCode::kExpired:
      failure = {SpamdStatus::kDataErr, "the message was refused"};
      break;
    case ErrorCode::kResourceExhausted:
      failure = {SpamdStatus::kDataErr, "the message is over a size budget"};
      break;
    case ErrorCode::kFailedPrecondition:
      failure = {SpamdStatus::kUnavailable, "the model cannot classify yet"};
      break;
    case ErrorCode::kUnavailable:
      failure = {SpamdStatus::kTempFail, "temporarily unavailable, try again later"};
      break;
    case ErrorCode::kInsufficientStorage:
      failure = {SpamdStatus::kTempFail, "the disk is full, try again later"};
      break;
    case ErrorCode::kUnauthenticated:
    case ErrorCode::kPermissionDenied:
      failure = {SpamdStatus::kNoPerm, "permission denied"};
      break;
    case ErrorCode::kDataLoss:
    case ErrorCode::kInternal:
      failure = {SpamdStatus::kSoftware, "internal error"};
      break;
  }
  return failure;
}

}  // namespace nbspamd::spamd
