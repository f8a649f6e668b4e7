// How GLib allocates GMime's small objects (each GObject, GByteArray, GPtrArray, list node).
//
// GLib before 2.76 serves them from GSlice's per-thread magazines, which a process with several
// threads and a fast malloc pays for (GSlice's locks and its cache's cross-thread returns:
// g_slice_alloc was 4.2% of the daemon's samples under load); 2.76 made GSlice plain malloc.
// GSlice reads its configuration (the G_SLICE environment variable) once, while GLib is loaded,
// before main: the daemon configures it from its executable's pre-initialisation array
// (server/main.cc), which the dynamic linker runs before any shared library's initialisers.
#ifndef NBSPAMD_TOKENIZER_GLIB_SLICES_H_
#define NBSPAMD_TOKENIZER_GLIB_SLICES_H_

namespace nbspamd::tokenizer {

// Configures GSlice for malloc (g_slice_set_config, GLib's own switch for G_SLICE=always-malloc)
// when this process's GLib is older than 2.76 and `environment` (a null-terminated "NAME=value"
// array) has no G_SLICE; G_SLICE set to anything ("" included) is the environment's choice and is
// kept. GSlice takes its configuration with its first allocation, which GLib's initialisers make,
// so this must run before them: from an executable's .preinit_array, given the environment that
// the array's functions receive (libc's own environ is not set up yet there). It uses nothing
// that needs an initialiser. Not thread-safe (no threads exist yet where it is meant to run).
void ChooseMallocSlices(char** environment);

// True when this process's GLib is older than 2.76, whose GSlice has magazines of its own that
// G_SLICE can choose or refuse; 2.76 and later allocate with malloc whatever G_SLICE says.
// Thread-safe.
[[nodiscard]] bool GSliceHasMagazines();

// True when GLib allocates GMime's small objects with malloc: GLib 2.76 or later, or GSlice
// configured for malloc by ChooseMallocSlices or by G_SLICE (always-malloc, or all). Thread-safe
// if nothing changes the environment meanwhile.
[[nodiscard]] bool GSliceAllocatesWithMalloc();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_GLIB_SLICES_H_
