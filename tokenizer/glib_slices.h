// How GLib allocates GMime's small objects (each GObject, GByteArray, GPtrArray, list node).
//
// GLib before 2.76 serves them from GSlice's per-thread magazines, which a process with several
// threads and a fast malloc pays for (GSlice's locks and its cache's cross-thread returns:
// g_slice_alloc was 4.2% of the daemon's samples under load); 2.76 made GSlice plain malloc.
// GSlice reads the G_SLICE environment variable once, while GLib is loaded, before main: a
// process that wants malloc must be started with G_SLICE=always-malloc (server/main.cc starts
// itself again so).
#ifndef NBSPAMD_TOKENIZER_GLIB_SLICES_H_
#define NBSPAMD_TOKENIZER_GLIB_SLICES_H_

namespace nbspamd::tokenizer {

// True when this process's GLib is older than 2.76 and its environment leaves G_SLICE unset, so
// GSlice runs its own magazines; false when GLib already allocates with malloc or the
// environment chose (G_SLICE set to anything, "" included, is the environment's choice).
// Thread-safe if nothing changes the environment meanwhile.
[[nodiscard]] bool GSliceKeepsItsMagazines();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_GLIB_SLICES_H_
