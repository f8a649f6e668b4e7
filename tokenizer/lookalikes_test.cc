#include "tokenizer/lookalikes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The word `text` becomes, and whether it was folded.
std::pair<std::string, bool> Fold(std::string text) {
  const bool folded = FoldLookalikes(text, 0);
  return {text, folded};
}

TEST(LookalikesTest, AccentedLettersFoldToTheirBase) {
  EXPECT_THAT(Fold("b\xc3\xac"
                   "tc\xc3\xb2\xc3\xac"
                   "n"),
              Pair(std::string("bitcoin"), true));                         // bìtcòìn
  EXPECT_THAT(Fold("caf\xc3\xa9"), Pair(std::string("cafe"), true));       // café
  EXPECT_THAT(Fold("na\xc3\xafve"), Pair(std::string("naive"), true));     // naïve
  EXPECT_THAT(Fold("\xc3\xa9t\xc3\xa9"), Pair(std::string("ete"), true));  // été
}

TEST(LookalikesTest, OtherScriptsLookAlikesFoldInAMixedWord) {
  // Cyrillic а (U+0430) and о (U+043E), Greek ο (U+03BF), Cyrillic і (U+0456), Latin ƒ (U+0192).
  EXPECT_THAT(Fold("p\xd0\xb0yp\xd0\xb0l"), Pair(std::string("paypal"), true));
  EXPECT_THAT(Fold("m\xd0\xbe"
                   "ney"),
              Pair(std::string("money"), true));
  EXPECT_THAT(Fold("pr\xce\xbf"
                   "duct"),
              Pair(std::string("product"), true));
  EXPECT_THAT(Fold("b\xd1\x96tcoin"), Pair(std::string("bitcoin"), true));
  EXPECT_THAT(Fold("\xc6\x92ree"), Pair(std::string("free"), true));
}

TEST(LookalikesTest, CombiningMarksAreDropped) {
  // "a" + U+0360 (combining double tilde: no precomposed form) + "b".
  EXPECT_THAT(Fold("a\xcd\xa0"
                   "b"),
              Pair(std::string("ab"), true));
}

TEST(LookalikesTest, WordsOfOtherScriptsKeepTheirOwnToken) {
  // Russian "море" is all Cyrillic: no ASCII letter, not a disguise.
  EXPECT_THAT(Fold("\xd0\xbc\xd0\xbe\xd1\x80\xd0\xb5"),
              Pair(std::string("\xd0\xbc\xd0\xbe\xd1\x80\xd0\xb5"), false));
  // A character that imitates nothing (Cyrillic ж, U+0436) keeps the whole word.
  EXPECT_THAT(Fold("p\xd0\xb0\xd0\xb6"), Pair(std::string("p\xd0\xb0\xd0\xb6"), false));
  // CJK and pure ASCII are left alone.
  EXPECT_THAT(Fold("\xe4\xb8\xad"
                   "abc"),
              Pair(std::string("\xe4\xb8\xad"
                               "abc"),
                   false));
  EXPECT_THAT(Fold("plain"), Pair(std::string("plain"), false));
  EXPECT_THAT(Fold("123"), Pair(std::string("123"), false));
}

TEST(LookalikesTest, OnlyTheWordAfterThePrefixIsFolded) {
  std::string token = "subject:p\xd0\xb0yp\xd0\xb0l";
  EXPECT_TRUE(FoldLookalikes(token, 8));
  EXPECT_EQ(token, "subject:paypal");
  std::string bad = "x\xff\xd0\xb0";  // Not well-formed: left as it is.
  EXPECT_FALSE(FoldLookalikes(bad, 0));
  EXPECT_EQ(bad, "x\xff\xd0\xb0");
}

TEST(LookalikesTest, TheTokenizerFoldsOnlyWhenAsked) {
  const std::string message =
      "Subject: your p\xd0\xb0yp\xd0\xb0l account\n\nSend b\xc3\xac"
      "tc\xc3\xb2\xc3\xac"
      "n "
      "to the wall\xd0\xb5t\n";
  TokenizerOptions options;
  const auto plain = test_util::TokensOf(message, options);
  EXPECT_FALSE(plain.Has("bitcoin"));
  EXPECT_FALSE(plain.Has("subject:paypal"));
  options.fold_lookalikes = true;
  const auto folded = test_util::TokensOf(message, options);
  EXPECT_TRUE(folded.Has("bitcoin"));
  EXPECT_TRUE(folded.Has("wallet"));
  EXPECT_TRUE(folded.Has("subject:paypal"));
  EXPECT_FALSE(folded.AnyContains("\xd0\xb0"));
  // The ASCII-only path and the ICU-only path agree with the fold on.
  TokenizerOptions icu_only = options;
  icu_only.word_path = WordPath::kIcuOnly;
  EXPECT_EQ(Tokenizer(icu_only).Tokenize(message).entries,
            Tokenizer(options).Tokenize(message).entries);
}

TEST(LookalikesTest, AFoldedWordShorterThanTheMinimumIsDropped) {
  TokenizerOptions options;
  options.fold_lookalikes = true;
  options.min_token_chars = 3;
  // "ab" + U+0360: three code points before the fold, two after.
  const auto tokens = test_util::TokensOf(
      "a\xcd\xa0"
      "b word",
      options);
  EXPECT_THAT(tokens.counts, ElementsAre(Pair("word", 1)));
}

}  // namespace
}  // namespace nbspamd::tokenizer
