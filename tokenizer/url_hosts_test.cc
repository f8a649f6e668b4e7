#include "tokenizer/url_hosts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tokenizer/mail_reader.h"
#include "tokenizer/tokenizer_test_util.h"

namespace nbspamd::tokenizer {
namespace {

using test_util::CountingOptions;
using test_util::Tokens;
using test_util::TokensOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::IsSupersetOf;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Hosts(std::string_view text, std::size_t limit = 100) {
  std::vector<std::string> hosts;
  FindUrlHosts(text, hosts, limit);
  return hosts;
}

TEST(UrlHostsTest, UrlHost) {
  EXPECT_EQ(UrlHost("http://a.b.example.co.uk/x"), "a.b.example.co.uk");
  EXPECT_EQ(UrlHost("HTTPS://User:Pw@WWW.Example.COM:8080/path?q=1#f"), "www.example.com");
  EXPECT_EQ(UrlHost("ftp://files.example.org"), "files.example.org");
  EXPECT_EQ(UrlHost("www.example.net/page"), "www.example.net");
  EXPECT_EQ(UrlHost("  http://x.example.com"), "x.example.com");
  EXPECT_EQ(UrlHost("http://example.com./"), "example.com");
  EXPECT_EQ(UrlHost("http://192.0.2.1:80/"), "192.0.2.1");
  EXPECT_EQ(UrlHost("http://example.com?q"), "example.com");
  // No host: other schemes, relative links, names without a dot, broken names.
  for (const char* url :
       {"mailto:a@example.com", "javascript:alert(1)", "/relative/path", "cid:part1",
        "http://localhost/", "http://", "", "http://exa_mple.com", "http://a..example.com",
        "http://.example.com", "http://[::1]/", "#anchor"}) {
    EXPECT_EQ(UrlHost(url), "") << url;
  }
  // Internationalised names as UTF-8, but no other 8-bit bytes (found by message_fuzzer).
  EXPECT_EQ(UrlHost("http://b\xC3\xBC"
                    "cher.example/"),
            "b\xC3\xBC"
            "cher.example");
  EXPECT_EQ(UrlHost("http://img.\xF3\xEF\xBD\x89.example/"), "");
  EXPECT_THAT(Hosts("www.\xC4\x30.example.com"), IsEmpty());
}

TEST(UrlHostsTest, FindUrlHostsInText) {
  EXPECT_THAT(
      Hosts("Visit http://a.example.com/x or https://B.Example.ORG, see www.shop.example.net."
            "\n(also ftp://files.example.com/f) and <http://c.example.com>"),
      ElementsAre("a.example.com", "b.example.org", "www.shop.example.net", "files.example.com",
                  "c.example.com"));
  // Only at the start of a word; not without a scheme or www.
  EXPECT_THAT(Hosts("xhttp://a.example.com awww.example.com example.com http:/x.example.com"),
              IsEmpty());
  EXPECT_THAT(Hosts("http://10.0.0.1/login"), ElementsAre("10.0.0.1"));
}

// NextUrlStart, 16 bytes at a time, against its definition a byte at a time: random texts of
// every length up to 80 over the bytes that decide it (the three letters in both cases, letters
// and digits either side of them, the bytes just outside 'a'..'z' and '0'..'9' once ORed with
// 0x20, high bytes), from every position.
TEST(UrlHostsTest, NextUrlStartFindsWhatAByteAtATimeScanFinds) {
  const std::string alphabet = "hHfFwWaAzZ09@[`{/:. \t\x7f\x80\xc8\xe6\xf7\xff\x10\x5b\x3a";
  auto may_start = [](std::string_view text, std::size_t i) {
    const char c = static_cast<char>(text[i] | 0x20);
    const bool letter = c == 'h' || c == 'f' || c == 'w';
    const bool after_alnum = i > 0 && ((text[i - 1] >= 'a' && text[i - 1] <= 'z') ||
                                       (text[i - 1] >= 'A' && text[i - 1] <= 'Z') ||
                                       (text[i - 1] >= '0' && text[i - 1] <= '9'));
    return letter && !after_alnum;
  };
  std::mt19937 random(63);
  std::size_t found = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text(random() % 81, ' ');
    // Mostly bytes that do not start a URL, so that whole blocks of 16 are passed over.
    const bool sparse = round % 2 == 0;
    for (char& c : text) {
      c = sparse && random() % 8 != 0 ? "ab9 .\xe9"[random() % 6]
                                      : alphabet[random() % alphabet.size()];
    }
    for (std::size_t from = 0; from <= text.size(); ++from) {
      std::size_t expected = from;
      while (expected < text.size() && !may_start(text, expected)) ++expected;
      ASSERT_EQ(url_hosts_internal::NextUrlStart(text, from), expected)
          << "text " << ::testing::PrintToString(text) << " from " << from;
      if (expected < text.size()) ++found;
    }
  }
  EXPECT_GT(found, 10000u);
}

TEST(UrlHostsTest, FindUrlHostsHonoursLimitAndAppends) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "http://h" + std::to_string(i) + ".example.com ";
  EXPECT_EQ(Hosts(text, 10).size(), 10u);
  EXPECT_THAT(Hosts(text, 0), IsEmpty());
  std::vector<std::string> hosts = {"kept.example.com"};
  FindUrlHosts("http://new.example.com", hosts, 5);
  EXPECT_THAT(hosts, ElementsAre("kept.example.com", "new.example.com"));
}

