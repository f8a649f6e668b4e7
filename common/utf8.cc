#include "common/utf8.h"

#include <unicode/utf8.h>

#include <cstdint>

namespace nbspamd {

bool IsValidUtf8(std::string_view bytes) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto length = static_cast<int32_t>(bytes.size());
  for (int32_t i = 0; i < length;) {
    if (data[i] < 0x80) {
      ++i;
      continue;
    }
    UChar32 c;
    U8_NEXT(data, i, length, c);
    if (c < 0) return false;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view bytes) {
  if (IsValidUtf8(bytes)) return std::string(bytes);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const auto length = static_cast<int32_t>(bytes.size());
  std::string valid;
  valid.reserve(bytes.size() + 16);
  for (int32_t i = 0; i < length;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT(data, i, length, c);
    if (c < 0) {
      valid += "\xEF\xBF\xBD";
    } else {
      valid.append(bytes.substr(start, i - start));
    }
  }
  return valid;
}

}  // namespace nbspamd
