// Differential test: WordPath::kAsciiFast must give exactly the tokens of WordPath::kIcuOnly
// (hashes, counts and texts, token for token) on tricky ASCII, non-ASCII, mixed and invalid
// text, on mail fixtures, and on random input. bench/tokenizer_paths_check does the same on the
// whole corpus and tokenizer/fuzz/ keeps looking.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/ascii_words.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::tokenizer {
namespace {

TokenizerOptions WithPath(TokenizerOptions options, WordPath path) {
  options.word_path = path;
  return options;
}

// Expects both paths to give identical bags for `message`, with and without texts.
void ExpectSamePaths(std::string_view message, const TokenizerOptions& options = {}) {
  const Tokenizer fast(WithPath(options, WordPath::kAsciiFast));
  const Tokenizer icu(WithPath(options, WordPath::kIcuOnly));
  for (const bool keep_text : {true, false}) {
    const TokenBag fast_bag = fast.Tokenize(message, keep_text);
    const TokenBag icu_bag = icu.Tokenize(message, keep_text);
    ASSERT_EQ(fast_bag.entries.size(), icu_bag.entries.size())
        << "keep_text=" << keep_text << " message: " << message.substr(0, 200);
    for (std::size_t i = 0; i < icu_bag.entries.size(); ++i) {
      ASSERT_EQ(fast_bag.entries[i], icu_bag.entries[i])
          << "entry " << i
          << (i < icu_bag.texts.size() ? " (" + std::string(icu_bag.texts[i].text) + ")" : "")
          << " message: " << message.substr(0, 200);
    }
    ASSERT_EQ(fast_bag.texts, icu_bag.texts) << "message: " << message.substr(0, 200);
  }
}

// Option sets that change which words are kept or how many: both paths must agree under each.
std::vector<TokenizerOptions> OptionVariants() {
  std::vector<TokenizerOptions> variants(6);
  variants[1].boolean_counts = false;
  variants[2].word_bigrams = true;
  variants[2].boolean_counts = false;
  variants[3].min_token_chars = 3;
  variants[3].max_token_chars = 5;
  variants[4].max_tokens = 7;
  variants[4].word_bigrams = true;
  variants[5].min_token_chars = 0;
  variants[5].max_token_chars = 1;
  return variants;
}

void ExpectSamePathsAllOptions(std::string_view message) {
  for (const TokenizerOptions& options : OptionVariants()) ExpectSamePaths(message, options);
}

TEST(WordPathsTest, DefaultIsTheAsciiFastPath) {
  EXPECT_EQ(TokenizerOptions{}.word_path, WordPath::kAsciiFast);
}

TEST(AsciiWordsTest, FindsWordsAsIcuDefinesThem) {
  std::vector<std::string> words;
  ForEachAsciiWord("Can't 3.14 1,000 a@B.com x_y a:b __ @ e.g. 1.a a. _5 1;2 a,b", [&](auto w) {
    words.emplace_back(w);
    return true;
  });
  EXPECT_EQ(words, (std::vector<std::string>{"Can't", "3.14", "1,000", "a@B.com", "x_y", "a", "b",
                                             "e.g", "1", "a", "a", "_5", "1;2", "a", "b"}));
}

TEST(AsciiWordsTest, StopsWhenAsked) {
  int calls = 0;
  ForEachAsciiWord("one two three", [&](auto) { return ++calls < 2; });
  EXPECT_EQ(calls, 2);
}

// The 64-byte version against the byte-by-byte definition: random texts of the characters
// whose classes differ, of every length around the blocks' edges, with the words' positions
// compared too; and stopping early in every position.
TEST(AsciiWordsTest, SixtyFourBytesAtATimeFindWhatByteByByteFinds) {
  const std::string_view alphabet = "aZ@09_.',;: -\t\n\x7f\x01x";
  std::mt19937 random(63);
  std::size_t words_seen = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const std::size_t length = random() % 260;
    for (std::size_t i = 0; i < length; ++i) {
      // Runs of one kind now and then, so words and joins cross the blocks' edges.
      const char c = alphabet[random() % alphabet.size()];
      text.append(random() % 4 == 0 ? 1 + random() % 8 : 1, c);
    }
    std::vector<std::string_view> fast;
    std::vector<std::string_view> reference;
    ForEachAsciiWord(text, [&](std::string_view w) {
      fast.push_back(w);
      return true;
    });
    ascii_words_internal::ForEachAsciiWordByByte(text, [&](std::string_view w) {
      reference.push_back(w);
      return true;
    });
    ASSERT_EQ(fast.size(), reference.size()) << text;
    for (std::size_t i = 0; i < fast.size(); ++i) {
      ASSERT_EQ(fast[i].data(), reference[i].data()) << text;
      ASSERT_EQ(fast[i].size(), reference[i].size()) << text;
    }
    words_seen += fast.size();
    if (!fast.empty()) {
      const std::size_t stop = random() % fast.size();
      std::size_t calls = 0;
      ForEachAsciiWord(text, [&](std::string_view) { return calls++ < stop; });
      ASSERT_EQ(calls, stop + 1) << text;
    }
  }
  EXPECT_GT(words_seen, 100000u);
}

