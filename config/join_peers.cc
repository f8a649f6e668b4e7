#include "config/join_peers.h"

#include <charconv>
#include <utility>

namespace nbspamd::config {
namespace {

std::optional<JoinPeer> ParseJoinPeer(std::string_view item) {
  JoinPeer peer;
  peer.tls = item.starts_with("https://");
  const std::string_view scheme = peer.tls ? "https://" : "http://";
  if (!item.starts_with(scheme)) return std::nullopt;
  item.remove_prefix(scheme.size());
  if (item.ends_with('/')) item.remove_suffix(1);
  if (peer.tls) peer.port = 443;
  std::string_view port_text;
  if (item.starts_with('[')) {
    const std::size_t close = item.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    peer.host = std::string(item.substr(1, close - 1));
    const std::string_view rest = item.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return std::nullopt;
    if (!rest.empty()) port_text = rest.substr(1);
    if (!rest.empty() && port_text.empty()) return std::nullopt;
  } else {
    const std::size_t colon = item.find(':');
    peer.host = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = item.substr(colon + 1);
      if (port_text.empty()) return std::nullopt;
    }
  }
  if (peer.host.empty()) return std::nullopt;
  for (const char c : peer.host) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_' || c == ':';
    if (!ok) return std::nullopt;
  }
  if (!item.starts_with('[') && peer.host.find(':') != std::string::npos) return std::nullopt;
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc{} || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return std::nullopt;
    }
    peer.port = static_cast<std::uint16_t>(port);
  }
  const bool v6 = peer.host.find(':') != std::string::npos;
  peer.url = std::string(scheme) + (v6 ? "[" + peer.host + "]" : peer.host) + ":" +
             std::to_string(peer.port);
  return peer;
}

}  // namespace

std::optional<std::vector<JoinPeer>> ParseJoinPeers(std::string_view text) {
  std::vector<JoinPeer> peers;
  while (true) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    auto peer = ParseJoinPeer(item);
    if (!peer) return std::nullopt;
    peers.push_back(std::move(*peer));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return peers;
}

}  // namespace nbspamd::config
