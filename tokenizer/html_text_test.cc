#include "tokenizer/html_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "tokenizer/html_tree_text.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using test_util::CountingOptions;
using test_util::kQuickSeconds;
using test_util::SecondsFor;
using test_util::Tokens;
using test_util::TokensOf;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// 1 to `max_pieces` of `pieces`, drawn at random.
std::string RandomMarkup(std::span<const char* const> pieces, int max_pieces,
                         std::mt19937& random) {
  std::uniform_int_distribution<std::size_t> piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(1, max_pieces);
  std::string html;
  for (int n = length(random); n > 0; --n) html += pieces[piece(random)];
  return html;
}

// The whitespace-separated words of the visible text of `html`.
std::vector<std::string> VisibleWords(std::string_view html) {
  std::istringstream text(VisibleText(html).text);
  std::vector<std::string> words;
  for (std::string word; text >> word;) words.push_back(word);
  return words;
}

TEST(HtmlTextTest, OnlyTheFirstMaxTagsTagsAreParsed) {
  std::string html;
  for (int i = 0; i < 100; ++i) html += "<p>w" + std::to_string(i) + " ";
  const HtmlContent all = VisibleText(html, {.max_tags = 100});
  EXPECT_FALSE(all.truncated);
  std::istringstream all_text(all.text);
  EXPECT_EQ(std::distance(std::istream_iterator<std::string>(all_text), {}), 100);
  // The 11th '<' and all after it are cut: w0 to w9 remain.
  const HtmlContent cut = VisibleText(html, {.max_tags = 10});
  EXPECT_TRUE(cut.truncated);
  std::istringstream cut_text(cut.text);
  std::vector<std::string> words(std::istream_iterator<std::string>(cut_text), {});
  ASSERT_EQ(words.size(), 10u);
  EXPECT_EQ(words.back(), "w9");
}

TEST(HtmlTextTest, AttributesOfOneTagBeyondTheBudgetCutTheInput) {
  std::string tag = "<p";
  for (int i = 0; i < 20; ++i) tag += " a" + std::to_string(i) + "=\"v\"";
  const std::string html = "<p>before</p>" + tag + ">after</p>";
  const HtmlContent all = VisibleText(html, {.max_tag_attributes = 20});
  EXPECT_FALSE(all.truncated);
  EXPECT_THAT(all.text, ::testing::HasSubstr("after"));
  EXPECT_EQ(CountParsedAttributes(html, {.max_tag_attributes = 20}), 20u);
  const HtmlContent cut = VisibleText(html, {.max_tag_attributes = 19});
  EXPECT_TRUE(cut.truncated);
  EXPECT_THAT(cut.text, ::testing::HasSubstr("before"));
  EXPECT_THAT(cut.text, Not(::testing::HasSubstr("after")));
  EXPECT_EQ(CountParsedAttributes(html, {.max_tag_attributes = 19}), 0u);
  // Unquoted, valueless and bogus attributes count alike.
  EXPECT_TRUE(VisibleText("<p a=1 b c=\"x\" !d e>", {.max_tag_attributes = 4}).truncated);
  EXPECT_FALSE(VisibleText("<p a=1 b c=\"x\" !d e>", {.max_tag_attributes = 5}).truncated);
}

TEST(HtmlTextTest, OneTagWithAHundredThousandAttributesIsCut) {
  // Unbounded, libxml2 takes minutes and about 500 bytes an attribute for such a tag.
  std::string html = "<p>x</p><p";
  for (int i = 0; i < 100000; ++i) html += " a" + std::to_string(i);
  html += ">";
  EXPECT_TRUE(VisibleText(html).truncated);
  EXPECT_EQ(CountParsedAttributes(html, {}), 0u);
}

TEST(HtmlTextTest, AttributesOfAllTagsShareTheBudget) {
  std::string html;
  for (int i = 0; i < 10; ++i) html += "<b x=1 y='2'>w" + std::to_string(i) + "</b> ";
  EXPECT_EQ(CountParsedAttributes(html, {}), 20u);
  // 7 attributes: the first 3 tags, then the input is cut before the 4th.
  const HtmlContent cut = VisibleText(html, {.max_attributes = 7});
  EXPECT_TRUE(cut.truncated);
  std::istringstream text(cut.text);
  EXPECT_THAT(std::vector<std::string>(std::istream_iterator<std::string>(text), {}),
              ElementsAre("w0", "w1", "w2"));
  EXPECT_EQ(CountParsedAttributes(html, {.max_attributes = 7}), 6u);
}

