#include "http_api/endpoints.h"

namespace nbspamd::http_api {
namespace {

constexpr bool InEnumOrder() {
  for (std::size_t i = 0; i < kEndpoints.size(); ++i) {
    if (kEndpoints[i].endpoint != static_cast<Endpoint>(i)) return false;
  }
  return true;
}
static_assert(InEnumOrder(), "kEndpoints must list the endpoints in the order of Endpoint");

}  // namespace

Endpoint EndpointOfPath(std::string_view path) {
  for (const EndpointSpec& spec : kEndpoints) {
    if (path == spec.path) return spec.endpoint;
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