TEST(WordPathsTest, TrickyAsciiCases) {
  const std::vector<std::string> cases = {
      "",
      "a",
      "A",
      "Hello, World!",
      "can't won't 'quoted' it's rock'n'roll ''a'' a'' ''",
      "3.14 1,000 1,000.50 1.2.3.4 1;2;3 1:2 12:30 1'000 .5 5. ,5 5, ;5",
      "e.g. i.e. U.S.A. a.b.c a..b a.-b a._b _.a a._ 1.a a.1 1a.2 a1.b",
      "snake_case __init__ _ __ ___ _a a_ 1_ _1 a_1 1_a _._ _'_ a_.b 1_,2",
      "foo@bar.com @ @@ a@ @a 1@ @1 @.@ 1.@ @_ _@ a.@ @'b 1@.2 @,1 @:a",
      "http://www.example.com:8080/path/to?q=1&r=two#frag mailto:x@y.z ftp://a.b/c",
      "a-b a--b -a- a/b a\\b a|b a+b a=b a#b a%b a^b a&b a*b a~b `a` a\"b \"a\" a!b a?b a<b>",
      "digits123 123digits a1b2c3 3rd 1st-2nd 2024-12-31 10:30:00 +1-555-0100 0x1F 1e10 1E-5",
      "tabs\tand\nnew\r\nlines\rcr\fform\vvertical  double  spaces   triple",
      std::string("nul\0byte and \x01\x02\x1f\x7f controls a\x1b[31mred", 33),
      "ALLCAPS MiXeD CaSe camelCase PascalCase lowerUPPER",
      "trailing.",
      "trailing'",
      "trailing,",
      "trailing;",
      ".leading",
      "'leading",
      ",1",
      "1,",
      "a",
      "ab",
      "1",
      "_",
      ".",
      "'",
      "@",
      "a.",
      "1.",
      "a'",
      "1'",
      "1,",
      "a,b",
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    ExpectSamePathsAllOptions(text);
  }
}

TEST(WordPathsTest, WordsAroundTheLengthBounds) {
  for (const std::size_t length : {1, 2, 3, 5, 6, 39, 40, 41, 42, 100}) {
    const std::string word(length, 'x');
    const std::string number(length, '7');
    std::string dotted;
    for (std::size_t i = 0; i < length; ++i) dotted += i % 2 == 0 ? 'a' : '.';
    const std::string text = word + " " + number + " " + dotted + " " + word + "_" + number;
    SCOPED_TRACE(length);
    ExpectSamePathsAllOptions(text);
    TokenizerOptions bounds;
    bounds.min_token_chars = length;
    bounds.max_token_chars = length;
    ExpectSamePaths(text, bounds);
  }
}

