#include "http_server/request_id.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>

namespace nbspamd::http_server {

bool IsUsableRequestId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  return std::ranges::all_of(id, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string NewRequestId() {
  static const std::uint64_t prefix = std::random_device{}() & 0xffffffu;
  static std::atomic<std::uint64_t> counter = 0;
  char id[32];
  std::snprintf(id, sizeof id, "%06llx%010llx", static_cast<unsigned long long>(prefix),
                static_cast<unsigned long long>(counter.fetch_add(1, std::memory_order_relaxed)));
  return id;
}

}  // namespace nbspamd::http_server