TEST(HtmlTextTest, ATagInsideAQuotedValueIsCountedToo) {
  // Whether libxml2 reads the second tag as markup or as the first tag's value, it is counted.
  const std::string html = "<script>x<a b='</script><p c d e f g h>'</script>";
  EXPECT_TRUE(VisibleText(html, {.max_attributes = 5}).truncated);
  EXPECT_LE(CountParsedAttributes(html, {.max_attributes = 5}), 5u);
}

TEST(HtmlTextTest, TheBudgetsHoldOnRandomMarkup) {
  // Whatever the markup, the tree libxml2 builds within the budgets has no more attributes than
  // max_attributes: the scan never counts fewer than libxml2 builds. Pieces of tags, attributes,
  // quotes and raw-text elements, mostly attribute-like so that budgets bind.
  static constexpr const char* kPieces[] = {" w",
                                            " w",
                                            " w",
                                            " w",
                                            " x=1",
                                            " y='",
                                            " z=\"",
                                            " !=\"",
                                            " .v=\"",
                                            " -=",
                                            " /",
                                            "\"",
                                            "'",
                                            "=",
                                            "<p",
                                            "<a",
                                            ">",
                                            "/>",
                                            "<",
                                            "</p>",
                                            "\n",
                                            "\t",
                                            "\xc3\xa9",
                                            "<script>",
                                            "</script>",
                                            "<style>",
                                            "</style>",
                                            "<!--",
                                            "-->",
                                            "<.x",
                                            "<_y",
                                            "<:z",
                                            "<html",
                                            "<body",
                                            "<textarea>",
                                            "</textarea>",
                                            "<?x",
                                            "<!DOCTYPE",
                                            "&amp;",
                                            "<![CDATA[",
                                            "]]>",
                                            "<br/>",
                                            "v\"w",
                                            "k='",
                                            "</",
                                            " aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                            "aaaaaaaaaaaaa=\""};
  std::mt19937 random(12345);
  for (int round = 0; round < 4000; ++round) {
    std::string html = RandomMarkup(kPieces, 300, random);
    if (round % 7 == 0) html.insert(html.size() / 2, 1, '\0');
    for (const HtmlLimits limits :
         {HtmlLimits{.max_attributes = 3}, HtmlLimits{.max_attributes = 20},
          HtmlLimits{.max_attributes = 60, .max_tag_attributes = 4}}) {
      ASSERT_LE(CountParsedAttributes(html, limits), limits.max_attributes) << html;
    }
  }
}

TEST(HtmlTextTest, TagsAreRemoved) {
  EXPECT_THAT(VisibleWords("<html><body><p class=\"x\">Hello <b>bold</b> <i>world</i></p>"
                           "</body></html>"),
              ElementsAre("Hello", "bold", "world"));
  EXPECT_THAT(VisibleWords("<font color=red size=7><u>BUY</u></font> <span style=\"x\">NOW</span>"),
              ElementsAre("BUY", "NOW"));
}

TEST(HtmlTextTest, InlineElementsDoNotSplitWords) {
  EXPECT_THAT(VisibleWords("<p><b>fr</b>ee <i>vi</i><span>ag</span><font>ra</font></p>"),
              ElementsAre("free", "viagra"));
}

// Whitespace between elements, even outside any block, keeps words apart.
TEST(HtmlTextTest, SpaceBetweenElementsSeparatesWords) {
  EXPECT_THAT(VisibleWords("<b>BUY</b> <i>NOW</i>"), ElementsAre("BUY", "NOW"));
  EXPECT_THAT(VisibleWords("<a href=\"http://a.example.com\">cheap</a>\n<a href=\"x\">pills</a>"),
              ElementsAre("cheap", "pills"));
  EXPECT_THAT(VisibleWords("<html><body><b>one</b> <i>two</i></body></html>"),
              ElementsAre("one", "two"));
  EXPECT_THAT(VisibleWords("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><html><body>"
                           "<b>one</b> <i>two</i></body></html>"),
              ElementsAre("one", "two"));
}

