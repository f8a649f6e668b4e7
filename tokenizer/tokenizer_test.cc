#include "tokenizer/tokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/token_hash.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using test_util::CountingOptions;
using test_util::TokensOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// Decodes well-formed UTF-8; nullopt if `text` is not.
std::optional<std::vector<char32_t>> DecodeUtf8(std::string_view text) {
  std::vector<char32_t> out;
  for (std::size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    int extra = 0;
    char32_t c = 0;
    if (lead < 0x80) {
      c = lead;
    } else if ((lead & 0xE0) == 0xC0 && lead >= 0xC2) {
      extra = 1, c = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      extra = 2, c = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0 && lead <= 0xF4) {
      extra = 3, c = lead & 0x07;
    } else {
      return std::nullopt;
    }
    for (int k = 1; k <= extra; ++k) {
      if (i + k >= text.size()) return std::nullopt;
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return std::nullopt;
      c = (c << 6) | (next & 0x3F);
    }
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) return std::nullopt;
    out.push_back(c);
    i += extra + 1;
  }
  return out;
}

// Checks the TokenBag invariants and that every text hashes to its entry.
void ExpectWellFormed(const TokenBag& bag) {
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    EXPECT_GE(bag.entries[i].count, 1u);
    if (i > 0) {
      EXPECT_LT(bag.entries[i - 1].hash, bag.entries[i].hash) << "at " << i;
    }
  }
  if (bag.texts.empty()) return;
  ASSERT_EQ(bag.texts.size(), bag.entries.size());
  for (std::size_t i = 0; i < bag.texts.size(); ++i) {
    EXPECT_EQ(HashToken(bag.texts[i].text), bag.entries[i].hash) << bag.texts[i].text;
    EXPECT_TRUE(DecodeUtf8(bag.texts[i].text).has_value()) << "not UTF-8 at " << i;
  }
}

// Token text -> count, from a bag tokenized with keep_text.
std::map<std::string, std::uint32_t> Counts(const TokenBag& bag) {
  ExpectWellFormed(bag);
  EXPECT_EQ(bag.texts.size(), bag.entries.size());
  std::map<std::string, std::uint32_t> counts;
  for (std::size_t i = 0; i < bag.texts.size() && i < bag.entries.size(); ++i) {
    counts[std::string(bag.texts[i].text)] = bag.entries[i].count;
  }
  return counts;
}

std::map<std::string, std::uint32_t> Counts(const Tokenizer& tokenizer, std::string_view message) {
  return Counts(tokenizer.Tokenize(message, /*keep_text=*/true));
}

std::map<std::string, std::uint32_t> Counts(std::string_view message) {
  return Counts(Tokenizer(TokenizerOptions{}), message);
}

bool IsCjkIdeograph(char32_t c) { return c >= 0x4E00 && c <= 0x9FFF; }

TEST(TokenizerTest, GoldenSentences) {
  EXPECT_THAT(Counts("send us your password"),
              ElementsAre(Pair("password", 1), Pair("send", 1), Pair("us", 1), Pair("your", 1)));
  EXPECT_THAT(Counts("review us now"),
              ElementsAre(Pair("now", 1), Pair("review", 1), Pair("us", 1)));
}

TEST(TokenizerTest, HashesAreHashTokenOfText) {
  const TokenBag bag = Tokenizer(TokenizerOptions{}).Tokenize("send us your password");
  EXPECT_TRUE(bag.texts.empty());
  std::vector<TokenHash> expected = {HashToken("send"), HashToken("us"), HashToken("your"),
                                     HashToken("password")};
  std::sort(expected.begin(), expected.end());
  ASSERT_EQ(bag.entries.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(bag.entries[i], (BagEntry{expected[i], 1}));
  }
}

