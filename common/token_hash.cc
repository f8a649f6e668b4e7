#include "common/token_hash.h"

// Inlined: the same XXH3 code as the library, without a call through its dispatch per token.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace nbspamd {

TokenHash HashToken(std::string_view token_text) {
  // XXH3_64bits is XXH3 with seed 0. Do not change: see the header.
  return static_cast<TokenHash>(XXH3_64bits(token_text.data(), token_text.size()));
}

}  // namespace nbspamd