TEST(WordPathsTest, NonAsciiAndMixedScripts) {
  const std::vector<std::string> cases = {
      "café naïve façade Straße ǅemal ΑΘΗΝΑ Ὀδυσσεύς",
      "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３ ﬁne ﬂow Kelvin K Å ½ ² ™ ①",
      "日本語のテキストです。東京都で買いました。カタカナ ひらがな",
      "中文文本：我们今天去北京。Chinese and English mixed 中文English混合",
      "ภาษาไทยเป็นภาษาที่สวยงาม Thai and ascii ภาษาไทย123",
      "한국어 텍스트 Korean 한국어abc",
      "Привет, мир! Hello мир 123абв",
      "مرحبا بالعالم hello עברית שלום a״b ״",
      "emoji 😀 👍🏽 👨‍👩‍👧 🇫🇷 #️⃣ 1️⃣ ©️ ascii",
      "combining: e\xCC\x81 a\xCC\x88 \xCC\x81 lone \xCC\x81start x \xCC\x81y",
      "soft\xC2\xADhyphen zero\xE2\x80\x8Bwidth join\xE2\x80\x8D"
      "er nbsp\xC2\xA0space 1\xC2\xA0"
      "000",
      "quotes \xE2\x80\x9Csmart\xE2\x80\x9D it\xE2\x80\x99s \xE2\x80\x98"
      "a\xE2\x80\x99 1\xE2\x80\x99"
      "000",
      "dots \xE2\x80\xA4 a\xE2\x80\xA4"
      "b \xEF\xBC\x8E a\xEF\xBC\x8E"
      "b a\xEF\xBC\x9A"
      "b a\xC2\xB7"
      "b",
      "a\xE2\x80\xA8"
      "b a\xC2\x85"
      "b a\xE3\x80\x80"
      "b",
      "invalid \xC3 \xFF \xFE \x80 \xC0\xAF \xED\xA0\x80 \xF4\x90\x80\x80 end\xC3",
      "ascii\xC3(invalid) \xE9t\xE9 caf\xE9 x\x80y",
      "\xEF\xBF\xBD replacement \xEF\xBB\xBF bom",
  };
  for (const std::string& text : cases) {
    SCOPED_TRACE(text);
    ExpectSamePathsAllOptions(text);
    // The same text after and before long ASCII runs, so that it sits inside an ICU run with
    // fast runs around it.
    const std::string ascii(300, 'w');
    ExpectSamePaths(ascii + " filler words here " + text + " more ascii " + ascii);
    ExpectSamePaths(text + "\n" + text + " " + ascii + " " + text);
  }
}

TEST(WordPathsTest, ChunkBoundariesAt64KiB) {
  // Words, numbers and non-ASCII text lying across the 64 KiB and 32 KiB chunk cuts.
  const std::string sentence = "The quick brown fox can't jump 3.14 fences, 1,000 times_over. ";
  std::string long_text;
  while (long_text.size() < 200 * 1024) long_text += sentence;
  ExpectSamePaths(long_text);
  for (const std::size_t offset : {64 * 1024 - 3, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1}) {
    std::string text = long_text;
    text.insert(offset, "é中文テスト");
    SCOPED_TRACE(offset);
    ExpectSamePaths(text);
  }
  // No whitespace at all: cut at a code point boundary, which both paths share.
  const std::string no_space(100 * 1024, 'a');
  ExpectSamePaths(no_space);
  std::string dotted;
  while (dotted.size() < 100 * 1024) dotted += "ab.cd'ef_12,34;";
  ExpectSamePaths(dotted);
  std::string mixed_no_space;
  while (mixed_no_space.size() < 100 * 1024) mixed_no_space += "abcdef中文";
  ExpectSamePaths(mixed_no_space);
  std::string cjk_then_ascii(40 * 1024, 'x');
  for (int i = 0; i < 3000; ++i) cjk_then_ascii += "日本";
  ExpectSamePaths(cjk_then_ascii + " tail words");
}

TEST(WordPathsTest, AllShortAsciiStrings) {
  // Every string of up to two ASCII characters, and of up to four characters over one
  // representative of each word break class, in batches (lines are independent: a line break
  // followed by ASCII is a safe cut, and each batch is also checked as a whole).
  std::vector<std::string> strings;
  for (int a = 0; a < 128; ++a) {
    strings.emplace_back(1, static_cast<char>(a));
    for (int b = 0; b < 128; ++b) strings.push_back({static_cast<char>(a), static_cast<char>(b)});
  }
  const std::string alphabet = "aZ7_.',;:@\" \n\r\t-";
  std::vector<std::size_t> index;
  for (std::size_t length = 3; length <= 4; ++length) {
    index.assign(length, 0);
    while (true) {
      std::string text;
      for (const std::size_t i : index) text += alphabet[i];
      strings.push_back(text);
      std::size_t position = length;
      while (position > 0 && ++index[position - 1] == alphabet.size()) index[--position] = 0;
      if (position == 0) break;
    }
  }
  std::string batch;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    batch += strings[i];
    batch += '\n';
    if (batch.size() > 4000 || i + 1 == strings.size()) {
      TokenizerOptions options;
      options.boolean_counts = false;
      options.max_tokens = 1'000'000;
      ExpectSamePaths(batch, options);
      batch.clear();
    }
  }
}