TEST(TokenizerTest, KeepTextDoesNotChangeEntries) {
  const Tokenizer tokenizer(CountingOptions());
  const std::string message = "Subject: Win big\n\nWin win WIN, big prizes! Call 555 now.";
  const TokenBag with_text = tokenizer.Tokenize(message, true);
  const TokenBag without_text = tokenizer.Tokenize(message, false);
  ExpectWellFormed(with_text);
  EXPECT_EQ(with_text.entries, without_text.entries);
  EXPECT_TRUE(without_text.texts.empty());
  EXPECT_EQ(with_text.TotalCount(), without_text.TotalCount());
  // 2 subject words and 8 body words, besides the mail's whole (meta, content-type) tokens.
  const test_util::Tokens tokens = TokensOf(with_text);
  EXPECT_THAT(tokens.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:win", 1), Pair("subject:big", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kBody),
              UnorderedElementsAre(Pair("win", 3), Pair("big", 1), Pair("prizes", 1),
                                   Pair("call", 1), Pair("555", 1), Pair("now", 1)));
}

TEST(TokenizerTest, RepeatedWordsAreCounted) {
  EXPECT_THAT(Counts(Tokenizer(CountingOptions()), "spam Spam SPAM eggs"),
              ElementsAre(Pair("eggs", 1), Pair("spam", 3)));
}

TEST(TokenizerTest, BooleanCountsIsTheDefault) {
  EXPECT_TRUE(TokenizerOptions{}.boolean_counts);
  EXPECT_THAT(Counts("spam Spam SPAM eggs"), ElementsAre(Pair("eggs", 1), Pair("spam", 1)));
}

TEST(TokenizerTest, BooleanCounts) {
  TokenizerOptions options;
  options.boolean_counts = true;
  const TokenBag bag = Tokenizer(options).Tokenize("spam spam spam eggs", true);
  EXPECT_THAT(Counts(bag), ElementsAre(Pair("eggs", 1), Pair("spam", 1)));
  EXPECT_EQ(bag.TotalCount(), 2u);
}

TEST(TokenizerTest, CaseFoldingAndNfkc) {
  const Tokenizer tokenizer(TokenizerOptions{});
  EXPECT_EQ(tokenizer.Tokenize("HELLO").entries, tokenizer.Tokenize("hello").entries);
  EXPECT_THAT(Counts("HELLO"), ElementsAre(Pair("hello", 1)));
  // Fullwidth letters (U+FF26 U+FF55 U+FF4C U+FF4C) fold to ASCII.
  EXPECT_THAT(Counts("\xef\xbc\xa6\xef\xbd\x95\xef\xbd\x8c\xef\xbd\x8cwidth"),
              ElementsAre(Pair("fullwidth", 1)));
  EXPECT_THAT(Counts("Stra\xc3\x9f"
                     "e"),
              ElementsAre(Pair("strasse", 1)));                               // Straße
  EXPECT_THAT(Counts("\xef\xac\x81nance"), ElementsAre(Pair("finance", 1)));  // "ﬁ" ligature.
}

TEST(TokenizerTest, AccentedWordsStayWhole) {
  // "Héllo" precomposed and "He" + U+0301 combining acute both give the precomposed "héllo".
  EXPECT_THAT(Counts("H\xc3\xa9llo"), ElementsAre(Pair("h\xc3\xa9llo", 1)));
  EXPECT_THAT(Counts("He\xcc\x81llo"), ElementsAre(Pair("h\xc3\xa9llo", 1)));
  EXPECT_THAT(Counts("caf\xc3\xa9 cr\xc3\xa8me"),
              UnorderedElementsAre(Pair("caf\xc3\xa9", 1), Pair("cr\xc3\xa8me", 1)));
}

TEST(TokenizerTest, InvisibleCharactersDoNotHideWords) {
  // Zero-width space U+200B, zero-width non-joiner U+200C, joiner U+200D, word joiner U+2060,
  // soft hyphen U+00AD and the byte-order mark U+FEFF are default-ignorable: NFKC_Casefold
  // removes them, so a word written with them inside is the word.
  EXPECT_THAT(Counts("Vi\xe2\x80\x8b"
                     "agra"),
              ElementsAre(Pair("viagra", 1)));
  EXPECT_THAT(Counts("Vi\xe2\x80\x8c"
                     "ag\xe2\x80\x8d"
                     "ra"),
              ElementsAre(Pair("viagra", 1)));
  EXPECT_THAT(Counts("bit\xe2\x81\xa0"
                     "coin wal\xc2\xad"
                     "let \xef\xbb\xbf"
                     "password"),
              UnorderedElementsAre(Pair("bitcoin", 1), Pair("wallet", 1), Pair("password", 1)));
}

