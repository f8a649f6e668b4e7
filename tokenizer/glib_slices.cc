#include "tokenizer/glib_slices.h"

#include <glib.h>

#include <cstdlib>

namespace nbspamd::tokenizer {

bool GSliceKeepsItsMagazines() {
  // glib_check_version answers null when the running GLib is at least the version asked for.
  return glib_check_version(2, 76, 0) != nullptr && std::getenv("G_SLICE") == nullptr;
}

}  // namespace nbspamd::tokenizer
