// Host names of the URLs in a text, and their registrable domains (the public suffix list, via
// libpsl), for url: tokens. Spam is told by where it links to far more than by the link text.
#ifndef NBSPAMD_TOKENIZER_URL_HOSTS_H_
#define NBSPAMD_TOKENIZER_URL_HOSTS_H_

#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// Appends to `hosts` the lower-case host of every URL in `text`: after "http://", "https://"
// or "ftp://" (user info and port removed), and bare "www." names. Hosts that are not a
// dotted name or IPv4 address, or not valid UTF-8, are skipped. At most `limit` hosts in all are
// appended.
void FindUrlHosts(std::string_view text, std::vector<std::string>& hosts, std::size_t limit);

// The host of one URL or URL-like string (an href value); "" when it has none.
[[nodiscard]] std::string UrlHost(std::string_view url);

// The registrable domain of `host` ("example.co.uk" for "a.b.example.co.uk"), or "" when there
// is none (an IP address, a bare public suffix). Answers for recent hosts are kept per thread
// (the hosts of a site's own Received chain recur in every message): a direct-mapped cache of
// 4,096 slots, a host taking over the slot its hash picks, so libpsl's lookup runs again only for
// a host whose slot another has taken since.
[[nodiscard]] std::string RegistrableDomain(std::string_view host);

// Whether `host` is a dotted-quad IPv4 address.
[[nodiscard]] bool IsIpv4Address(std::string_view host);

namespace url_hosts_internal {

// The first position at or after `from` where a URL may start: h, f or w in either case (the
// first letter of every scheme and of "www.") after no ASCII letter or digit; text.size() when
// none does. FindUrlHosts looks only there. Tested 16 bytes at a time where the CPU can (SSE2);
// the test holds it to the byte-at-a-time definition.
[[nodiscard]] std::size_t NextUrlStart(std::string_view text, std::size_t from);

}  // namespace url_hosts_internal

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_URL_HOSTS_H_
