#include "tokenizer/byte_ngrams.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "common/token_hash.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using test_util::TokensOf;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

// The options with byte n-grams of size n.
TokenizerOptions WithNgrams(std::size_t n) {
  TokenizerOptions options;
  options.byte_ngrams = n;
  return options;
}

// The byte n-gram tokens of `message` (readable text -> count).
std::map<std::string, std::uint32_t> NgramsOf(std::string_view message,
                                              const TokenizerOptions& options) {
  return TokensOf(message, options).From(TokenSource::kByteNgram);
}

// The other tokens of `message` (text -> count).
std::map<std::string, std::uint32_t> WordsOf(std::string_view message,
                                             const TokenizerOptions& options) {
  const test_util::Tokens tokens = TokensOf(message, options);
  std::map<std::string, std::uint32_t> words = tokens.counts;
  std::erase_if(words, [&](const auto& token) {
    return tokens.sources.at(token.first) == TokenSource::kByteNgram;
  });
  return words;
}

TEST(ByteNgramsTest, SixBytesGiveThreeFourGrams) {
  EXPECT_THAT(
      NgramsOf("abcdef", WithNgrams(4)),
      ElementsAre(Pair(R"(b4:"abcd")", 1), Pair(R"(b4:"bcde")", 1), Pair(R"(b4:"cdef")", 1)));
  // In the same hash space as the words: "b4:" and the four raw bytes, through HashToken.
  const TokenBag bag = Tokenizer(WithNgrams(4)).Tokenize("abcdef");
  for (const char* hashed : {"b4:abcd", "b4:bcde", "b4:cdef", "abcdef"}) {
    EXPECT_TRUE(std::ranges::any_of(bag.entries, [&](const BagEntry& entry) {
      return entry.hash == HashToken(hashed);
    })) << hashed;
  }
  EXPECT_EQ(bag.entries.size(), 4u);
  EXPECT_EQ(HashByteNgram("abcd"), HashToken("b4:abcd"));
  EXPECT_EQ(HashByteNgram("abc"), HashToken("b3:abc"));
}

TEST(ByteNgramsTest, LinesOfBase64GiveNone) {
  // 40 bytes of the base64 alphabet: a base64 line; 39 are not, nor is a line with a space.
  const std::string b64(40, 'Q');
  const std::string message = "ab\n" + b64 + "\r\ncd\n" + b64 + "==\nef";
  const auto grams = NgramsOf(message, WithNgrams(3));
  EXPECT_FALSE(grams.contains(R"(b3:"QQQ")")) << "inside a base64 line";
  EXPECT_FALSE(grams.contains(R"(b3:"b\x0aQ")")) << "no n-gram spans a base64 line";
  EXPECT_FALSE(grams.contains(R"(b3:"\x0acd")")) << "no n-gram spans a base64 line";
  EXPECT_THAT(grams, ElementsAre(Pair(R"(b3:"ab\x0a")", 1), Pair(R"(b3:"cd\x0a")", 1)))
      << "'ef' is shorter than n";
  // Not base64 lines: too short, a space inside, three '='.
  for (const std::string& other :
       {std::string(39, 'Q'), std::string(20, 'Q') + " " + std::string(20, 'Q'), b64 + "==="}) {
    SCOPED_TRACE(other);
    EXPECT_TRUE(NgramsOf("x\n" + other + "\ny", WithNgrams(3)).contains(R"(b3:"QQQ")"));
  }
  EXPECT_FALSE(NgramsOf("x\n" + b64, WithNgrams(3)).contains(R"(b3:"QQQ")"))
      << "a last line without its break is a line too";
}

TEST(ByteNgramsTest, RepeatedNgramsCountOnceUnderBooleanCounts) {
  // Six windows: "aba" at 0, 2 and 4, "bab" at 1, 3 and 5.
  TokenizerOptions options = WithNgrams(3);
  EXPECT_THAT(NgramsOf("abababab", options),
              ElementsAre(Pair(R"(b3:"aba")", 1), Pair(R"(b3:"bab")", 1)));
  options.boolean_counts = false;
  EXPECT_THAT(NgramsOf("abababab", options),
              ElementsAre(Pair(R"(b3:"aba")", 3), Pair(R"(b3:"bab")", 3)));
}

TEST(ByteNgramsTest, OnlyTheHeadGivesNgrams) {
  TokenizerOptions options = WithNgrams(4);
  options.byte_ngram_head = 6;
  EXPECT_THAT(
      NgramsOf("abcdefghij", options),
      ElementsAre(Pair(R"(b4:"abcd")", 1), Pair(R"(b4:"bcde")", 1), Pair(R"(b4:"cdef")", 1)));
  options.byte_ngram_head = 3;  // Shorter than n: none.
  EXPECT_THAT(NgramsOf("abcdefghij", options), IsEmpty());
  // The head is what is left of max_message_bytes.
  options.byte_ngram_head = 2500;
  options.max_message_bytes = 5;
  EXPECT_THAT(NgramsOf("abcdefghij", options),
              ElementsAre(Pair(R"(b4:"abcd")", 1), Pair(R"(b4:"bcde")", 1)));
}

