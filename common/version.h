// The daemon's version, as --version, /metrics and nbspamc report it.
#ifndef NBSPAMD_COMMON_VERSION_H_
#define NBSPAMD_COMMON_VERSION_H_

namespace nbspamd {

inline constexpr char kVersion[] = "0.1.0";

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_VERSION_H_
