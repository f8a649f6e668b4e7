// BrowserGuard: the Host rule and the cross-site rule, request by request, as a browser and as a
// mail server or nbspamc send them.
#include "http_api/browser_guard.h"

#include <gtest/gtest.h>

#include <boost/beast/http/field.hpp>
#include <initializer_list>
#include <utility>

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;

using Headers = std::initializer_list<std::pair<http::field, const char*>>;

Request Make(http::verb method, Headers headers) {
  Request request(method, "/", 11);
  for (const auto& [field, value] : headers) request.set(field, value);
  return request;
}

// The refusal's status, or 200 when served.
unsigned StatusOf(http::verb method, Endpoint endpoint, Headers headers,
                  const HostNames& hosts = HostNames::Of("", "127.0.0.1", "mx7")) {
  auto refused = CheckBrowserRequest(Make(method, headers), endpoint, hosts);
  return refused ? refused->result_int() : 200;
}

TEST(BrowserGuardTest, AHostMustNameThisDaemon) {
  for (const char* host : {"127.0.0.1:7830", "127.0.0.1", "[::1]:7830", "10.1.2.3:80",
                           "localhost:7830", "LOCALHOST", "app.localhost:1", "mx7:7830", "MX7."}) {
    EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kHistory, {{http::field::host, host}}), 200u)
        << host;
  }
  for (const char* host : {"attacker.example:7830", "attacker.example", "mx7.attacker.example",
                           "localhost.attacker.example", ""}) {
    EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kHistory, {{http::field::host, host}}), 421u)
        << host;
    EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kHealth, {{http::field::host, host}}), 421u)
        << "every endpoint: " << host;
  }
  EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kHistory, {}), 200u) << "HTTP/1.0, no Host";
  // Configured names, and listen's own; "*" takes any.
  const HostNames configured =
      HostNames::Of(" spamfilter.lan , Filter.Example:7830", "nbspamd", "");
  for (const char* host : {"spamfilter.lan:7830", "filter.example", "nbspamd:7830"}) {
    EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kStats, {{http::field::host, host}}, configured),
              200u)
        << host;
  }
  EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kStats, {{http::field::host, "mx7"}}, configured),
            421u);
  EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kStats, {{http::field::host, "anything.example"}},
                     HostNames::Of("*", "", "")),
            200u);
}

TEST(BrowserGuardTest, ABrowserRequestForAnotherSiteIsRefused) {
  const Headers cross_site_form = {{http::field::host, "127.0.0.1:7830"},
                                   {http::field::origin, "https://attacker.example"},
                                   {http::field::sec_fetch_site, "cross-site"},
                                   {http::field::sec_fetch_mode, "navigate"}};
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain, cross_site_form), 403u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kAdminRollback, cross_site_form), 403u);
  // A no-cors fetch from another port of the same host: same-site, not same-origin.
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kForget,
                     {{http::field::host, "127.0.0.1:7830"},
                      {http::field::origin, "http://127.0.0.1:8080"},
                      {http::field::sec_fetch_site, "same-site"}}),
            403u);
  // A browser that sends Origin but no Sec-Fetch-Site; and an opaque origin.
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "127.0.0.1:7830"},
                      {http::field::origin, "http://127.0.0.1:8080"}}),
            403u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "127.0.0.1:7830"}, {http::field::origin, "null"}}),
            403u);
  // A cross-site read is refused too; a navigation to the console is not.
  EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kHistory,
                     {{http::field::host, "127.0.0.1:7830"},
                      {http::field::sec_fetch_site, "cross-site"},
                      {http::field::sec_fetch_mode, "cors"}}),
            403u);
  EXPECT_EQ(StatusOf(http::verb::get, Endpoint::kConsole,
                     {{http::field::host, "127.0.0.1:7830"},
                      {http::field::sec_fetch_site, "cross-site"},
                      {http::field::sec_fetch_mode, "navigate"}}),
            200u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kConsole, cross_site_form), 403u);
}

TEST(BrowserGuardTest, TheConsoleAndClientsWithoutOriginAreServed) {
  // The console's own calls: same-origin, with or without a port in Origin and Host.
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "127.0.0.1:7830"},
                      {http::field::origin, "http://127.0.0.1:7830"},
                      {http::field::sec_fetch_site, "same-origin"}}),
            200u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "mx7"}, {http::field::origin, "http://mx7"}}),
            200u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "mx7:443"}, {http::field::origin, "https://mx7"}}),
            200u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain,
                     {{http::field::host, "mx7:8443"}, {http::field::origin, "https://mx7"}}),
            403u);
  // A bookmark or a typed address.
  EXPECT_EQ(
      StatusOf(http::verb::get, Endpoint::kHistory,
               {{http::field::host, "localhost:7830"}, {http::field::sec_fetch_site, "none"}}),
      200u);
  // curl, nbspamc, a mail server: no Origin, no Sec-Fetch-Site.
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kTrain, {{http::field::host, "127.0.0.1:7830"}}),
            200u);
  EXPECT_EQ(StatusOf(http::verb::post, Endpoint::kAdminRollback, {}), 200u);
}

}  // namespace
}  // namespace nbspamd::http_api
