#include "tokenizer/header_converters.h"

#include <iconv.h>

#include <mutex>
#include <string>

namespace nbspamd::tokenizer {

const std::vector<std::string_view>& HeaderConverterCharsets() {
  static const std::vector<std::string_view> charsets = {
      "ISO-8859-1",   "ISO-8859-2",   "ISO-8859-3",   "ISO-8859-4",   "ISO-8859-5",
      "ISO-8859-6",   "ISO-8859-7",   "ISO-8859-8",   "ISO-8859-9",   "ISO-8859-10",
      "ISO-8859-13",  "ISO-8859-14",  "ISO-8859-15",  "ISO-8859-16",  "WINDOWS-1250",
      "WINDOWS-1251", "WINDOWS-1252", "WINDOWS-1253", "WINDOWS-1254", "WINDOWS-1255",
      "WINDOWS-1256", "WINDOWS-1257", "WINDOWS-1258", "KOI8-R",       "KOI8-U",
      "GB2312",       "GBK",          "GB18030",      "BIG5",         "EUC-JP",
      "ISO-2022-JP",  "SHIFT_JIS",    "EUC-KR",       "ISO-2022-KR"};
  return charsets;
}

void KeepHeaderConvertersLoaded() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never closed: the descriptors are what keep the modules loaded. Kept where a leak checker
    // sees them (a vector never destroyed, reachable from this static), not dropped. A charset
    // this glibc lacks is skipped (GMime's own open fails the same way).
    static auto* const kept = new std::vector<iconv_t>();
    for (const std::string_view charset : HeaderConverterCharsets()) {
      const iconv_t descriptor = iconv_open("UTF-8", std::string(charset).c_str());
      if (descriptor != reinterpret_cast<iconv_t>(-1)) kept->push_back(descriptor);
    }
  });
}

}  // namespace nbspamd::tokenizer
