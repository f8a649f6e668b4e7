// HashToken: the stable 64-bit key of a token.
//
// PART OF THE ON-DISK FORMAT: learned counts are stored under these hashes, so changing the hash
// function, its seed or the bytes hashed silently invalidates every stored model. Never change
// it; a different hash needs a new storage schema version and a migration.
#ifndef NBSPAMD_COMMON_TOKEN_HASH_H_
#define NBSPAMD_COMMON_TOKEN_HASH_H_

#include <string_view>

#include "common/token_bag.h"

namespace nbspamd {

// XXH3_64bits with seed 0 over the UTF-8 bytes of the full token text, prefix included
// ("subject:free", not "free"). Pure and thread-safe.
[[nodiscard]] TokenHash HashToken(std::string_view token_text);

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_TOKEN_HASH_H_
