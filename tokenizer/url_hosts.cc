#include "tokenizer/url_hosts.h"

#include <libpsl.h>

#include <algorithm>
#include <array>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common/token_hash.h"
#include "common/utf8.h"
#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

constexpr std::array<std::string_view, 3> kSchemes = {"http://", "https://", "ftp://"};

char Lower(char c) { return AsciiLower(c); }

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(text[i]) != prefix[i]) return false;
  }
  return true;
}

// Characters that end the authority part of a URL.
bool EndsAuthority(char c) {
  switch (c) {
    case '/':
    case '?':
    case '#':
    case '\\':
    case ' ':
    case '\t':
    case '\r':
    case '\n':
    case '"':
    case '\'':
    case '<':
    case '>':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
    case ',':
    case ';':
    case '|':
    case '^':
    case '`':
      return true;
    default:
      return false;
  }
}

// A valid host from an authority ("user@Host.Example.com:80" → "host.example.com"), or "".
std::string HostOfAuthority(std::string_view authority) {
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);
  }
  if (const std::size_t colon = authority.find(':'); colon != std::string_view::npos) {
    authority = authority.substr(0, colon);
  }
  while (!authority.empty() && authority.back() == '.') authority.remove_suffix(1);
  if (authority.empty() || authority.size() > 253 || authority.front() == '.' ||
      authority.find('.') == std::string_view::npos) {
    return "";
  }
  std::string host;
  host.reserve(authority.size());
  for (char c : authority) {
    const auto u = static_cast<unsigned char>(c);
    const bool allowed = IsAsciiAlnum(c) || c == '-' || c == '.' || u >= 0x80;
    if (!allowed) return "";
    host.push_back(Lower(c));
  }
  // Non-ASCII bytes are allowed for internationalised names, but only as UTF-8: plain text is
  // searched as raw bytes, and tokens must be UTF-8.
  if (host.find("..") != std::string::npos || !IsValidUtf8(host)) return "";
  return host;
}

std::string_view Authority(std::string_view rest) {
  std::size_t end = 0;
  while (end < rest.size() && !EndsAuthority(rest[end])) ++end;
  return rest.substr(0, end);
}

// Whether text[i] could start a URL: h, f or w in either case (the first letter of every scheme
// and of "www.") at the start of a word (after no ASCII letter or digit).
bool MayStartUrl(std::string_view text, std::size_t i) {
  const char lower = Lower(text[i]);
  return (lower == 'h' || lower == 'f' || lower == 'w') && (i == 0 || !IsAsciiAlnum(text[i - 1]));
}

}  // namespace

namespace url_hosts_internal {

std::size_t NextUrlStart(std::string_view text, std::size_t from) {
  std::size_t i = from;
  if (i == 0 && !text.empty()) {
    if (MayStartUrl(text, 0)) return 0;
    i = 1;
  }
#if defined(__SSE2__)
  const __m128i case_bit = _mm_set1_epi8(0x20);
  // Whether each byte of `bytes`, less `low`, is within [0, count): signed compares, so a byte of
  // 0x80 or above (negative after the subtraction, or beyond `count`) is never in range.
  const auto in_range = [](__m128i bytes, char low, char count) {
    const __m128i offset = _mm_sub_epi8(bytes, _mm_set1_epi8(low));
    return _mm_and_si128(_mm_cmpgt_epi8(offset, _mm_set1_epi8(-1)),
                         _mm_cmplt_epi8(offset, _mm_set1_epi8(count)));
  };
  for (; i + 16 <= text.size(); i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i before = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i - 1));
    const __m128i lower = _mm_or_si128(bytes, case_bit);
    const __m128i letter = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(lower, _mm_set1_epi8('h')),
                                                     _mm_cmpeq_epi8(lower, _mm_set1_epi8('f'))),
                                        _mm_cmpeq_epi8(lower, _mm_set1_epi8('w')));
    const __m128i alnum_before =
        _mm_or_si128(in_range(_mm_or_si128(before, case_bit), 'a', 26), in_range(before, '0', 10));
    if (const int mask = _mm_movemask_epi8(_mm_andnot_si128(alnum_before, letter)); mask != 0) {
      return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
    }
  }
#endif
  while (i < text.size() && !MayStartUrl(text, i)) ++i;
  return std::min(i, text.size());
}

}  // namespace url_hosts_internal

using url_hosts_internal::NextUrlStart;

bool IsIpv4Address(std::string_view host) {
  int parts = 0;
  std::size_t digits = 0;
  for (char c : host) {
    if (c == '.') {
      if (digits == 0 || digits > 3) return false;
      ++parts;
      digits = 0;
    } else if (c >= '0' && c <= '9') {
      ++digits;
    } else {
      return false;
    }
  }
  return parts == 3 && digits > 0 && digits <= 3;
}

std::string UrlHost(std::string_view url) {
  while (!url.empty() && (url.front() == ' ' || url.front() == '\t')) url.remove_prefix(1);
  for (std::string_view scheme : kSchemes) {
    if (StartsWithNoCase(url, scheme)) return HostOfAuthority(Authority(url.substr(scheme.size())));
  }
  if (StartsWithNoCase(url, "www.")) return HostOfAuthority(Authority(url));
  return "";
}

void FindUrlHosts(std::string_view text, std::vector<std::string>& hosts, std::size_t limit) {
  std::size_t found = 0;
  for (std::size_t i = 0; i < text.size() && found < limit; ++i) {
    i = NextUrlStart(text, i);
    if (i == text.size()) break;
    const std::string_view rest = text.substr(i);
    std::size_t skip = 0;
    for (std::string_view scheme : kSchemes) {
      if (StartsWithNoCase(rest, scheme)) skip = scheme.size();
    }
    if (skip == 0 && !StartsWithNoCase(rest, "www.")) continue;
    const std::string_view authority = Authority(rest.substr(skip));
    std::string host = HostOfAuthority(authority);
    if (!host.empty()) {
      hosts.push_back(std::move(host));
      ++found;
    }
    i += skip + authority.size();
  }
}

std::string RegistrableDomain(std::string_view host) {
  if (host.empty() || IsIpv4Address(host)) return "";
  // Direct-mapped: a host's slot is picked by its hash, and a new host takes the slot over. One
  // probe into a flat array, where a node-based map's chains missed the cache on most lookups.
  struct Slot {
    TokenHash hash = 0;
    bool used = false;
    std::string host;
    std::string domain;
  };
  constexpr std::size_t kSlots = 4096;
  thread_local std::vector<Slot> cache(kSlots);
  const TokenHash hash = HashToken(host);
  Slot& slot = cache[static_cast<std::size_t>(hash) & (kSlots - 1)];
  if (slot.used && slot.hash == hash && slot.host == host) return slot.domain;
  slot.host.assign(host);
  const char* domain = psl_registrable_domain(psl_builtin(), slot.host.c_str());
  slot.domain.assign(domain != nullptr ? domain : "");
  slot.hash = hash;
  slot.used = true;
  return slot.domain;
}

}  // namespace nbspamd::tokenizer