TEST(TokenizerTest, ChineseSplitsIntoDictionaryWords) {
  const auto counts = Counts("我们今天去北京");
  EXPECT_GT(counts.size(), 1u);
  for (const auto& [text, count] : counts) {
    const auto code_points = DecodeUtf8(text);
    ASSERT_TRUE(code_points.has_value());
    EXPECT_FALSE(code_points->empty());
    for (char32_t c : *code_points) EXPECT_TRUE(IsCjkIdeograph(c)) << text;
  }
  EXPECT_THAT(counts, Contains(Pair("北京", 1)));
}

TEST(TokenizerTest, JapaneseMixedText) {
  const auto counts = Counts("東京でラーメンを食べました。Hello World 2024!");
  EXPECT_THAT(counts, Contains(Pair("hello", 1)));
  EXPECT_THAT(counts, Contains(Pair("world", 1)));
  EXPECT_THAT(counts, Contains(Pair("2024", 1)));
  EXPECT_THAT(counts, Contains(Pair("東京", 1)));
  EXPECT_THAT(counts, Contains(Pair("ラーメン", 1)));
  EXPECT_GE(counts.size(), 6u);
  for (const auto& [text, count] : counts) {
    EXPECT_EQ(text.find_first_of(" !"), std::string::npos) << text;
    EXPECT_EQ(text.find("。"), std::string::npos) << text;
  }
}

TEST(TokenizerTest, NumbersAreTokens) {
  EXPECT_THAT(Counts("call 555-1234 now"), UnorderedElementsAre(Pair("call", 1), Pair("555", 1),
                                                                Pair("1234", 1), Pair("now", 1)));
}

TEST(TokenizerTest, InvalidUtf8IsReplacedNotFatal) {
  EXPECT_THAT(Counts("\xff\xfe abc \xc3"), ElementsAre(Pair("abc", 1)));
  EXPECT_THAT(Counts("ab\xff"
                     "cd"),
              UnorderedElementsAre(Pair("ab", 1), Pair("cd", 1)));
  // Overlong encodings and encoded surrogates are ill-formed too.
  EXPECT_THAT(Counts("\xc0\xaf \xed\xa0\x80 ok"), ElementsAre(Pair("ok", 1)));
}

TEST(TokenizerTest, ArbitraryBytesGiveWellFormedBags) {
  const Tokenizer tokenizer(TokenizerOptions{});
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 200; ++round) {
    std::string bytes(1 + round * 7, '\0');
    for (char& byte : bytes) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      byte = static_cast<char>(state >> 56);
    }
    ExpectWellFormed(tokenizer.Tokenize(bytes, true));
  }
}

TEST(TokenizerTest, PunctuationEmojiAndSpaceGiveNothing) {
  const Tokenizer tokenizer(TokenizerOptions{});
  EXPECT_THAT(tokenizer.Tokenize("!!! ... ??? --- *** ,;:", true).entries, IsEmpty());
  EXPECT_THAT(
      tokenizer.Tokenize("\xf0\x9f\x98\x80\xf0\x9f\x8e\x89 \xf0\x9f\x91\x8d\xf0\x9f\x8f\xbd", true)
          .entries,
      IsEmpty());
  EXPECT_THAT(tokenizer.Tokenize(" \t\r\n  \n", true).entries, IsEmpty());
}

TEST(TokenizerTest, EmptyInputGivesEmptyBag) {
  const TokenBag bag = Tokenizer(TokenizerOptions{}).Tokenize("", true);
  EXPECT_THAT(bag.entries, IsEmpty());
  EXPECT_THAT(bag.texts, IsEmpty());
}

