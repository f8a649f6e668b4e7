#include "tokenizer/charset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unicode/unistr.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using test_util::Tokens;
using test_util::TokensOf;
using ::testing::Contains;
using ::testing::IsSupersetOf;
using ::testing::Key;
using ::testing::Pair;

// The same words in UTF-8 and in a legacy charset (every byte escaped).
struct Sample {
  const char* charset;
  std::string bytes;
  std::string utf8;
};

const Sample kLatin1{"ISO-8859-1", "\x47\x72\xfc\xdf\x65\x20\x63\x61\x66\xe9", "Grüße café"};
const Sample kKoi8r{"KOI8-R", "\xf0\xd2\xc9\xd7\xc5\xd4\x20\xcd\xc9\xd2", "Привет мир"};
const Sample kShiftJis{"Shift_JIS", "\x93\x8c\x8b\x9e\x83\x89\x81\x5b\x83\x81\x83\x93",
                       "東京ラーメン"};
const Sample kGb2312{"GB2312", "\xb1\xb1\xbe\xa9\xbb\xb6\xd3\xad\xc4\xe3", "北京欢迎你"};

// A German sentence in ISO-8859-1: long enough for the charset detector to be sure.
const std::string kGermanLatin1 =
    "\x73\x63\x68\xf6\x6e\x65\x20\x47\x72\xfc\xdf\x65\x20\x61\x75\x73\x20\x4b\xf6\x6c\x6e\x20\x75"
    "\x6e\x64\x20\x76\x69\x65\x6c\x65\x20\x42\xfc\x63\x68\x65\x72\x20\x66\xfc\x72\x20\x53\x69\x65";
const std::string kGermanUtf8 = "schöne Grüße aus Köln und viele Bücher für Sie";

TEST(CharsetTest, Utf8AndAsciiPassThrough) {
  for (const char* declared : {"", "utf-8", "UTF-8", "utf8", "us-ascii", "ASCII"}) {
    const Utf8Text ascii = ToUtf8("plain text", declared);
    EXPECT_EQ(ascii.text, "plain text") << declared;
    EXPECT_EQ(ascii.outcome, CharsetOutcome::kAsDeclared) << declared;
  }
  const Utf8Text utf8 = ToUtf8("Grüße", "UTF-8");
  EXPECT_EQ(utf8.text, "Grüße");
  EXPECT_EQ(utf8.charset, "utf-8");
  EXPECT_EQ(ToUtf8("Grüße", "").charset, "utf-8");
  EXPECT_EQ(ToUtf8("", "koi8-r").text, "");
}

TEST(CharsetTest, DeclaredCharsetsAreConverted) {
  for (const Sample& sample : {kLatin1, kKoi8r, kShiftJis, kGb2312}) {
    const Utf8Text text = ToUtf8(sample.bytes, sample.charset);
    EXPECT_EQ(text.text, sample.utf8) << sample.charset;
    EXPECT_EQ(text.outcome, CharsetOutcome::kAsDeclared) << sample.charset;
    std::string lower = sample.charset;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(text.charset, lower);
  }
  // Aliases ICU knows.
  EXPECT_EQ(ToUtf8(kLatin1.bytes, "latin1").text, kLatin1.utf8);
  EXPECT_EQ(ToUtf8(kLatin1.bytes, "windows-1252").text, kLatin1.utf8);
  EXPECT_EQ(ToUtf8(kShiftJis.bytes, "sjis").text, kShiftJis.utf8);
}

TEST(CharsetTest, UnknownCharsetIsDetected) {
  const Utf8Text text = ToUtf8(kGermanLatin1, "x-no-such-charset");
  EXPECT_EQ(text.outcome, CharsetOutcome::kUnknown);
  EXPECT_EQ(text.text, kGermanUtf8);
  EXPECT_FALSE(text.charset.empty());
  EXPECT_NE(text.charset, "x-no-such-charset");
  // ASCII under an unknown name is still the same text.
  const Utf8Text ascii = ToUtf8("hello world", "x-no-such-charset");
  EXPECT_EQ(ascii.outcome, CharsetOutcome::kUnknown);
  EXPECT_EQ(ascii.text, "hello world");
}