TEST(UrlHostsTest, RegistrableDomain) {
  EXPECT_EQ(RegistrableDomain("a.b.example.co.uk"), "example.co.uk");
  EXPECT_EQ(RegistrableDomain("example.co.uk"), "example.co.uk");
  EXPECT_EQ(RegistrableDomain("www.example.com"), "example.com");
  EXPECT_EQ(RegistrableDomain("shop.example.com.au"), "example.com.au");
  EXPECT_EQ(RegistrableDomain("co.uk"), "");
  EXPECT_EQ(RegistrableDomain("com"), "");
  EXPECT_EQ(RegistrableDomain("192.0.2.1"), "");
  EXPECT_EQ(RegistrableDomain(""), "");
}

// More hosts than the per-thread cache has slots, twice over: every answer is libpsl's, whether
// the host's slot still holds it, was taken over by another host, or is filled again.
TEST(UrlHostsTest, RegistrableDomainOfManyHostsTwice) {
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < 10000; ++i) {
      const std::string domain =
          "example" + std::to_string(i % 97) + (i % 2 == 0 ? ".co.uk" : ".com");
      const std::string host = "h" + std::to_string(i) + "." + domain;
      ASSERT_EQ(RegistrableDomain(host), domain) << host << " in pass " << pass;
      ASSERT_EQ(RegistrableDomain(domain), domain) << domain << " in pass " << pass;
    }
  }
  EXPECT_EQ(RegistrableDomain("co.uk"), "");
}

TEST(UrlHostsTest, IsIpv4Address) {
  for (const char* address : {"192.0.2.1", "10.0.0.1", "1.2.3.4", "255.255.255.255"}) {
    EXPECT_TRUE(IsIpv4Address(address)) << address;
  }
  for (const char* host : {"", "1.2.3", "1.2.3.4.5", "1..3.4", "1.2.3.4.", "a.b.c.d", "1234.1.1.1",
                           "example.com", "1.2.3.x"}) {
    EXPECT_FALSE(IsIpv4Address(host)) << host;
  }
}

TEST(UrlHostsTest, AddUrlTokens) {
  MailContent content;
  AddUrlTokens({"a.b.example.co.uk", "192.0.2.1", "www.example.com"}, content);
  std::vector<std::pair<std::string, TokenSource>> tokens;
  for (const MailContent::WholeToken& token : content.tokens) {
    tokens.emplace_back(token.text, token.source);
  }
  EXPECT_THAT(tokens, ElementsAre(Pair("url:a.b.example.co.uk", TokenSource::kUrl),
                                  Pair("url-domain:example.co.uk", TokenSource::kUrl),
                                  Pair("meta:url-ip", TokenSource::kMeta),
                                  Pair("url:www.example.com", TokenSource::kUrl),
                                  Pair("url-domain:example.com", TokenSource::kUrl)));
}

TEST(UrlHostsTest, PlainTextUrlsGiveUrlTokens) {
  const Tokens tokens = TokensOf(
      "cheap pills at http://a.b.example.co.uk/x and www.shop.example.com or http://192.0.2.7/");
  EXPECT_THAT(tokens.counts,
              IsSupersetOf({Pair("url:a.b.example.co.uk", 1), Pair("url-domain:example.co.uk", 1),
                            Pair("url:www.shop.example.com", 1), Pair("url-domain:example.com", 1),
                            Pair("meta:url-ip", 1)}));
  EXPECT_EQ(tokens.sources.at("url:a.b.example.co.uk"), TokenSource::kUrl);
  EXPECT_EQ(tokens.sources.at("url-domain:example.co.uk"), TokenSource::kUrl);
  EXPECT_EQ(tokens.sources.at("meta:url-ip"), TokenSource::kMeta);
  EXPECT_THAT(tokens.counts, Not(Contains(Key("url:192.0.2.7"))));
  // The URL's words are body words as well.
  EXPECT_THAT(tokens.counts, IsSupersetOf({Pair("cheap", 1), Pair("pills", 1)}));
}

TEST(UrlHostsTest, MailLinksGiveUrlTokens) {
  const Tokens tokens = TokensOf(
      "Subject: links\nContent-Type: multipart/alternative; boundary=b\n\n"
      "--b\nContent-Type: text/plain\n\nsee https://Text.Example.ORG/path\n"
      "--b\nContent-Type: text/html\n\n"
      "<a href=\"http://a.b.example.co.uk/x\">click here</a>"
      "<a href=\"http://203.0.113.5/login\">login</a>"
      "<a href=\"mailto:x@example.com\">mail</a> www.inline.example.net\n"
      "--b--\n");
  EXPECT_THAT(tokens.counts,
              IsSupersetOf({Pair("url:text.example.org", 1), Pair("url-domain:example.org", 1),
                            Pair("url:a.b.example.co.uk", 1), Pair("url-domain:example.co.uk", 1),
                            Pair("meta:url-ip", 1), Pair("url:www.inline.example.net", 1),
                            Pair("url-domain:example.net", 1)}));
  EXPECT_THAT(tokens.WithPrefix("url:"),
              UnorderedElementsAre(Key("url:text.example.org"), Key("url:a.b.example.co.uk"),
                                   Key("url:www.inline.example.net")));
}

TEST(UrlHostsTest, UrlsAreLimited) {
  std::string text = "links\n";  // Not "http://...": a first line like a header field is mail.
  for (int i = 0; i < 1000; ++i) text += "http://h" + std::to_string(i) + ".example.com/ ";
  const Tokens tokens = TokensOf(text, CountingOptions());
  EXPECT_EQ(tokens.WithPrefix("url:").size(), 256u);
  EXPECT_THAT(tokens.counts, Contains(Pair("url-domain:example.com", 256)));
}

}  // namespace
}  // namespace nbspamd::tokenizer