TEST(TokenizerTest, MaxTokenCharsDropsLongWords) {
  const std::string long_word(100, 'x');
  EXPECT_THAT(Counts("short " + long_word + " end"),
              UnorderedElementsAre(Pair("short", 1), Pair("end", 1)));
  EXPECT_THAT(Counts(std::string(40, 'y')), ElementsAre(Pair(std::string(40, 'y'), 1)));
  EXPECT_THAT(Counts(std::string(41, 'y')), IsEmpty());
  // Code points, not bytes: 40 two-byte "é" are kept.
  std::string accented;
  for (int i = 0; i < 40; ++i) accented += "\xc3\xa9";
  EXPECT_THAT(Counts(accented), ElementsAre(Pair(accented, 1)));
}

TEST(TokenizerTest, MinTokenChars) {
  TokenizerOptions options;
  options.min_token_chars = 3;
  EXPECT_THAT(Counts(Tokenizer(options), "send us your password"),
              UnorderedElementsAre(Pair("send", 1), Pair("your", 1), Pair("password", 1)));
  options.min_token_chars = 5;
  options.max_token_chars = 4;
  EXPECT_THAT(Counts(Tokenizer(options), "send us your password"), IsEmpty());
}

TEST(TokenizerTest, MaxTokensBudget) {
  TokenizerOptions options = CountingOptions();  // So that the bag's total counts occurrences.
  options.max_tokens = 3;
  const Tokenizer tokenizer(options);
  EXPECT_THAT(Counts(tokenizer, "a b a c d e"), UnorderedElementsAre(Pair("a", 2), Pair("b", 1)));

  // Mail: whole tokens (meta, content-type, ...) come first, then header words, then body
  // words, all sharing the budget.
  const std::string mail = "Subject: one two\n\nthree four five";
  EXPECT_EQ(Tokenizer(options).Tokenize(mail).TotalCount(), 3u);
  const test_util::Tokens all = TokensOf(mail, CountingOptions());
  const std::uint64_t whole = all.total - 5;  // All but the 2 subject and 3 body words.
  ASSERT_GE(whole, 1u);
  for (const auto& [text, count] : all.counts) {
    if (text.starts_with("subject:") || all.sources.at(text) == TokenSource::kBody) continue;
    EXPECT_TRUE(all.sources.at(text) == TokenSource::kMeta || text.starts_with("content-type:") ||
                text.starts_with("hname:"))
        << text;
  }
  options.max_tokens = whole + 2;
  const test_util::Tokens subject_fits = TokensOf(mail, options);
  EXPECT_EQ(subject_fits.total, whole + 2);
  EXPECT_THAT(subject_fits.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:one", 1), Pair("subject:two", 1)));
  EXPECT_THAT(subject_fits.From(TokenSource::kBody), IsEmpty());
  options.max_tokens = whole + 3;
  const test_util::Tokens one_body_word = TokensOf(mail, options);
  EXPECT_EQ(one_body_word.total, whole + 3);
  EXPECT_THAT(one_body_word.From(TokenSource::kBody), ElementsAre(Pair("three", 1)));
  options.max_tokens = whole - 1;
  const test_util::Tokens cut_whole = TokensOf(mail, options);
  EXPECT_EQ(cut_whole.total, whole - 1);
  EXPECT_THAT(cut_whole.WithPrefix("subject:"), IsEmpty());

  options.max_tokens = 0;
  EXPECT_THAT(Tokenizer(options).Tokenize("a b c").entries, IsEmpty());
  EXPECT_THAT(Tokenizer(options).Tokenize(mail).entries, IsEmpty());
}

TEST(TokenizerTest, HugeInputIsBoundedByMaxMessageBytes) {
  std::string huge;
  huge.reserve(50u << 20);
  while (huge.size() < (50u << 20)) huge += "a ";

  // Default options (but counting): the token budget stops it.
  const TokenBag bounded = Tokenizer(CountingOptions()).Tokenize(huge);
  ASSERT_EQ(bounded.entries.size(), 1u);
  EXPECT_EQ(bounded.entries[0].hash, HashToken("a"));
  EXPECT_EQ(bounded.entries[0].count, 20000u);

  // No token budget: only the first 4 MiB are looked at, one "a" per two bytes.
  TokenizerOptions options = CountingOptions();
  options.max_tokens = std::numeric_limits<std::size_t>::max();
  const TokenBag by_bytes = Tokenizer(options).Tokenize(huge);
  ASSERT_EQ(by_bytes.entries.size(), 1u);
  EXPECT_EQ(by_bytes.entries[0].count, (4u << 20) / 2);
}

TEST(TokenizerTest, MaxMessageBytesCutsInput) {
  TokenizerOptions options;
  options.max_message_bytes = 7;
  EXPECT_THAT(Counts(Tokenizer(options), "hello world"),
              UnorderedElementsAre(Pair("hello", 1), Pair("w", 1)));
  // A cut inside a multi-byte character does not produce invalid text.
  options.max_message_bytes = 4;
  EXPECT_THAT(Counts(Tokenizer(options), "caf\xc3\xa9"), ElementsAre(Pair("caf", 1)));
}

TEST(TokenizerTest, LongTextAcrossChunksLosesNoWord) {
  // About 190 KB of distinct words, so several 64 KiB chunks.
  std::string text;
  constexpr int kWords = 20000;
  for (int i = 0; i < kWords; ++i) text += "word" + std::to_string(i) + (i % 13 == 0 ? "\n" : " ");
  TokenizerOptions options;
  options.max_tokens = kWords + 1;
  const auto counts = Counts(Tokenizer(options), text);
  EXPECT_EQ(counts.size(), static_cast<std::size_t>(kWords));
  for (int i = 0; i < kWords; i += 997) {
    EXPECT_THAT(counts, Contains(Pair("word" + std::to_string(i), 1)));
  }
}

TEST(TokenizerTest, LongTextWithoutSpacesIsChunkedSafely) {
  std::string text;
  while (text.size() < 200000) text += "我们今天去北京";
  const TokenBag bag = Tokenizer(CountingOptions()).Tokenize(text, true);
  ExpectWellFormed(bag);
  EXPECT_GT(bag.TotalCount(), 1000u);
  for (const TokenText& token : bag.texts) {
    const auto code_points = DecodeUtf8(token.text);
    ASSERT_TRUE(code_points.has_value());
    for (char32_t c : *code_points) EXPECT_TRUE(IsCjkIdeograph(c)) << token.text;
  }
}

TEST(TokenizerTest, SubjectTokensForMail) {
  const test_util::Tokens tokens =
      TokensOf("From: Alice <alice@example.com>\nSubject: FREE Money\n\nfree offer\n");
  EXPECT_THAT(tokens.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:free", 1), Pair("subject:money", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kBody),
              UnorderedElementsAre(Pair("free", 1), Pair("offer", 1)));
  for (const auto& [text, source] : tokens.sources) {
    if (text.starts_with("subject:")) {
      EXPECT_EQ(source, TokenSource::kHeader) << text;
    } else if (text.find(':') == std::string::npos) {
      EXPECT_EQ(source, TokenSource::kBody) << text;
    }
  }
  const test_util::Tokens subject_only = TokensOf("Subject: free\n\n");
  EXPECT_THAT(subject_only.WithPrefix("subject:"), ElementsAre(Pair("subject:free", 1)));
  EXPECT_EQ(subject_only.sources.at("subject:free"), TokenSource::kHeader);
  EXPECT_THAT(subject_only.From(TokenSource::kBody), IsEmpty());
}

TEST(TokenizerTest, SubjectHeaderNameIsCaseInsensitive) {
  for (const char* mail : {"SUBJECT: Hi\n\n", "subject: Hi\n\n", "Subject: Hi\n\n"}) {
    const test_util::Tokens tokens = TokensOf(mail);
    EXPECT_THAT(tokens.WithPrefix("subject:"), ElementsAre(Pair("subject:hi", 1))) << mail;
    EXPECT_THAT(tokens.From(TokenSource::kBody), IsEmpty()) << mail;
  }
}

TEST(TokenizerTest, NoSubjectTokensWhenDisabled) {
  TokenizerOptions options;
  options.header_tokens = false;
  const test_util::Tokens tokens =
      TokensOf("From: Alice <alice@example.com>\nSubject: FREE Money\n\nfree offer\n", options);
  EXPECT_THAT(tokens.From(TokenSource::kBody),
              UnorderedElementsAre(Pair("free", 1), Pair("offer", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kHeader), IsEmpty());
  EXPECT_THAT(tokens.WithPrefix("subject:"), IsEmpty());
  EXPECT_FALSE(tokens.AnyContains("alice"));
  // The same message with header tokens does have them.
  EXPECT_THAT(TokensOf("Subject: FREE Money\n\nfree offer\n").From(TokenSource::kHeader),
              Contains(Key("subject:free")));
}

TEST(TokenizerTest, NoSubjectTokensForPlainText) {
  // The first line is not a header field, so this is plain text: all words are body words.
  const TokenBag bag =
      Tokenizer(TokenizerOptions{}).Tokenize("Dear friend,\nSubject: free money\n", true);
  EXPECT_THAT(Counts(bag),
              UnorderedElementsAre(Pair("dear", 1), Pair("friend", 1), Pair("subject", 1),
                                   Pair("free", 1), Pair("money", 1)));
  for (const TokenText& token : bag.texts) EXPECT_EQ(token.source, TokenSource::kBody);
}

// Header values give prefixed tokens only: never body words, never unprefixed tokens.
TEST(TokenizerTest, OtherHeadersGiveOnlyPrefixedTokens) {
  const test_util::Tokens tokens =
      TokensOf("From: spammer@example.com\nX-Mailer: bulk\nX-Other: unlisted\n\nhi");
  EXPECT_THAT(tokens.From(TokenSource::kBody), ElementsAre(Pair("hi", 1)));
  EXPECT_THAT(tokens.counts, ::testing::IsSupersetOf({Pair("from:spammer@example.com", 1),
                                                      Pair("from-domain:example.com", 1),
                                                      Pair("mailer:bulk", 1)}));
  for (const auto& [text, source] : tokens.sources) {
    if (text == "hi") continue;
    EXPECT_NE(text.find(':'), std::string::npos) << text;
    EXPECT_NE(source, TokenSource::kBody) << text;
  }
  // Any other header gives its name and its words, prefixed.
  EXPECT_TRUE(tokens.Has("hname:x-other"));
  EXPECT_TRUE(tokens.Has("head:unlisted"));
}

TEST(TokenizerTest, FoldedSubject) {
  const test_util::Tokens tokens = TokensOf("Subject: cheap\r\n pills\r\n\tnow\r\n\r\nbody");
  EXPECT_THAT(tokens.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:cheap", 1), Pair("subject:pills", 1),
                                   Pair("subject:now", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kBody), ElementsAre(Pair("body", 1)));
}

TEST(TokenizerTest, LfAndCrlfGiveTheSameBag) {
  const Tokenizer tokenizer(CountingOptions());
  const TokenBag lf = tokenizer.Tokenize("Subject: a b\nTo: x\n\nline one\nline two\n", true);
  const TokenBag crlf =
      tokenizer.Tokenize("Subject: a b\r\nTo: x\r\n\r\nline one\r\nline two\r\n", true);
  EXPECT_EQ(lf.entries, crlf.entries);
  EXPECT_EQ(lf.texts, crlf.texts);
  EXPECT_THAT(Counts(lf), Contains(Pair("subject:a", 1)));
  EXPECT_THAT(Counts(lf), Contains(Pair("line", 2)));
}

// Documented in message_parts.h: a body whose first line reads like a header is taken for mail,
// and that line gives header tokens only (hname:hello, head:world), not body words.
TEST(TokenizerTest, BodyStartingWithHeaderLikeLineIsMail) {
  for (const char* message : {"Hello: world\n\nhow are you", "Hello: world\r\n\r\nhow are you",
                              // Without an empty line, the first non-header line starts the body.
                              "Hello: world\nhow are you", "Hello: world\r\nhow are you\r\n",
                              "Hello: world\n  folded\nhow are you\n"}) {
    const test_util::Tokens tokens = TokensOf(message);
    EXPECT_THAT(tokens.From(TokenSource::kBody),
                UnorderedElementsAre(Pair("how", 1), Pair("are", 1), Pair("you", 1)))
        << message;
    EXPECT_TRUE(tokens.Has("hname:hello")) << message;
    EXPECT_TRUE(tokens.Has("head:world")) << message;
  }
  // Header fields before that line are headers; lines after it, even header-like, are body.
  const test_util::Tokens tokens =
      TokensOf("Subject: hi there\nhow are you\nFrom: a@example.com\n");
  EXPECT_THAT(tokens.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:hi", 1), Pair("subject:there", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kBody),
              UnorderedElementsAre(Pair("how", 1), Pair("are", 1), Pair("you", 1), Pair("from", 1),
                                   Pair("a@example.com", 1)));
  EXPECT_THAT(tokens.WithPrefix("from:"), IsEmpty());
}

TEST(TokenizerTest, HeaderOnlyMessage) {
  const test_util::Tokens tokens = TokensOf("Subject: cheap pills\nFrom: x@example.com");
  EXPECT_THAT(tokens.WithPrefix("subject:"),
              UnorderedElementsAre(Pair("subject:cheap", 1), Pair("subject:pills", 1)));
  EXPECT_THAT(tokens.counts, Contains(Pair("from:x@example.com", 1)));
  EXPECT_THAT(tokens.From(TokenSource::kBody), IsEmpty());
}

TEST(TokenizerTest, EntriesSortedAndUnique) {
  const Tokenizer tokenizer(CountingOptions());
  std::string text = "Subject: the quick brown fox\n\n";
  for (int i = 0; i < 50; ++i)
    text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n";
  const TokenBag with_text = tokenizer.Tokenize(text, true);
  const TokenBag without_text = tokenizer.Tokenize(text, false);
  ExpectWellFormed(with_text);
  ExpectWellFormed(without_text);
  EXPECT_EQ(with_text.entries, without_text.entries);
  const test_util::Tokens tokens = TokensOf(with_text);
  std::uint64_t words = 0;
  for (const auto& [token, count] : tokens.counts) {
    if (token.starts_with("subject:") || tokens.sources.at(token) == TokenSource::kBody) {
      words += count;
    }
  }
  EXPECT_EQ(words, 4u + 50u * 10u);
  EXPECT_THAT(tokens.counts, Contains(Pair("the", 100)));
  EXPECT_THAT(tokens.counts, Contains(Pair("subject:the", 1)));
}

TEST(TokenizerTest, OptionsAreKept) {
  TokenizerOptions options;
  options.max_tokens = 7;
  options.boolean_counts = true;
  const Tokenizer tokenizer(options);
  EXPECT_EQ(tokenizer.options().max_tokens, 7u);
  EXPECT_TRUE(tokenizer.options().boolean_counts);
}

TEST(TokenizerTest, ConcurrentTokenizeMatchesSequential) {
  const Tokenizer tokenizer(TokenizerOptions{});
  const std::vector<std::string> messages = {
      "send us your password",
      "Subject: Héllo Wörld\r\n\r\nStraße café 我们今天去北京 東京でラーメンを食べました",
      std::string(300000, 'z') + " tail words here",
      "\xff\xfe abc \xc3",
  };
  std::vector<TokenBag> expected;
  for (const std::string& message : messages) expected.push_back(tokenizer.Tokenize(message, true));

  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 25; ++round) {
        for (std::size_t m = 0; m < messages.size(); ++m) {
          const TokenBag bag = tokenizer.Tokenize(messages[m], true);
          if (bag.entries != expected[m].entries || bag.texts != expected[m].texts) {
            ++mismatches[t];
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, Not(Contains(Not(0))));
  EXPECT_THAT(Counts(expected[3]), ElementsAre(Pair("abc", 1)));
}

}  // namespace
}  // namespace nbspamd::tokenizer
