#include "tokenizer/header_converters.h"

#include <gtest/gtest.h>
#include <iconv.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace nbspamd::tokenizer {
namespace {

// Whether a glibc converter module named `module` ("ISO8859-1.so") is mapped into this process.
bool ModuleMapped(const std::string& module) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("/gconv/" + module) != std::string::npos;
}

// Opens and closes a descriptor from `charset` to UTF-8, as GMime does for each value.
void OpenAndClose(const char* charset) {
  const iconv_t descriptor = iconv_open("UTF-8", charset);
  ASSERT_NE(descriptor, reinterpret_cast<iconv_t>(-1)) << charset;
  iconv_close(descriptor);
}

// glibc unloads a module no descriptor holds once three other modules' descriptors have been
// closed since (TRIES_BEFORE_UNLOAD in gconv_dl.c). After many such closes, the kept charsets'
// modules are still mapped, so no open of them loads them again; a module not kept is gone.
TEST(HeaderConvertersTest, KeptModulesStayLoadedWhileOthersComeAndGo) {
  KeepHeaderConvertersLoaded();
  KeepHeaderConvertersLoaded();  // Once only: a second call opens nothing more.
  OpenAndClose("IBM037");        // Not kept.
  for (int round = 0; round < 3; ++round) {
    for (const char* charset : {"ISO-8859-1", "ISO-8859-2", "KOI8-R", "GB2312", "IBM500"}) {
      OpenAndClose(charset);
    }
  }
  for (const char* module :
       {"ISO8859-1.so", "ISO8859-2.so", "KOI8-R.so", "CP1251.so", "EUC-CN.so", "ISO-2022-JP.so"}) {
    EXPECT_TRUE(ModuleMapped(module)) << module;
  }
  // The check can fail: a module no descriptor holds is unloaded.
  EXPECT_FALSE(ModuleMapped("IBM037.so"));
}

TEST(HeaderConvertersTest, TheListNamesGMimesFallbackForEightBitText) {
  const std::vector<std::string_view>& charsets = HeaderConverterCharsets();
  EXPECT_NE(std::find(charsets.begin(), charsets.end(), "ISO-8859-1"), charsets.end());
}

}  // namespace
}  // namespace nbspamd::tokenizer
