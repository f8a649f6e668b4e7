// KeepHeaderConvertersLoaded: the glibc converter modules of the charsets mail headers use, kept
// loaded for the life of the process.
//
// GMime 3 decodes a header value's encoded words and 8-bit text through iconv, opening a
// descriptor for each conversion and closing it after (gmime-iconv.c keeps no cache). glibc
// loads a charset's converter module (gconv/ISO8859-1.so, ...) when a descriptor needs it and
// unloads it once none has held it for a few closes, so reading mail of several charsets loaded
// and unloaded the same modules over and over: dlopen was 3.4% of the reader's time on the
// corpora's mix. One descriptor a charset, opened here and never closed, holds each module; the
// conversions themselves are glibc's as before.
#ifndef NBSPAMD_TOKENIZER_HEADER_CONVERTERS_H_
#define NBSPAMD_TOKENIZER_HEADER_CONVERTERS_H_

#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// The charsets whose converters to UTF-8 are kept loaded: GMime's fallbacks for 8-bit header
// text (UTF-8, ISO-8859-1) and the charsets of encoded words common in mail.
[[nodiscard]] const std::vector<std::string_view>& HeaderConverterCharsets();

// Opens (once per process; later calls do nothing) a descriptor from each of
// HeaderConverterCharsets() to UTF-8 that glibc has, and keeps it open. Thread-safe.
void KeepHeaderConvertersLoaded();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HEADER_CONVERTERS_H_
