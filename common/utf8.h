// UTF-8 checks for text that leaves the daemon or becomes a key: IsValidUtf8 says whether bytes
// are well-formed UTF-8, ReplaceInvalidUtf8 makes them so. Used by the tokenizer, the core (ids)
// and the front ends (error messages). Pure and thread-safe.
//
//   if (!IsValidUtf8(id)) return MakeError(ErrorCode::kInvalidArgument, "id is not UTF-8");
//   body["message"] = ReplaceInvalidUtf8(message);
#ifndef NBSPAMD_COMMON_UTF8_H_
#define NBSPAMD_COMMON_UTF8_H_

#include <string>
#include <string_view>

namespace nbspamd {

// Whether `bytes` is well-formed UTF-8.
[[nodiscard]] bool IsValidUtf8(std::string_view bytes);

// `bytes` with each maximal ill-formed subsequence (a stray continuation byte, an overlong form,
// a surrogate, a code point over U+10FFFF, a cut sequence) replaced by U+FFFD.
[[nodiscard]] std::string ReplaceInvalidUtf8(std::string_view bytes);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_UTF8_H_
