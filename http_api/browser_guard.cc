#include "http_api/browser_guard.h"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <cctype>

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The host of a Host value ("name:port", "[::1]:port", "1.2.3.4"), lower case, without a final dot.
std::string HostPart(std::string_view host) {
  if (host.starts_with('[')) {
    const std::size_t end = host.find(']');
    return Lower(host.substr(0, end == std::string_view::npos ? host.size() : end + 1));
  }
  const std::size_t colon = host.rfind(':');
  if (colon != std::string_view::npos) host = host.substr(0, colon);
  if (host.ends_with('.')) host.remove_suffix(1);
  return Lower(host);
}

bool IsIpAddress(std::string_view host) {
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  boost::system::error_code error;
  boost::asio::ip::make_address(std::string(host), error);
  return !error;
}

bool IsName(std::string_view host) { return !host.empty() && !IsIpAddress(host); }

bool NamesThisDaemon(std::string_view host_header, const HostNames& hosts) {
  if (hosts.any) return true;
  const std::string host = HostPart(Trim(host_header));
  if (host.empty()) return false;
  if (IsIpAddress(host)) return true;
  if (host == "localhost" || host.ends_with(".localhost")) return true;
  return std::ranges::find(hosts.names, host) != hosts.names.end();
}

// Host and port of an Origin ("https://name:port"), lower case; nullopt for "null" or garbage.
std::optional<std::string> OriginAuthority(std::string_view origin) {
  auto url = boost::urls::parse_absolute_uri(Trim(origin));
  if (!url || !url->has_authority()) return std::nullopt;
  std::string authority = Lower(url->encoded_host_and_port());
  // An origin leaves out its scheme's default port; a Host header may too, or may not.
  return authority;
}

// Whether `host_header` and an Origin's authority name the same host and port (a default port
// given on one side only counts as the same).
bool SameAuthority(std::string_view host_header, const std::string& origin_authority,
                   std::string_view scheme_default_port) {
  std::string host = Lower(Trim(host_header));
  if (host == origin_authority) return true;
  const std::string with_port = origin_authority + ":" + std::string(scheme_default_port);
  return host == with_port || host + ":" + std::string(scheme_default_port) == origin_authority;
}

Response Refuse(const Request& request, http::status status, std::string_view code,
                const std::string& message) {
  return ErrorResponse(status, code, message, request.version());
}

}  // namespace

HostNames HostNames::Of(std::string_view configured, std::string_view listen_host,
                        std::string_view machine_host) {
  HostNames hosts;
  while (!configured.empty()) {
    const std::size_t comma = configured.find(',');
    const std::string_view item = Trim(configured.substr(0, comma));
    configured.remove_prefix(comma == std::string_view::npos ? configured.size() : comma + 1);
    if (item == "*") hosts.any = true;
    if (!item.empty() && item != "*") hosts.names.push_back(HostPart(item));
  }
  for (const std::string_view own : {listen_host, machine_host}) {
    if (IsName(HostPart(own))) hosts.names.push_back(HostPart(own));
  }
  return hosts;
}

std::optional<Response> CheckBrowserRequest(const Request& request, Endpoint endpoint,
                                            const HostNames& hosts) {
  const auto host = request.find(http::field::host);
  if (host != request.end() && !NamesThisDaemon(host->value(), hosts)) {
    return Refuse(request, http::status::misdirected_request, "unknown_host",
                  "Host '" + std::string(host->value()) +
                      "' does not name this daemon (an IP address, localhost, the machine's "
                      "host name or a name of http_hosts): refused, so that a web page cannot "
                      "reach it through a name of its own (docs/API.md, \"Requests from "
                      "browsers\")");
  }
  const bool read_only =
      request.method() == http::verb::get || request.method() == http::verb::head;
  const std::string site = Lower(Trim(request[http::field::sec_fetch_site]));
  const bool navigation = Lower(Trim(request[http::field::sec_fetch_mode])) == "navigate";
  if (read_only && navigation && endpoint == Endpoint::kConsole) return std::nullopt;
  if (site == "cross-site" || site == "same-site") {
    return Refuse(request, http::status::forbidden, "cross_site",
                  "a request a browser sends for a page of another site (Sec-Fetch-Site: " + site +
                      ") is refused; open the console at this daemon's own address");
  }
  const auto origin = request.find(http::field::origin);
  if (origin != request.end()) {
    const auto authority = OriginAuthority(origin->value());
    const bool https = Lower(Trim(origin->value())).starts_with("https:");
    if (!authority || host == request.end() ||
        !SameAuthority(host->value(), *authority, https ? "443" : "80")) {
      return Refuse(
          request, http::status::forbidden, "cross_site",
          "a request from a page of another origin (Origin: " + std::string(origin->value()) +
              ") is refused; open the console at this daemon's own address");
    }
  }
  return std::nullopt;
}

}  // namespace nbspamd::http_api
