#include "tokenizer/html_fast_parser.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/html_elements.h"
#include "tokenizer/html_text.h"
#include "tokenizer/html_tree_text.h"

namespace nbspamd::tokenizer {
namespace {

// Expects the fast parser to read `html` itself, with libxml2's events.
void ExpectSameEvents(std::string_view html) {
  bool fast_parsed = false;
  const std::string fast = HtmlEventTrace(html, HtmlParser::kFast, &fast_parsed);
  EXPECT_TRUE(fast_parsed) << html;
  EXPECT_EQ(fast, HtmlEventTrace(html, HtmlParser::kLibxml2)) << html;
}

// Expects the fast parser to leave `html` to libxml2, and VisibleText to be libxml2's anyway.
void ExpectLeftToLibxml2(std::string_view html) {
  bool fast_parsed = true;
  (void)HtmlEventTrace(html, HtmlParser::kFast, &fast_parsed);
  EXPECT_FALSE(fast_parsed) << html;
  EXPECT_EQ(VisibleText(html), VisibleText(html, {}, HtmlParser::kLibxml2)) << html;
  EXPECT_EQ(VisibleText(html), VisibleTextFromTree(html)) << html;
}

TEST(HtmlFastParserTest, ReadsTheCommonMarkupAsLibxml2) {
  for (const char* html : {
           "",
           "plain text",
           "  \n leading blanks",
           "<html><head><title>T</title></head><body><p>one</p><p>two</p></body></html>",
           "<p>unclosed <b>bold <i>italic <div>block</p> tail",
           "<table><tr><td>a<td>b<tr><td>c</table>after",
           "<ul><li>one<li>two</ul><dl><dt>t<dd>d</dl><select><option>a<option>b</select>",
           "<a href=\"http://x.example/?a=1&amp;b=2\">link</a><img src='i.png' alt=\"an "
           "&lt;alt&gt;\">",
           "<a href=x href=y>repeated</a><a href>empty</a><a href=>empty too</a>",
           "<A HREF=Upper>Upper</A><IMG SRC=UP ALT=Alt><BR/>",
           "<p \"weird\" =x !y/ a=b/>attrs</p><p/>self<br/>closed<br / >",
           "a&amp;b &lt;c&gt; &nbsp; &eacute; &#233; &#x41; &#X42; &unknown; & &; &#; &#x; &#0; "
           "&#1; &#xD800; &#1114112; &#65534; &AMP; &amp &#65 &x-y.z; &:a;",
           "<a href='&#0;cut &amp; more' alt='&#x26;&unknown;&amp'>x</a>",
           "<!-- c --><!----><!-- a -- b --!> after <!-->still<!-- x --->",
           "<?xml version=\"1.0\"?><?php echo 1 ?><?xml:namespace prefix = o ns=x /><? x><?9>",
           "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01//EN\" \"http://w3.org/x.dtd\"><p>x",
           "<!doctype html system 'x' junk><p>x</p><!DOCTYPE again><p>y",
           "<script>var a = '<p>no</p>'; </scr + ipt> </SCRIPT>visible<style>p{}</stylex></style>",
           "<noscript><p>hidden <img alt=h src=s></p></noscript>shown",
           "<body><body>twice</body><head>late head</head><html lang=x>misplaced</html></body>",
           "</html>tail</body> more </p> <br> </br> </ > </3> </a b c>",
           "<html> <head> <meta charset=latin1> </head> <body> x </body> </html> ",
           "<x:p>a</x:p>b<o:p></o:p><a:style>hidden</a:style>shown<:p>e<_x>f<.y>g",
           "<p.x>a<p.y>b</p.x><li.a>c",
           "<frameset><frame src=f></frameset>text<iframe src=i>if</iframe>",
           "< b> a < b >c<1>d<!x>e<!>f<!-x->g",
           "<pre>  keep \n spaces  </pre>text\n<p>\n</p>\t\r\n",
           "t\x01\x02\x0b\x0c\x1f ext\xef\xbf\xbe\xef\xbf\xbf end<a href='\x01'>\x03</a>",
           "<p>caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 &euro;</p>",
           "<b foo",
           "<body/>x<div>a<body/>b",
           "text <p",
           "<!-- unterminated",
           "<?pi unterminated",
           "<!DOCTYPE unterminated \"",
       }) {
    ExpectSameEvents(html);
  }
}

TEST(HtmlFastParserTest, NestsEveryPairOfElementsAsLibxml2) {
  // Which start tag ends which open element, the end tags' priorities, empty elements and
  // implied elements: every pair of the names libxml2 knows, and a name it does not.
  std::vector<std::string> names(html_elements::AllNames().begin(),
                                 html_elements::AllNames().end());
  names.push_back("unknown");
  for (const std::string& outer : names) {
    for (const std::string& inner : names) {
      ExpectSameEvents("<" + outer + ">a<" + inner + ">b</" + outer + ">c</" + inner + ">d<" +
                       inner + ">e");
      ExpectSameEvents("<div><" + outer + "><" + inner + ">x</" + inner + "><" + outer + ">y");
      if (testing::Test::HasFailure()) return;
    }
  }
}

TEST(HtmlFastParserTest, CutsTextIntoLibxml2sChunks) {
  for (std::size_t length : {999u, 1000u, 1001u, 2000u, 2500u}) {
    const std::string blanks(length, ' ');
    for (const std::string& html :
         {blanks, "<html>" + blanks, "<html>" + blanks + "<p>x", "<head>" + blanks + "</head>",
          "x" + blanks, "x" + blanks + "<b>", std::string(length, 'y') + "   <b>",
          "<html>" + blanks + "&amp;",
          "<html>" + std::string(length - 2, 'z') + "\xc3\xa9   <p>"}) {
      ExpectSameEvents(html);
    }
  }
}

TEST(HtmlFastParserTest, LeavesWhatItDoesNotRedoToLibxml2) {
  ExpectLeftToLibxml2(std::string("<p>nul\0byte</p>", 14));
  ExpectLeftToLibxml2("<p>invalid \xc3 UTF-8</p>");
  ExpectLeftToLibxml2("<p>overlong \xc0\xaf</p>");
  ExpectLeftToLibxml2("<p>surrogate \xed\xa0\x80</p>");
  ExpectLeftToLibxml2("\xef\xbb\xbf<p>byte order mark</p>");
  ExpectLeftToLibxml2("<" + std::string(120, 'a') + ">long name");
  ExpectLeftToLibxml2("<p " + std::string(120, 'a') + "=x>long attribute");
  ExpectLeftToLibxml2("<a href=\"unterminated>text");
  ExpectLeftToLibxml2("<p>&caf\xc3\xa9;</p>");
  ExpectLeftToLibxml2("<p>&\xc3\xa9t\xc3\xa9;</p>");
  std::string deep;
  for (int i = 0; i < 300; ++i) deep += "<span>";
  ExpectLeftToLibxml2(deep + "deep");
}

// A hostile part of thousands of distinct unknown element names (each name copied once; its
// cost is measured by mail_stages_benchmark's BM_HtmlUnknownNames): the same events as libxml2's,
// read by the fast parser itself.
TEST(HtmlFastParserTest, ThousandsOfDistinctUnknownNamesGiveLibxml2sEvents) {
  std::string html;
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "x" + std::to_string(i % 2500);
    html += "<" + name + ">w" + std::to_string(i) + "</x" + std::to_string((i * 7) % 2500) + "></" +
            name + "><o:p></o:p>";
  }
  ExpectSameEvents(html);
}

TEST(HtmlFastParserTest, RandomMarkupGivesLibxml2sEvents) {
  static constexpr const char* kPieces[] = {"<p>",
                                            "</p>",
                                            "<div>",
                                            "</div>",
                                            "<b>",
                                            "</b>",
                                            "<td>",
                                            "<tr>",
                                            "<table>",
                                            "</table>",
                                            "<li>",
                                            "<ul>",
                                            "<html>",
                                            "</html>",
                                            "<head>",
                                            "</head>",
                                            "<body>",
                                            "</body>",
                                            "<title>",
                                            "<script>",
                                            "</script>",
                                            "<style>",
                                            "</style>",
                                            "<noscript>",
                                            "</noscript>",
                                            "<a href=x>",
                                            "<img src=s alt=a>",
                                            "<br>",
                                            "<br/>",
                                            "<option>",
                                            "<select>",
                                            "<frameset>",
                                            "<frame>",
                                            "<x:y>",
                                            "</x:y>",
                                            "<o:p>",
                                            "word ",
                                            "text",
                                            " ",
                                            "\n",
                                            "&amp;",
                                            "&nbsp;",
                                            "&#65;",
                                            "&bogus;",
                                            "&",
                                            "<",
                                            ">",
                                            "<!-- c -->",
                                            "<!--",
                                            "-->",
                                            "<?pi x?>",
                                            "<!DOCTYPE html>",
                                            "\"",
                                            "'",
                                            "=",
                                            "/",
                                            "\xc3\xa9",
                                            "\x0c",
                                            "</",
                                            "<?"};
  std::mt19937 random(20261207);
  std::uniform_int_distribution<std::size_t> piece(0, std::size(kPieces) - 1);
  std::uniform_int_distribution<int> count(1, 40);
  int fast = 0;
  constexpr int kCases = 20000;
  for (int i = 0; i < kCases; ++i) {
    std::string html;
    for (int n = count(random); n > 0; --n) html += kPieces[piece(random)];
    bool fast_parsed = false;
    const std::string events = HtmlEventTrace(html, HtmlParser::kFast, &fast_parsed);
    if (fast_parsed) {
      ++fast;
      ASSERT_EQ(events, HtmlEventTrace(html, HtmlParser::kLibxml2)) << html;
    }
    ASSERT_EQ(VisibleText(html), VisibleTextFromTree(html)) << html;
  }
  // Only an unterminated quoted value is left to libxml2 here.
  EXPECT_GT(fast, kCases * 3 / 4);
}

}  // namespace
}  // namespace nbspamd::tokenizer