// Random text from pieces that matter to the word rules, ASCII and not.
std::string RandomText(std::mt19937& random) {
  static const std::vector<std::string> pieces = {"a",
                                                  "Z",
                                                  "q",
                                                  "7",
                                                  "0",
                                                  "_",
                                                  ".",
                                                  "'",
                                                  ",",
                                                  ";",
                                                  ":",
                                                  "@",
                                                  "\"",
                                                  "-",
                                                  "/",
                                                  " ",
                                                  "  ",
                                                  "\n",
                                                  "\r\n",
                                                  "\t",
                                                  "\x01",
                                                  "\x7f",
                                                  std::string(1, '\0'),
                                                  "word",
                                                  "CAPS",
                                                  "3.14",
                                                  "é",
                                                  "\xCC\x81",
                                                  "中",
                                                  "文",
                                                  "テ",
                                                  "ト",
                                                  "の",
                                                  "ไทย",
                                                  "한",
                                                  "😀",
                                                  "\xE2\x80\x8D",
                                                  "\xC2\xAD",
                                                  "\xE2\x80\x99",
                                                  "\xEF\xBC\xA1",
                                                  "\xEF\xAC\x81",
                                                  "\xC3",
                                                  "\xFF",
                                                  "\x80",
                                                  "\xEF\xBF\xBD",
                                                  "K",
                                                  "\xC2\xA0",
                                                  "\xE3\x80\x80",
                                                  "α",
                                                  "я",
                                                  "ש",
                                                  "״"};
  std::uniform_int_distribution<std::size_t> length(0, 60);
  // Mostly ASCII pieces, as in mail; the non-ASCII ones start at index 26.
  std::uniform_int_distribution<std::size_t> ascii_piece(0, 25);
  std::uniform_int_distribution<std::size_t> any_piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> percent(0, 99);
  const int non_ascii_percent = percent(random) < 30 ? 0 : percent(random) / 4;
  std::string text;
  for (std::size_t n = length(random); n > 0; --n) {
    text += percent(random) < non_ascii_percent ? pieces[any_piece(random)]
                                                : pieces[ascii_piece(random)];
  }
  return text;
}

TEST(WordPathsTest, RandomInputWithAFixedSeed) {
  std::mt19937 random(20241122);
  const std::vector<TokenizerOptions> variants = OptionVariants();
  for (int round = 0; round < 2000; ++round) {
    std::string text = RandomText(random);
    ExpectSamePaths(text, variants[static_cast<std::size_t>(round) % variants.size()]);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Longer texts, so that ASCII runs long enough for the fast path alternate with ICU runs.
  for (int round = 0; round < 100; ++round) {
    std::string text;
    while (text.size() < 3000) text += RandomText(random) + (round % 2 == 0 ? " " : "\n");
    ExpectSamePaths(text, variants[static_cast<std::size_t>(round) % variants.size()]);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(WordPathsTest, MailFixtures) {
  const std::filesystem::path folder = NBSPAMD_TOKENIZER_TESTDATA;
  std::size_t fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".eml") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string message((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    ASSERT_FALSE(message.empty()) << entry.path();
    SCOPED_TRACE(entry.path().string());
    ExpectSamePathsAllOptions(message);
    ++fixtures;
  }
  EXPECT_GE(fixtures, 6u);
}

// The HTML paths through the whole tokenizer: HTML parts read from libxml2's SAX events give the
// bag the walk of its tree gives (tokenizer/html_text_test.cc holds the cases of HTML itself).
TEST(HtmlPathsTest, DefaultIsTheEventPathAndItGivesTheTreesBags) {
  EXPECT_EQ(TokenizerOptions{}.html_path, HtmlPath::kEvents);
  std::vector<std::string> messages;
  for (const auto& entry : std::filesystem::directory_iterator(NBSPAMD_TOKENIZER_TESTDATA)) {
    if (entry.path().extension() != ".eml") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    messages.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  messages.push_back(
      "Subject: offer\nContent-Type: text/html\n\n<html><a:style>hidden</a:style><p>Buy "
      "<b>now</b></p><img src=\"http://img.example.com/x.png\" alt=\"big sale\"><a "
      "href=\"http://shop.example.net/\">shop</a></html>after<p>more</p>");
  std::size_t with_html = 0;
  for (const std::string& message : messages) {
    if (message.find("text/html") != std::string::npos) ++with_html;
    for (TokenizerOptions options : OptionVariants()) {
      options.html_path = HtmlPath::kEvents;
      const TokenBag events = Tokenizer(options).Tokenize(message, true);
      options.html_path = HtmlPath::kTree;
      const TokenBag tree = Tokenizer(options).Tokenize(message, true);
      ASSERT_EQ(events.entries, tree.entries) << message.substr(0, 200);
      ASSERT_EQ(events.texts, tree.texts) << message.substr(0, 200);
    }
  }
  EXPECT_GE(with_html, 2u);
}

}  // namespace
}  // namespace nbspamd::tokenizer
