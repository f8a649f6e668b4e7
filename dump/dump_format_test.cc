#include "dump/dump_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace nbspamd::dump {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Records what a dump's reader visits.
class Recorder final : public storage::ModelVisitor {
 public:
  std::expected<void, Error> BeginLayer(std::string_view user,
                                        const model::ModelStats& stats) override {
    events.push_back("layer " + std::string(user) + " docs " +
                     std::to_string(stats.classes[0].documents) + " |V| " +
                     std::to_string(stats.vocabulary_size));
    return {};
  }
  std::expected<void, Error> Token(TokenHash hash, std::span<const std::uint64_t> counts) override {
    std::string event = "t " + std::to_string(hash);
    for (auto count : counts) event += " " + std::to_string(count);
    events.push_back(event);
    return {};
  }
  std::expected<void, Error> EndLayer() override {
    events.push_back("end");
    return {};
  }
  std::vector<std::string> events;
};

std::expected<DumpProgress, Error> Read(const std::string& text, Recorder& recorder) {
  std::FILE* in = ::fmemopen(const_cast<char*>(text.data()), text.size(), "r");
  ReadDumpOptions options;
  options.tokenizer = TokenizerFingerprint({});
  auto read = ReadDump(in, options, recorder);
  std::fclose(in);
  return read;
}

std::string Header() {
  return "nbspamd-dump 1\nschema 4\nalpha 0.1\ntokenizer " + TokenizerFingerprint({}) +
         "\nclasses spam ham\n";
}

TEST(DumpFormatTest, ReadsWhatTheFormatSays) {
  Recorder recorder;
  const std::string text = Header() +
                           "layer global\ndocuments 2 1\ntokens 3 1\nvocabulary 2\n"
                           "t 0000000000000001 2\nt 00000000000000ff 1 1\nend-layer\n"
                           "layer user a%20b\ndocuments 0 0\ntokens 0 0\nvocabulary 0\n"
                           "end-layer\nend 2 2\n";
  auto read = Read(text, recorder);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(read->tokens, 2u);
  EXPECT_THAT(recorder.events, ::testing::ElementsAre("layer  docs 2 |V| 2", "t 1 2", "t 255 1 1",
                                                      "end", "layer a b docs 0 |V| 0", "end"));
}

TEST(DumpFormatTest, AMalformedLineIsNamedByItsNumber) {
  Recorder recorder;
  auto read = Read(Header() + "layer global\ndocuments 2\n", recorder);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(read.error().message, HasSubstr("dump line 7"));

  auto hash =
      Read(Header() + "layer global\ndocuments 0 0\ntokens 0 0\nvocabulary 1\nt 12 1\n", recorder);
  ASSERT_FALSE(hash.has_value());
  EXPECT_THAT(hash.error().message, HasSubstr("16 hexadecimal digits"));
}

TEST(DumpFormatTest, AUserIdTheDaemonWouldRefuseIsRefused) {
  Recorder recorder;
  auto read = Read(Header() +
                       "layer global\ndocuments 0 0\ntokens 0 0\nvocabulary 0\nend-layer\n"
                       "layer user a%00b\n",
                   recorder);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(read.error().message, HasSubstr("0 byte"));
}

TEST(DumpFormatTest, OtherTextIsNotADump) {
  Recorder recorder;
  auto read = Read("From: someone\n\nhello\n", recorder);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(read.error().message, HasSubstr("not an nbspamd dump"));
  auto future = Read("nbspamd-dump 2\n", recorder);
  ASSERT_FALSE(future.has_value());
  EXPECT_THAT(future.error().message, HasSubstr("version 2"));
}

TEST(DumpFormatTest, ADumpWithoutItsEndIsTruncated) {
  Recorder recorder;
  auto read = Read(Header() + "layer global\ndocuments 0 0\ntokens 0 0\nvocabulary 0\nend-layer\n",
                   recorder);
  ASSERT_FALSE(read.has_value());
  EXPECT_EQ(read.error().code, ErrorCode::kDataLoss);
  auto wrong = Read(Header() +
                        "layer global\ndocuments 0 0\ntokens 0 0\nvocabulary 0\n"
                        "end-layer\nend 1 5\n",
                    recorder);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, ErrorCode::kDataLoss);
}

TEST(DumpFormatTest, TheFingerprintNamesByteNgramsOnlyWhenOn) {
  // As docs/STORAGE.md shows it: unchanged for models without byte n-grams.
  const std::string without =
      "hash=xxh3-64 min_token_chars=1 max_token_chars=40 boolean_counts=1 header_tokens=1 "
      "word_bigrams=0 sparse_bigram_window=0 word_char_ngrams=0";
  EXPECT_EQ(TokenizerFingerprint({}), without);
  tokenizer::TokenizerOptions options;
  options.byte_ngram_head = 1000;
  EXPECT_EQ(TokenizerFingerprint(options), without) << "the head means nothing while off";
  options.byte_ngrams = 9;  // Off, as the tokenizer reads it.
  EXPECT_EQ(TokenizerFingerprint(options), without);
  options.byte_ngrams = 4;
  EXPECT_EQ(TokenizerFingerprint(options),
            without + " byte_ngrams=4 byte_ngram_head=1000 byte_ngram_lines=no-base64");
}

TEST(DumpFormatTest, TheFingerprintNamesTheLookalikeFoldOnlyWhenOn) {
  tokenizer::TokenizerOptions options;
  const std::string without = TokenizerFingerprint(options);
  EXPECT_THAT(without, Not(HasSubstr("fold_lookalikes")));
  options.fold_lookalikes = true;
  EXPECT_EQ(TokenizerFingerprint(options), without + " fold_lookalikes=1");
}

// A model that made no character n-grams restores into one that makes them (its words hash the
// same; the n-grams are learned from then on), not the other way round, and no other difference
// passes.
TEST(DumpFormatTest, AModelWithoutCharacterNgramsRestoresIntoOneWithThem) {
  const auto read_as = [](const tokenizer::TokenizerOptions& dumped,
                          const tokenizer::TokenizerOptions& own) {
    const std::string text = "nbspamd-dump 1\nschema 4\nalpha 0.1\ntokenizer " +
                             TokenizerFingerprint(dumped) +
                             "\nclasses spam ham\nlayer global\ndocuments 1 1\ntokens 1 1\n"
                             "vocabulary 1\nt 0000000000000001 1 1\nend-layer\nend 1 1\n";
    Recorder recorder;
    std::FILE* in = ::fmemopen(const_cast<char*>(text.data()), text.size(), "r");
    ReadDumpOptions options;
    options.tokenizer = TokenizerFingerprint(own);
    auto read = ReadDump(in, options, recorder);
    std::fclose(in);
    return read;
  };
  tokenizer::TokenizerOptions words;
  tokenizer::TokenizerOptions grams;
  grams.word_char_ngrams = 4;
  EXPECT_TRUE(read_as(words, grams).has_value());
  EXPECT_TRUE(read_as(grams, grams).has_value());
  const auto back = read_as(grams, words);
  ASSERT_FALSE(back.has_value());
  EXPECT_EQ(back.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(back.error().message, HasSubstr("word_char_ngrams is 4 in the dump and 0 here"));
  tokenizer::TokenizerOptions three = grams;
  three.word_char_ngrams = 3;
  EXPECT_FALSE(read_as(three, grams).has_value());
  tokenizer::TokenizerOptions other = words;
  other.word_bigrams = true;
  EXPECT_FALSE(read_as(other, grams).has_value()) << "only the n-grams may differ";
}

}  // namespace
}  // namespace nbspamd::dump
