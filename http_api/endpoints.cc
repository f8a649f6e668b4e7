#include "http_api/endpoints.h"

#include <utility>

namespace nbspamd::http_api {
namespace {

constexpr bool InEnumOrder() {
  for (std::size_t i = 0; i < kEndpoints.size(); ++i) {
    if (kEndpoints[i].endpoint != static_cast<Endpoint>(i)) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kEndpoints must list the endpoints in the order of Endpoint");

// The first '/'-separated segment of `path` after its leading '/', and what follows it.
std::pair<std::string_view, std::string_view> SplitSegment(std::string_view path) {
  path.remove_prefix(1);
  const std::size_t end = path.find('/');
  if (end == std::string_view::npos) return {path, {}};
  return {path.substr(0, end), path.substr(end)};
}

// Whether `path` is `pattern`, an {id} (any {name}) segment of the pattern matching any non-empty
// segment.
bool PathMatches(std::string_view pattern, std::string_view path) {
  if (pattern.find('{') == std::string_view::npos) return path == pattern;
  while (!pattern.empty() && !path.empty()) {
    if (pattern.front() != '/' || path.front() != '/') return false;
    const auto [wanted, pattern_rest] = SplitSegment(pattern);
    const auto [segment, path_rest] = SplitSegment(path);
    if (wanted.starts_with('{') ? segment.empty() : wanted != segment) return false;
    pattern = pattern_rest;
    path = path_rest;
  }
  return pattern.empty() && path.empty();
}

}  // namespace

Endpoint EndpointOfPath(std::string_view path) {
  if (path == "/ui" || path.starts_with("/ui/")) return Endpoint::kConsole;
  for (const EndpointSpec& spec : kEndpoints) {
    if (PathMatches(spec.path, path)) return spec.endpoint;
  }
  return Endpoint::kOther;
}

Endpoint EndpointOf(std::string_view target) {
  return EndpointOfPath(target.substr(0, target.find('?')));
}

std::string_view EndpointName(Endpoint endpoint) {
  const EndpointSpec* spec = SpecOf(endpoint);
  return spec == nullptr ? "other" : spec->path;
}

const EndpointSpec* SpecOf(Endpoint endpoint) {
  const auto index = static_cast<std::size_t>(endpoint);
  return index < kEndpoints.size() ? &kEndpoints[index] : nullptr;
}

}  // namespace nbspamd::http_api
