// ToUtf8: text of a declared (or undeclared) charset to UTF-8: uchardet guesses a charset that is
// missing or wrong, ICU converts.
#ifndef NBSPAMD_TOKENIZER_CHARSET_H_
#define NBSPAMD_TOKENIZER_CHARSET_H_

#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// How a conversion went, for meta tokens.
enum class CharsetOutcome {
  kAsDeclared,  // Converted from the declared charset (or it was valid UTF-8/ASCII already).
  kDetected,    // No usable declaration, or the bytes contradicted it: the detector chose.
  kUnknown,     // The declared charset is unknown to ICU (the detector chose instead).
};

struct Utf8Text {
  std::string text;  // Valid UTF-8: undecodable bytes became U+FFFD.
  CharsetOutcome outcome = CharsetOutcome::kAsDeclared;
  std::string charset;  // The charset used, lower-case.
};

// Converts `bytes` from `declared` ("" when none was declared) to UTF-8. Bytes that are valid
// UTF-8 and declared as UTF-8, ASCII or nothing are taken as they are; an ASCII declaration with
// 8-bit bytes, an unknown charset, or none for 8-bit text goes through uchardet's charset
// detector (windows-1252 when it finds none ICU can convert). Thread-safe: one detector per thread.
[[nodiscard]] Utf8Text ToUtf8(std::string_view bytes, std::string_view declared);

// ICU's names (ucnv_getName) of the converters of the single-byte charsets whose bytes below 0x80
// are ASCII: ISO-8859-1 to -16, windows-1250 to -1258, KOI8-R and KOI8-U. Text of only such bytes
// declared in any alias of them is its own UTF-8, and ToUtf8 copies it rather than converting
// (CharsetTest checks every one converts each ASCII byte to itself). Sorted; thread-safe.
[[nodiscard]] const std::vector<std::string>& AsciiCompatibleConverters();
[[nodiscard]] bool IsAsciiCompatibleConverter(std::string_view converter);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_CHARSET_H_
