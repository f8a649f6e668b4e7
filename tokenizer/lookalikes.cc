#include "tokenizer/lookalikes.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uspoof.h>
#include <unicode/utf8.h>

#include <array>
#include <cstdint>
#include <memory>

namespace nbspamd::tokenizer {
namespace {

constexpr UChar32 kFirst = 0x80;
constexpr UChar32 kLimit = 0x3000;  // Alphabetic scripts; CJK, kana and Hangul imitate no ASCII.
constexpr char kNoFold = 0;
constexpr char kDrop = 1;  // A combining mark: folds to nothing.

// The one ASCII letter or digit (lower-cased) that `text` is once its marks are dropped after
// NFD, else kNoFold.
char AsciiOf(const icu::UnicodeString& text, const icu::Normalizer2& nfd) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString decomposed = nfd.normalize(text, status);
  if (U_FAILURE(status)) return kNoFold;
  char ascii = kNoFold;
  for (int32_t i = 0; i < decomposed.length();) {
    const UChar32 c = decomposed.char32At(i);
    i += U16_LENGTH(c);
    if (u_charType(c) == U_NON_SPACING_MARK) continue;
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum || ascii != kNoFold) return kNoFold;
    ascii = static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  }
  return ascii;
}

using FoldTable = std::array<char, kLimit - kFirst>;

// Every fold of [kFirst, kLimit), as the header says; all kNoFold if ICU cannot give them.
std::unique_ptr<const FoldTable> BuildFoldTable() {
  auto table = std::make_unique<FoldTable>();
  table->fill(kNoFold);
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status) || nfd == nullptr) return table;
  USpoofChecker* checker = uspoof_open(&status);
  if (U_FAILURE(status)) return table;
  for (UChar32 c = kFirst; c < kLimit; ++c) {
    char& fold = (*table)[static_cast<std::size_t>(c - kFirst)];
    if (u_charType(c) == U_NON_SPACING_MARK) {
      fold = kDrop;
      continue;
    }
    if (!u_isalnum(c)) continue;
    const icu::UnicodeString one(c);
    fold = AsciiOf(one, *nfd);
    if (fold != kNoFold) continue;
    icu::UnicodeString skeleton;
    UErrorCode skeleton_status = U_ZERO_ERROR;
    uspoof_getSkeletonUnicodeString(checker, 0, one, skeleton, &skeleton_status);
    if (U_SUCCESS(skeleton_status)) fold = AsciiOf(skeleton, *nfd);
  }
  uspoof_close(checker);
  return table;
}

const FoldTable& Folds() {
  static const std::unique_ptr<const FoldTable> table = BuildFoldTable();
  return *table;
}

}  // namespace

bool FoldLookalikes(std::string& text, std::size_t from) {
  bool has_ascii_letter = false;
  bool has_other = false;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  const auto length = static_cast<int32_t>(text.size());
  for (auto i = static_cast<int32_t>(from); i < length;) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < 0) return false;  // Not well-formed.
    if (c < kFirst) {
      has_ascii_letter = has_ascii_letter || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
      continue;
    }
    if (c >= kLimit || Folds()[static_cast<std::size_t>(c - kFirst)] == kNoFold) return false;
    has_other = true;
  }
  if (!has_ascii_letter || !has_other) return false;
  // In place: each folded code point takes at most one byte of the two or more it had.
  auto write = from;
  for (auto i = static_cast<int32_t>(from); i < length;) {
    UChar32 c;
    U8_NEXT(bytes, i, length, c);
    if (c < kFirst) {
      text[write++] = static_cast<char>(c);
    } else if (const char fold = Folds()[static_cast<std::size_t>(c - kFirst)]; fold != kDrop) {
      text[write++] = fold;
    }
  }
  text.resize(write);
  return true;
}

}  // namespace nbspamd::tokenizer
