// BrowserGuard: what a web page on another site may not make a browser do to this daemon.
//
// Two attacks come through the administrator's browser, whatever the token setting:
//  - cross-site writes: a page on another origin posts text/plain to /train, /forget or
//    /admin/rollback (a no-cors fetch or an auto-submitted form needs no CORS preflight);
//  - DNS rebinding: a name the attacker controls is made to resolve to 127.0.0.1, and the page,
//    now "same-origin" with the daemon, reads /history.
// So every request is checked before anything else (docs/API.md "Requests from browsers"):
//  - its Host must name this daemon: an IP address, `localhost` (or a name under .localhost), the
//    machine's host name, the host of `listen`, or a name of `http_hosts` ("*" there: any Host,
//    for a daemon behind a proxy that checks it). Else 421 `unknown_host`. A request without Host
//    (HTTP/1.0) passes: a browser always sends one.
//  - a browser's marks of another site refuse it: Sec-Fetch-Site `cross-site` or `same-site` (a
//    page on another port or subdomain), or an Origin whose host and port differ from Host's
//    (`null` too). Else 403 `cross_site`. The one exception is a browser navigating to the
//    console (a link to /ui/ from elsewhere): a GET that changes nothing and shows the page,
//    whose own calls are then same-origin.
// Clients that send no Origin and no Sec-Fetch-Site (mail servers, nbspamc, curl, spamc) are
// not affected by the second rule.
//
// Pure; thread-safe (a HostNames is immutable once built).
#ifndef NBSPAMD_HTTP_API_BROWSER_GUARD_H_
#define NBSPAMD_HTTP_API_BROWSER_GUARD_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "http_api/endpoints.h"
#include "http_api/http_errors.h"

namespace nbspamd::http_api {

// The names a Host header may give (besides IP addresses and localhost). Lower case, no port.
struct HostNames {
  std::vector<std::string> names;
  bool any = false;  // "*": every Host passes.

  // `configured`: the http_hosts setting, names separated by commas ("*" for any); `listen_host`
  // and `machine_host` are added when they are names.
  static HostNames Of(std::string_view configured, std::string_view listen_host,
                      std::string_view machine_host);
};

// The refusal of `request` to `endpoint` (421 or 403 with a JSON body), or nullopt to serve it.
[[nodiscard]] std::optional<Response> CheckBrowserRequest(const Request& request, Endpoint endpoint,
                                                          const HostNames& hosts);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_BROWSER_GUARD_H_