TEST(HtmlTextTest, BlockElementsSeparateWords) {
  EXPECT_THAT(VisibleWords("<p>one</p><p>two</p><div>three</div>four<br>five<br/>six"
                           "<table><tr><td>seven</td><td>eight</td></tr></table>"
                           "<ul><li>nine</li><li>ten</li></ul><h1>eleven</h1>twelve"),
              ElementsAre("one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                          "ten", "eleven", "twelve"));
}

TEST(HtmlTextTest, ScriptStyleAndCommentsAreDropped) {
  EXPECT_THAT(VisibleWords("<html><head><style>p { color: hidden1 }</style>"
                           "<script>var hidden2 = '<p>hidden3</p>';</script></head>"
                           "<body>shown<!-- hidden4 --> <noscript>hidden5</noscript>"
                           "<script type=\"text/javascript\">hidden6()</script>also"
                           "<!-- multi\nline hidden7 --></body></html>"),
              ElementsAre("shown", "also"));
}

TEST(HtmlTextTest, EntitiesAreDecoded) {
  EXPECT_THAT(VisibleWords("tom &amp; jerry"), ElementsAre("tom", "&", "jerry"));
  EXPECT_THAT(VisibleWords("caf&eacute; caf&#233; caf&#xE9; caf&#XE9;"),
              ElementsAre("café", "café", "café", "café"));
  EXPECT_THAT(VisibleWords("&lt;b&gt;not a tag&lt;/b&gt; &quot;q&quot; &copy;"),
              ElementsAre("<b>not", "a", "tag</b>", "\"q\"", "©"));
  EXPECT_THAT(VisibleWords("a&nbsp;b"), ElementsAre("a\u00a0b"));  // NBSP is not ASCII space.
}

TEST(HtmlTextTest, LinksImagesAndAltText) {
  const HtmlContent content = VisibleText(
      "<a href=\"http://a.example.com/x\">click</a> <area href=\"https://b.example.com\">"
      "<img src=\"http://img.example.com/p.gif\" alt=\"cheap pills\"><img src=\"cid:part1\">"
      "<link href=\"http://css.example.com/s.css\"><a name=\"anchor\">no href</a>");
  EXPECT_THAT(content.links, ElementsAre("http://a.example.com/x", "https://b.example.com",
                                         "http://img.example.com/p.gif", "cid:part1",
                                         "http://css.example.com/s.css"));
  EXPECT_EQ(content.images, 2u);
  std::istringstream text(content.text);
  std::vector<std::string> words;
  for (std::string word; text >> word;) words.push_back(word);
  EXPECT_THAT(words, ElementsAre("click", "cheap", "pills", "no", "href"));
}

TEST(HtmlTextTest, BrokenMarkup) {
  EXPECT_THAT(VisibleWords("<p>unclosed <b>bold <i>italic"),
              ElementsAre("unclosed", "bold", "italic"));
  EXPECT_THAT(VisibleWords("</div></p>stray end tags</td>"), ElementsAre("stray", "end", "tags"));
  for (const char* html :
       {"<", ">", "<<<>>>", "<p", "<!--", "<!-- unterminated comment", "<script>never closed", "&",
        "&#", "&#x;", "&#99999999999;", "<a href=\"unterminated>text", "<![CDATA[x", "<?xml?>",
        "<!DOCTYPE", "<p\x01>", "</>", "<p/>", "<html><html><body><body>"}) {
    const HtmlContent content = VisibleText(html);
    EXPECT_TRUE(IsValidUtf8(content.text)) << html;
  }
  // Not UTF-8 (outside the contract; the tokenizer converts first): no crash.
  (void)VisibleText("\xff\xfe<p>x\xc3</p>");
  (void)VisibleText(std::string("<p>a\0b</p>", 11));
}

TEST(HtmlTextTest, EmptyInput) {
  const HtmlContent content = VisibleText("");
  EXPECT_THAT(content.text, IsEmpty());
  EXPECT_THAT(content.links, IsEmpty());
  EXPECT_EQ(content.images, 0u);
}

TEST(HtmlTextTest, DeepNestingIsHandled) {
  std::string html;
  for (int i = 0; i < 100000; ++i) html += "<div><b>";
  html += "deep";
  for (int i = 0; i < 100000; ++i) html += "</b></div>";
  html += "<p>after</p>";
  HtmlContent content;
  EXPECT_LT(SecondsFor([&] { content = VisibleText(html); }), kQuickSeconds);
  EXPECT_TRUE(IsValidUtf8(content.text));
}

// VisibleText reads libxml2's SAX events; VisibleTextFromTree walks the tree the same parse
// builds. They must agree exactly, on the cases where the tree and the events could part:
// elements nested past the tree builder's depth limit, text after the root closed, comments and
// processing instructions as the only children of a block, skipped elements, value-less and
// repeated attributes, misplaced html/body/head tags, a strict DTD, CDATA and broken markup.
TEST(HtmlTextTest, EventsGiveExactlyWhatTheTreeGives) {
  const std::vector<std::string> kCases = {
      "",
      "plain text, no markup",
      "<p>one</p><p>two</p>",
      "foo<img src=x> <img src=y>bar",
      "<table> <tr> <td>a</td> <td>b</td> </tr> </table>",
      "<div><!-- only a comment --></div>after",
      "<div><?php echo 1 ?></div>after",
      "<p></p>x<p> </p>y<br>z",
      "<script>var a = '<p>no</p>';</script>visible<style>p{}</style><noscript>hidden</noscript>",
      "<div><noscript><p>hidden <img alt=alt-hidden src=s></p></noscript>shown</div>",
      "<a href>empty href</a><a href=''>quoted empty</a><area href=h alt><img alt src>",
      "<a href=1 href=2>repeated</a><img src=a src=b alt=c alt=d>",
      "<A HREF=Upper>Upper</A><IMG SRC=UP ALT=Alt>",
      "<html><body>one</body></html>two<p>three</p>",
      "<html><body>in</body></html><html><body>again</body></html>",
      "</html>tail",
      "<body><body>twice</body><head>late head</head><html lang=x>misplaced</html></body>",
      "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><body> <b>x</b> <i>y</i> </body>",
      "<!DOCTYPE html><title>Title</title><h1>Head</h1>text",
      "<![CDATA[cdata words]]> after <p>p</p>",
      "<p>unclosed <b>bold <i>italic <div>block</p> tail",
      "<ul><li>one<li>two</ul><ol><li>three</ol><dl><dt>t<dd>d</dl>",
      "<select><option>o1<option>o2</select><textarea>t <b>area</b></textarea>",
      "<p>a&amp;b &lt;c&gt; &nbsp; &eacute; &#233; &#x41; &unknown; &</p>",
      "<p \"weird\" =x !y>attrs</p><p/>self<br/>closed",
      "<frameset><frame src=f></frameset>text<iframe src=i>if</iframe>",
      "<head><meta charset=latin1><title>t</title></head><body>\xc3\xa9t\xc3\xa9</body>",
      "<pre>  keep \n spaces  </pre>text\n<p>\n</p>",
      std::string("<p>nul\0byte</p>", 14),
      "\xff\xfe<p>x\xc3</p>",
      // Qualified names: the tree names the element by what follows the first ':'.
      "<a:style>hidden</a:style>shown<x:p>a</x:p>b<a:b:script>c</a:b:script>d<:p>e<x:>f",
      "<ul><!DOCTYPE html><frame></html>after a late doctype",
  };
  std::vector<std::string> cases = kCases;
  // Nesting around the tree builder's limit of 256 open nodes, with text inside and after.
  for (int depth : {250, 254, 255, 256, 257, 300, 2000}) {
    std::string html;
    for (int i = 0; i < depth; ++i) html += i % 3 == 0 ? "<div>" : "<span>";
    html += "deep words";
    for (int i = depth - 1; i >= 0; --i) html += i % 3 == 0 ? "</div>" : "</span>";
    html += "<p>after <a href=after>link</a></p>";
    cases.push_back(html);
  }
  for (const std::string& html : cases) {
    for (const HtmlLimits limits : {HtmlLimits{}, HtmlLimits{.max_tags = 3}}) {
      const HtmlContent events = VisibleText(html, limits);
      const HtmlContent tree = VisibleTextFromTree(html, limits);
      EXPECT_EQ(events.text, tree.text) << html;
      EXPECT_EQ(events.links, tree.links) << html;
      EXPECT_EQ(events.images, tree.images) << html;
      EXPECT_EQ(events.truncated, tree.truncated) << html;
    }
  }
  // The reference is not trivially equal: the tree builder's depth limit ends the text.
  std::string too_deep;
  for (int i = 0; i < 300; ++i) too_deep += "<div>";
  too_deep += "unreached";
  EXPECT_EQ(VisibleTextFromTree(too_deep).text.find("unreached"), std::string::npos);
  EXPECT_EQ(VisibleText(too_deep).text.find("unreached"), std::string::npos);
}

TEST(HtmlTextTest, EventsGiveExactlyWhatTheTreeGivesOnRandomMarkup) {
  static constexpr const char* kPieces[] = {"word ",
                                            "more",
                                            " ",
                                            "\n",
                                            "<p>",
                                            "</p>",
                                            "<div>",
                                            "</div>",
                                            "<b>",
                                            "</b>",
                                            "<span>",
                                            "</span>",
                                            "<a href=x>",
                                            "<a href>",
                                            "</a>",
                                            "<img src=i alt='alt text'>",
                                            "<img alt>",
                                            "<area href=h alt=ar>",
                                            "<br>",
                                            "<table>",
                                            "<tr>",
                                            "<td>",
                                            "</td>",
                                            "</table>",
                                            "<script>",
                                            "</script>",
                                            "<style>",
                                            "</style>",
                                            "<noscript>",
                                            "</noscript>",
                                            "<!--",
                                            "-->",
                                            "<?pi x?>",
                                            "<html>",
                                            "</html>",
                                            "<body>",
                                            "</body>",
                                            "<head>",
                                            "</head>",
                                            "<title>",
                                            "</title>",
                                            "<li>",
                                            "<ul>",
                                            "</ul>",
                                            "&amp;",
                                            "&#x263a;",
                                            "<![CDATA[",
                                            "]]>",
                                            "<",
                                            ">",
                                            "'",
                                            "\"",
                                            "=",
                                            "</",
                                            "<!DOCTYPE html>",
                                            "\xc3\xa9",
                                            "<textarea>",
                                            "</textarea>",
                                            "<option>",
                                            "<select>",
                                            "</select>",
                                            "<frameset>",
                                            "<frame>",
                                            "<iframe>",
                                            "</iframe>"};
  std::mt19937 random(20261125);
  for (int round = 0; round < 3000; ++round) {
    const std::string html = RandomMarkup(kPieces, 200, random);
    const HtmlLimits limits =
        round % 5 == 0 ? HtmlLimits{.max_tags = 20, .max_attributes = 5} : HtmlLimits{};
    const HtmlContent events = VisibleText(html, limits);
    const HtmlContent tree = VisibleTextFromTree(html, limits);
    ASSERT_EQ(events.text, tree.text) << html;
    ASSERT_EQ(events.links, tree.links) << html;
    ASSERT_EQ(events.images, tree.images) << html;
    ASSERT_EQ(events.truncated, tree.truncated) << html;
  }
}

TEST(HtmlTextTest, HtmlPartThroughTheTokenizer) {
  const Tokens tokens = TokensOf(
      "Subject: html\nContent-Type: text/html; charset=utf-8\n\n"
      "<html><head><title>Title</title><style>.x{color:red}</style></head><body>"
      "<p>Tom &amp; Jerry <b>fr</b>ee caf&eacute; caf&#233;</p><!-- secretcomment -->"
      "<script>secretscript()</script><div>next</div>line</body></html>\n",
      CountingOptions());
  EXPECT_THAT(
      tokens.From(TokenSource::kBody),
      UnorderedElementsAre(Pair("title", 1), Pair("tom", 1), Pair("jerry", 1), Pair("free", 1),
                           Pair("café", 2), Pair("next", 1), Pair("line", 1)));
  EXPECT_FALSE(tokens.AnyContains("secret"));
  EXPECT_FALSE(tokens.AnyContains("color"));
  EXPECT_THAT(tokens.counts, IsSupersetOf({Pair("meta:html-only", 1)}));
}

}  // namespace
}  // namespace nbspamd::tokenizer
