#include "tokenizer/charset.h"

#include <uchardet/uchardet.h>
#include <unicode/ucnv.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/utf8.h"
#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

bool IsAscii(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool IsUtf8Name(std::string_view name) { return name == "utf-8" || name == "utf8"; }

bool IsAsciiName(std::string_view name) {
  return name == "us-ascii" || name == "ascii" || name == "ansi_x3.4-1968";
}

// ICU's name for the converter of `charset` (an alias of it, in any case), or "" when ICU has
// none: the name is ICU's own, the same for every alias.
std::string ConverterName(const std::string& charset) {
  UErrorCode status = U_ZERO_ERROR;
  UConverter* converter = ucnv_open(charset.c_str(), &status);
  std::string name;
  if (converter != nullptr && U_SUCCESS(status)) {
    const char* icu_name = ucnv_getName(converter, &status);
    name = U_SUCCESS(status) && icu_name != nullptr ? icu_name : "?";
  }
  if (converter != nullptr) ucnv_close(converter);
  return name;
}

// Whether ICU has a converter for `charset`.
bool IsKnown(const std::string& charset) { return !ConverterName(charset).empty(); }

// The charset uchardet finds most likely for `bytes`, or "" when it finds none. One detector per
// thread, reset for each text (uchardet_new builds all its probers: costly per part).
std::string Detect(std::string_view bytes) {
  thread_local const std::unique_ptr<std::remove_pointer_t<uchardet_t>, decltype(&uchardet_delete)>
      detector(uchardet_new(), uchardet_delete);
  if (detector == nullptr) return "";
  uchardet_reset(detector.get());
  // The start of the text is plenty and bounds the work.
  const std::size_t length = std::min<std::size_t>(bytes.size(), 64 * 1024);
  if (uchardet_handle_data(detector.get(), bytes.data(), length) != 0) return "";
  uchardet_data_end(detector.get());
  const char* name = uchardet_get_charset(detector.get());
  if (name == nullptr) return "";
  std::string charset = AsciiLowered(name);
  if (charset == "ascii") return "us-ascii";
  // UTF-16 and UTF-32 text holds NUL bytes unless it is all outside Latin scripts; never take
  // 8-bit text without any for them, which would turn its ASCII words into CJK-looking garbage.
  if ((charset.starts_with("utf-16") || charset.starts_with("utf-32")) &&
      bytes.substr(0, length).find('\0') == std::string_view::npos) {
    return "";
  }
  return charset;
}

// Converts with ICU; undecodable bytes become U+FFFD.
std::string Convert(std::string_view bytes, const std::string& charset) {
  const icu::UnicodeString text(bytes.data(), static_cast<int32_t>(bytes.size()), charset.c_str());
  std::string utf8;
  text.toUTF8String(utf8);
  return utf8;
}

// Valid UTF-8 (invalid sequences replaced by U+FFFD).
std::string RepairUtf8(std::string_view bytes) {
  std::string utf8;
  icu::UnicodeString::fromUTF8(icu::StringPiece(bytes.data(), static_cast<int32_t>(bytes.size())))
      .toUTF8String(utf8);
  return utf8;
}

}  // namespace

const std::vector<std::string>& AsciiCompatibleConverters() {
  static const std::vector<std::string> converters = [] {
    std::vector<std::string> names;
    for (const char* charset :
         {"iso-8859-1",   "iso-8859-2",   "iso-8859-3",   "iso-8859-4",   "iso-8859-5",
          "iso-8859-6",   "iso-8859-7",   "iso-8859-8",   "iso-8859-9",   "iso-8859-10",
          "iso-8859-13",  "iso-8859-14",  "iso-8859-15",  "iso-8859-16",  "windows-1250",
          "windows-1251", "windows-1252", "windows-1253", "windows-1254", "windows-1255",
          "windows-1256", "windows-1257", "windows-1258", "koi8-r",       "koi8-u"}) {
      if (std::string name = ConverterName(charset); !name.empty()) {
        names.push_back(std::move(name));
      }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }();
  return converters;
}

bool IsAsciiCompatibleConverter(std::string_view converter) {
  const std::vector<std::string>& converters = AsciiCompatibleConverters();
  return std::binary_search(converters.begin(), converters.end(), converter);
}

Utf8Text ToUtf8(std::string_view bytes, std::string_view declared_name) {
  const std::string declared = AsciiLowered(declared_name);
  Utf8Text result;
  const bool ascii_or_utf8_or_none =
      declared.empty() || IsUtf8Name(declared) || IsAsciiName(declared);
  if (ascii_or_utf8_or_none && (IsAscii(bytes) || IsValidUtf8(bytes))) {
    result.text = std::string(bytes);
    result.charset = declared.empty() ? "utf-8" : declared;
    return result;
  }
  if (!ascii_or_utf8_or_none) {
    if (const std::string converter = ConverterName(declared); !converter.empty()) {
      // ASCII text in a charset whose ASCII bytes are ASCII is its own conversion.
      result.text = IsAsciiCompatibleConverter(converter) && IsAscii(bytes)
                        ? std::string(bytes)
                        : Convert(bytes, declared);
      result.charset = declared;
      return result;
    }
    result.outcome = CharsetOutcome::kUnknown;
  } else {
    result.outcome = CharsetOutcome::kDetected;
  }
  std::string detected = Detect(bytes);
  if (detected.empty() || !IsKnown(detected)) detected = "windows-1252";
  result.text = IsUtf8Name(detected) ? RepairUtf8(bytes) : Convert(bytes, detected);
  result.charset = detected;
  return result;
}

}  // namespace nbspamd::tokenizer
