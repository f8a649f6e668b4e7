// Fixed-width lower-case hexadecimal, for ids and hashes: what snprintf("%016llx") writes,
// without its format parsing (ids are made on every classify). Plain functions, thread-safe.
#ifndef NBSPAMD_COMMON_HEX_H_
#define NBSPAMD_COMMON_HEX_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace nbspamd {

// Appends the low `digits` hexadecimal digits of `value` (REQUIRES: digits <= 16), most
// significant first, zero-padded.
inline void AppendHex(std::string& out, std::uint64_t value, std::size_t digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::size_t at = out.size();
  out.resize(at + digits);
  for (std::size_t i = digits; i > 0; --i) {
    out[at + i - 1] = kDigits[value & 0xf];
    value >>= 4;
  }
}

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_HEX_H_