TEST(ByteNgramsTest, OffGivesNone) {
  const std::string message = "Subject: cheap pills\n\nBuy now, buy cheap.\n";
  EXPECT_THAT(NgramsOf(message, {}), IsEmpty()) << "off by default";
  for (const std::size_t n : {0, 1, 2, 9, 100}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(ByteNgramSize(WithNgrams(n)), 0u);
    EXPECT_EQ(Tokenizer(WithNgrams(n)).Tokenize(message).entries,
              Tokenizer({}).Tokenize(message).entries);
  }
  const std::string distinct = "0123456789abcdefghij";  // No window twice.
  for (std::size_t n = kMinByteNgram; n <= kMaxByteNgram; ++n) {
    EXPECT_EQ(ByteNgramSize(WithNgrams(n)), n);
    EXPECT_EQ(NgramsOf(distinct, WithNgrams(n)).size(), distinct.size() - n + 1) << n;
  }
}

TEST(ByteNgramsTest, WordsAreUnchangedWhenOn) {
  const std::string mail =
      "From: Ann <ann@example.com>\nSubject: cheap pills\nContent-Type: text/html\n\n"
      "<p>Buy <b>now</b> at http://pills.example.net/x, buy cheap.</p>\n";
  EXPECT_EQ(WordsOf(mail, WithNgrams(4)), WordsOf(mail, {}));
  EXPECT_EQ(WordsOf("plain text, no headers", WithNgrams(4)),
            WordsOf("plain text, no headers", {}));
  // Outside the max_tokens budget: the same words are kept, and every n-gram.
  TokenizerOptions small = WithNgrams(4);
  small.max_tokens = 3;
  TokenizerOptions small_off = small;
  small_off.byte_ngrams = 0;
  EXPECT_EQ(WordsOf(mail, small), WordsOf(mail, small_off));
  EXPECT_EQ(WordsOf(mail, small).size(), 3u);
  EXPECT_EQ(NgramsOf(mail, small), NgramsOf(mail, WithNgrams(4)));
  // keep_text changes no entry.
  const Tokenizer tokenizer(WithNgrams(4));
  EXPECT_EQ(tokenizer.Tokenize(mail, /*keep_text=*/true).entries, tokenizer.Tokenize(mail).entries);
}

TEST(ByteNgramsTest, RawBytesHeadersIncludedBeforeDecoding) {
  const std::string mail =
      "Subject: =?utf-8?B?aGk=?=\nContent-Transfer-Encoding: base64\n\nSGVsbG8gd29ybGQ=\n";
  const auto ngrams = NgramsOf(mail, WithNgrams(4));
  EXPECT_TRUE(ngrams.contains(R"(b4:"Subj")"));
  EXPECT_TRUE(ngrams.contains(R"(b4:"?B?a")"));
  EXPECT_TRUE(ngrams.contains(R"(b4:"SGVs")"));
  EXPECT_TRUE(ngrams.contains(R"(b4:"\x0a\x0aSG")"));
  EXPECT_FALSE(ngrams.contains(R"(b4:"Hell")")) << "the decoded body gives none";
  // An mbox "From " line is skipped first, as for the words.
  EXPECT_EQ(NgramsOf("From ann@example.com Mon Jan  1 00:00:00 2024\n" + mail, WithNgrams(4)),
            ngrams);
}

TEST(ByteNgramsTest, ReadableTexts) {
  char out[kMaxByteNgramText];
  EXPECT_EQ(ByteNgramText("Vi\xe0g", out), R"(b4:"Vi\xe0g")");
  EXPECT_EQ(ByteNgramText("a \"\\", out), R"(b4:"a \"\\")");
  EXPECT_EQ(ByteNgramText(std::string_view("\0\x7f\xff", 3), out), R"(b3:"\x00\x7f\xff")");
  EXPECT_EQ(ByteNgramText("\x80\x81\x82\x83\x84\x85\x86\x87", out).size(), kMaxByteNgramText);
  // Every byte, in every position, reads back to the bytes hashed.
  for (int byte = 0; byte < 256; ++byte) {
    for (std::size_t at = 0; at < 3; ++at) {
      std::string bytes = "xyz";
      bytes[at] = static_cast<char>(byte);
      const std::string_view text = ByteNgramText(bytes, out);
      EXPECT_TRUE(std::ranges::all_of(text, [](char ch) { return ch >= ' ' && ch <= '~'; }));
      EXPECT_EQ(ByteNgramHashedText(text), "b3:" + bytes) << text;
    }
  }
  for (const char* not_one : {"", "b4:", R"(b4:"")", R"(b4:"abc")", R"(b4:"abcde")", R"(b2:"ab")",
                              R"(b9:"abcdefghi")", R"(b4:"ab\q")", R"(b4:"ab\x4")", R"(b4:"ab"c")",
                              R"(b4:"abc\x4g")", "b4:abcd", R"(x4:"abcd")"}) {
    EXPECT_EQ(ByteNgramHashedText(not_one), std::nullopt) << not_one;
  }
}

TEST(ByteNgramsTest, NoOtherTokenLooksLikeOne) {
  // A word never holds ':' after a digit, so no word is "b4:" and bytes.
  // Fullwidth "ｂ４：" is "b4:" once normalised, and goes through ICU.
  for (const WordPath path : {WordPath::kAsciiFast, WordPath::kIcuOnly}) {
    TokenizerOptions options;
    options.word_path = path;
    const auto tokens = TokensOf(
        "see b4:abcd b4:\"abcd\" xb4:abcd B4:ABCD b4 : abcd \uff42\uff14\uff1aabcd", options);
    for (const auto& [text, count] : tokens.counts) EXPECT_FALSE(text.starts_with("b4:")) << text;
    EXPECT_TRUE(tokens.Has("b4"));
    EXPECT_TRUE(tokens.Has("abcd"));
    EXPECT_TRUE(tokens.Has("xb4"));
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