TEST(CharsetTest, EightBitTextDeclaredAsciiIsDetected) {
  for (const char* declared : {"us-ascii", "ascii"}) {
    const Utf8Text text = ToUtf8(kGermanLatin1, declared);
    EXPECT_EQ(text.outcome, CharsetOutcome::kDetected) << declared;
    EXPECT_EQ(text.text, kGermanUtf8) << declared;
  }
  // Undeclared 8-bit text too.
  const Utf8Text undeclared = ToUtf8(kGermanLatin1, "");
  EXPECT_EQ(undeclared.outcome, CharsetOutcome::kDetected);
  EXPECT_EQ(undeclared.text, kGermanUtf8);
  // Valid UTF-8 declared as ASCII is taken as UTF-8.
  const Utf8Text utf8 = ToUtf8(kGermanUtf8, "us-ascii");
  EXPECT_EQ(utf8.outcome, CharsetOutcome::kAsDeclared);
  EXPECT_EQ(utf8.text, kGermanUtf8);
}

// The detector is kept per thread and reset for each text: answers in a row are each the
// text's own, whatever came before. Undeclared Japanese and Russian are read in their charsets.
TEST(CharsetTest, UndeclaredTextsInARowAreEachDetectedOnTheirOwn) {
  // Long enough for the detector to be sure.
  std::string japanese;  // 東京ラーメン in Shift_JIS, and again with a space between.
  std::string russian;   // Привет мир in KOI8-R.
  for (int i = 0; i < 20; ++i) {
    japanese += kShiftJis.bytes + std::string(" ");
    russian += kKoi8r.bytes + std::string(" ");
  }
  for (int round = 0; round < 2; ++round) {
    const Utf8Text from_japanese = ToUtf8(japanese, "");
    EXPECT_EQ(from_japanese.outcome, CharsetOutcome::kDetected);
    EXPECT_EQ(from_japanese.charset, "shift_jis");
    EXPECT_TRUE(from_japanese.text.starts_with(kShiftJis.utf8 + " " + kShiftJis.utf8));
    const Utf8Text from_german = ToUtf8(kGermanLatin1, "");
    EXPECT_EQ(from_german.text, kGermanUtf8);
    const Utf8Text from_russian = ToUtf8(russian, "us-ascii");
    EXPECT_EQ(from_russian.outcome, CharsetOutcome::kDetected);
    EXPECT_EQ(from_russian.charset, "koi8-r");
    EXPECT_TRUE(from_russian.text.starts_with(kKoi8r.utf8 + " " + kKoi8r.utf8));
  }
}

// Short texts are where the detector is least sure; its guess must not turn ASCII-compatible
// text into UTF-16 (which would lose every ASCII word).
TEST(CharsetTest, ShortEightBitTextKeepsItsAsciiWords) {
  for (const char* declared : {"", "us-ascii", "utf-8", "x-unknown"}) {
    EXPECT_EQ(ToUtf8("\x47\x72\xfc\xdf\x65", declared).text, "Grüße") << declared;
    EXPECT_TRUE(ToUtf8("\x63\x61\x66\xe9", declared).text.starts_with("caf")) << declared;
    EXPECT_NE(ToUtf8("short \xff", declared).text.find("short"), std::string::npos) << declared;
  }
  // Real UTF-16 (with its NUL bytes) is still recognised.
  const std::string utf16le("\xff\xfeh\0e\0l\0l\0o\0 \0w\0o\0r\0l\0d\0", 24);
  const Utf8Text text = ToUtf8(utf16le, "");
  EXPECT_TRUE(text.charset.starts_with("utf-16")) << text.charset;
  EXPECT_NE(text.text.find("hello world"), std::string::npos);
}

TEST(CharsetTest, InvalidUtf8DeclaredUtf8GivesValidUtf8) {
  const Utf8Text text = ToUtf8("ab\xff\xfe cd \xc3", "utf-8");
  EXPECT_TRUE(IsValidUtf8(text.text));
  EXPECT_NE(text.text.find("cd"), std::string::npos);
}

TEST(CharsetTest, ArbitraryBytesAlwaysGiveValidUtf8) {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (const char* declared : {"", "utf-8", "us-ascii", "iso-8859-1", "koi8-r", "shift_jis",
                               "gb2312", "utf-16", "utf-32", "iso-2022-jp", "x-unknown"}) {
    for (int round = 0; round < 20; ++round) {
      std::string bytes(1 + round * 13, '\0');
      for (char& byte : bytes) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        byte = static_cast<char>(state >> 56);
      }
      const Utf8Text text = ToUtf8(bytes, declared);
      EXPECT_TRUE(IsValidUtf8(text.text)) << declared;
      EXPECT_FALSE(text.charset.empty()) << declared;
    }
  }
}

// Through the tokenizer: a body in a legacy charset gives the tokens of its UTF-8 text.

std::string MailIn(std::string_view charset, std::string_view bytes) {
  std::string mail = "Subject: charset test\nContent-Type: text/plain; charset=";
  mail.append(charset).append("\n\n").append(bytes).append("\n");
  return mail;
}

