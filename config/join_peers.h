// JoinPeer: a daemon a new daemon may fetch its model from (cluster_join_from, docs/SCALING.md
// "Joining a cluster"), parsed from "http://HOST:PORT" or "https://HOST:PORT" (or
// "http://[IPV6]:PORT"; the port defaults to 80 or 443, a trailing '/' is allowed).
//
//   auto peers = ParseJoinPeers("https://nbspamd-a.example:7830, http://10.0.0.6:7830");
//
// Pure; thread-safe. A malformed list is nullopt (the settings name the key).
#ifndef NBSPAMD_CONFIG_JOIN_PEERS_H_
#define NBSPAMD_CONFIG_JOIN_PEERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nbspamd::config {

struct JoinPeer {
  std::string host;  // Without brackets for IPv6.
  std::uint16_t port = 80;
  bool tls = false;  // https://: the peer's certificate is checked against its host name.
  std::string url;   // "http://HOST:PORT", as logs and messages name the peer.

  friend bool operator==(const JoinPeer&, const JoinPeer&) = default;
};

// The comma-separated peers of `text` (spaces around items allowed); nullopt when an item is
// not an http:// or https:// URL of a host and an optional port from 1 to 65535 (no path, user,
// query), or the list is empty.
[[nodiscard]] std::optional<std::vector<JoinPeer>> ParseJoinPeers(std::string_view text);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_JOIN_PEERS_H_
