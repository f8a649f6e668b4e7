#include "tokenizer/glib_slices.h"

#include <glib.h>

#include <cstdlib>
#include <string_view>

namespace nbspamd::tokenizer {

bool GSliceHasMagazines() {
  // glib_check_version answers null when the running GLib is at least the version asked for.
  return glib_check_version(2, 76, 0) != nullptr;
}

// g_slice_set_config and g_slice_get_config are deprecated (since 2.34), yet they are GSlice's
// switch up to 2.75, the only GLib they are called with.
G_GNUC_BEGIN_IGNORE_DEPRECATIONS

void ChooseMallocSlices(char** environment) {
  if (!GSliceHasMagazines()) return;
  for (char** variable = environment; variable != nullptr && *variable != nullptr; ++variable) {
    if (std::string_view(*variable).starts_with("G_SLICE=")) return;
  }
  // GSlice starts its configuration from this one, then adds what G_SLICE asks for.
  g_slice_set_config(G_SLICE_CONFIG_ALWAYS_MALLOC, TRUE);
}

bool GSliceAllocatesWithMalloc() {
  if (!GSliceHasMagazines() || g_slice_get_config(G_SLICE_CONFIG_ALWAYS_MALLOC) != 0) return true;
  // G_SLICE's flags as GSlice parses them (it also accepts "all").
  const char* asked = std::getenv("G_SLICE");
  if (asked == nullptr) return false;
  const GDebugKey keys[] = {{"always-malloc", 1}, {"debug-blocks", 2}};
  return (g_parse_debug_string(asked, keys, G_N_ELEMENTS(keys)) & 1) != 0;
}

G_GNUC_END_IGNORE_DEPRECATIONS

}  // namespace nbspamd::tokenizer