TEST(CharsetTest, MailBodiesAreConvertedToTheUtf8Words) {
  for (const Sample& sample : {kLatin1, kKoi8r, kShiftJis, kGb2312}) {
    const Tokens mail = TokensOf(MailIn(sample.charset, sample.bytes));
    const Tokens utf8 = TokensOf(sample.utf8);
    ASSERT_GE(utf8.counts.size(), 2u) << sample.charset;
    EXPECT_EQ(mail.From(TokenSource::kBody), utf8.counts) << sample.charset;
    std::string meta = "meta:charset:" + std::string(sample.charset);
    for (char& c : meta) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_THAT(mail.counts, Contains(Pair(meta, 1))) << sample.charset;
    EXPECT_FALSE(mail.Has("meta:charset-unknown"));
  }
  // Quoted-printable and base64 in a legacy charset.
  const Tokens qp = TokensOf(
      "Subject: qp\nContent-Type: text/plain; charset=koi8-r\n"
      "Content-Transfer-Encoding: quoted-printable\n\n=F0=D2=C9=D7=C5=D4 =CD=C9=D2\n");
  EXPECT_EQ(qp.From(TokenSource::kBody), TokensOf(kKoi8r.utf8).counts);
}

TEST(CharsetTest, UnknownCharsetInMail) {
  const Tokens mail = TokensOf(MailIn("x-no-such-charset", kGermanLatin1));
  EXPECT_THAT(mail.counts, Contains(Key("meta:charset-unknown")));
  EXPECT_EQ(mail.From(TokenSource::kBody), TokensOf(kGermanUtf8).counts);
  EXPECT_THAT(mail.counts, Contains(Key("subject:charset")));
}

TEST(CharsetTest, EightBitMailDeclaredAsciiIsDetected) {
  const Tokens mail = TokensOf(MailIn("us-ascii", kGermanLatin1));
  EXPECT_EQ(mail.From(TokenSource::kBody), TokensOf(kGermanUtf8).counts);
  EXPECT_THAT(mail.counts, IsSupersetOf({Key("meta:charset-mismatch")}));
  EXPECT_FALSE(mail.Has("meta:charset:us-ascii"));
  // Without a Content-Type at all.
  const Tokens undeclared = TokensOf("Subject: x\n\n" + kGermanLatin1 + "\n");
  EXPECT_EQ(undeclared.From(TokenSource::kBody), TokensOf(kGermanUtf8).counts);
}

TEST(CharsetTest, EncodedWordsInLegacyCharsets) {
  // "Привет мир" in KOI8-R, base64; "東京" in Shift_JIS, Q-encoded.
  const Tokens tokens =
      TokensOf("Subject: =?koi8-r?B?8NLJ18XUIM3J0g==?= =?shift_jis?Q?=93=8C=8B=9E?=\n\nx\n");
  EXPECT_THAT(tokens.counts,
              IsSupersetOf({Key("subject:привет"), Key("subject:мир"), Key("subject:東京")}));
}

// ToUtf8 copies ASCII text declared in these charsets rather than converting it: each must convert
// every ASCII byte, alone and beside any other, to itself.
TEST(CharsetTest, AsciiCompatibleConvertersConvertAsciiToItself) {
  const std::vector<std::string>& converters = AsciiCompatibleConverters();
  EXPECT_GE(converters.size(), 20u);  // ICU knows (nearly) all the charsets listed.
  std::string pairs;                  // Every ordered pair of ASCII bytes.
  for (int first = 0; first < 0x80; ++first) {
    for (int second = 0; second < 0x80; ++second) {
      pairs += static_cast<char>(first);
      pairs += static_cast<char>(second);
    }
  }
  for (const std::string& converter : converters) {
    const icu::UnicodeString text(pairs.data(), static_cast<int32_t>(pairs.size()),
                                  converter.c_str());
    std::string utf8;
    text.toUTF8String(utf8);
    EXPECT_EQ(utf8, pairs) << converter;
  }
  EXPECT_TRUE(IsAsciiCompatibleConverter(converters.front()));
  EXPECT_FALSE(IsAsciiCompatibleConverter("UTF-16"));
  // ASCII text declared in one of them (under any alias) is as it was.
  for (const char* alias : {"ISO-8859-1", "latin1", "iso_8859-15", "CP1252", "koi8-r"}) {
    const Utf8Text text = ToUtf8("plain ASCII words\r\n", alias);
    EXPECT_EQ(text.text, "plain ASCII words\r\n") << alias;
    EXPECT_EQ(text.outcome, CharsetOutcome::kAsDeclared) << alias;
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
