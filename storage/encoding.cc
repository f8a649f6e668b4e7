#include "storage/encoding.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace nbspamd::storage {
namespace {

std::unexpected<Error> Corrupt(std::string_view what) {
  return MakeError(ErrorCode::kDataLoss, "corrupt " + std::string(what) + " record");
}

void PutFixed64BigEndian(std::string& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

std::uint64_t GetFixed64BigEndian(std::string_view input) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | static_cast<unsigned char>(input[i]);
  return value;
}

// Marks the held-out score at the end of a ledger value (schema 3).
constexpr char kHeldOutTag = 1;
// Marks a retired record, last in a ledger value (schema 5).
constexpr char kRetiredTag = 2;
// Marks a checked-only record, after the held-out score and before the retired mark (schema 7).
constexpr char kCheckedTag = 3;

// A varint that must fit `limit`, read from the front of `input`.
bool GetBounded(std::string_view& input, std::uint64_t limit, std::uint64_t& value) {
  return GetVarint64(input, value) && value <= limit;
}

}  // namespace

void PutVarint64(std::string& out, std::uint64_t value) {
  // Into a buffer, then one append (as LevelDB's PutVarint64): one size check, not one a byte.
  char bytes[10];
  std::size_t n = 0;
  while (value >= 0x80) {
    bytes[n++] = static_cast<char>(value | 0x80);
    value >>= 7;
  }
  bytes[n++] = static_cast<char>(value);
  out.append(bytes, n);
}

bool GetVarint64(std::string_view& input, std::uint64_t& value) {
  value = 0;
  for (unsigned shift = 0; shift <= 63 && !input.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(input.front());
    input.remove_prefix(1);
    if (shift == 63 && byte > 1) return false;  // More than 64 bits.
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

std::string EncodeTokenKey(TokenHash hash) {
  std::string key;
  PutFixed64BigEndian(key, hash);
  return key;
}

std::expected<TokenHash, Error> DecodeTokenKey(std::string_view key) {
  if (key.size() != 8) return Corrupt("token key");
  return GetFixed64BigEndian(key);
}

std::string EncodeTokenCounts(const TokenCounts& counts) {
  std::string value;
  PutVarint64(value, counts.size());
  for (std::uint64_t count : counts) PutVarint64(value, count);
  return value;
}

std::string EncodeDocumentCounts(const std::vector<std::uint64_t>& documents) {
  std::string value;
  PutVarint64(value, documents.size());
  for (std::uint64_t count : documents) PutVarint64(value, count);
  return value;
}

std::expected<std::vector<std::uint64_t>, Error> DecodeDocumentCounts(std::string_view value) {
  // The same layout as a token value.
  auto counts = DecodeTokenCounts(value);
  if (!counts) return MakeError(ErrorCode::kDataLoss, "corrupt base documents record");
  return std::vector<std::uint64_t>(counts->begin(), counts->end());
}

std::expected<TokenCounts, Error> DecodeTokenCounts(std::string_view value) {
  TokenCounts counts;
  if (auto decoded = DecodeTokenCountsInto(value, counts); !decoded) {
    return std::unexpected(decoded.error());
  }
  return counts;
}

std::expected<void, Error> DecodeTokenCountsInto(std::string_view value, TokenCounts& counts) {
  std::uint64_t size = 0;
  if (!GetBounded(value, value.size(), size)) return Corrupt("token count");
  counts.resize(size);
  for (std::uint64_t& count : counts) {
    if (!GetVarint64(value, count)) return Corrupt("token count");
  }
  if (!value.empty()) return Corrupt("token count");
  return {};
}

std::string EncodeModelStats(const model::ModelStats& stats) {
  std::string value;
  PutVarint64(value, stats.classes.size());
  for (const model::ClassStats& c : stats.classes) {
    PutVarint64(value, c.label.size());
    value += c.label;
    PutVarint64(value, c.documents);
    PutVarint64(value, c.tokens);
  }
  PutVarint64(value, stats.vocabulary_size);
  return value;
}

std::expected<model::ModelStats, Error> DecodeModelStats(std::string_view value) {
  model::ModelStats stats;
  std::uint64_t classes = 0;
  if (!GetBounded(value, value.size(), classes)) return Corrupt("model stats");
  stats.classes.resize(classes);
  for (model::ClassStats& c : stats.classes) {
    std::uint64_t length = 0;
    if (!GetVarint64(value, length) || length > value.size()) return Corrupt("model stats");
    c.label = std::string(value.substr(0, length));
    value.remove_prefix(length);
    if (!GetVarint64(value, c.documents) || !GetVarint64(value, c.tokens)) {
      return Corrupt("model stats");
    }
  }
  if (!GetVarint64(value, stats.vocabulary_size) || !value.empty()) return Corrupt("model stats");
  return stats;
}

std::string EncodeLastSeen(std::int64_t learned_at) {
  std::string value;
  PutVarint64(value, static_cast<std::uint64_t>(std::max<std::int64_t>(learned_at, 0)));
  return value;
}

std::expected<std::int64_t, Error> DecodeLastSeen(std::string_view value) {
  std::uint64_t learned_at = 0;
  if (!GetBounded(value, std::numeric_limits<std::int64_t>::max(), learned_at) || !value.empty()) {
    return Corrupt("last-seen");
  }
  return static_cast<std::int64_t>(learned_at);
}

std::string EncodeLedgerEntry(const model::LedgerEntry& entry) {
  std::string value;
  PutVarint64(value, entry.label.size());
  value += entry.label;
  PutVarint64(value, entry.tokens.size());
  for (const BagEntry& token : entry.tokens) {
    PutFixed64BigEndian(value, token.hash);
    PutVarint64(value, token.count);
  }
  PutVarint64(value, entry.origin.source.size());
  value += entry.origin.source;
  PutVarint64(value,
              static_cast<std::uint64_t>(std::max<std::int64_t>(entry.origin.learned_at, 0)));
  if (entry.held_out) {
    value.push_back(kHeldOutTag);
    PutVarint64(value, entry.held_out->scale);
    PutFixed64BigEndian(value, std::bit_cast<std::uint64_t>(entry.held_out->score));
  }
  if (entry.checked) value.push_back(kCheckedTag);
  if (entry.retired) value.push_back(kRetiredTag);
  return value;
}

std::string EncodeFeedbackHistogram(const model::FeedbackHistogram& histogram) {
  std::string value;
  PutVarint64(value, histogram.layout.score_scale);
  PutVarint64(value, histogram.layout.bins);
  PutFixed64BigEndian(value, std::bit_cast<std::uint64_t>(histogram.layout.low));
  PutFixed64BigEndian(value, std::bit_cast<std::uint64_t>(histogram.layout.high));
  for (std::size_t b = 0; b < histogram.layout.bins; ++b) {
    PutVarint64(value, histogram.spam[b]);
    PutVarint64(value, histogram.ham[b]);
  }
  return value;
}

std::expected<model::FeedbackHistogram, Error> DecodeFeedbackHistogram(std::string_view value) {
  model::FeedbackHistogram histogram;
  std::uint64_t scale = 0, bins = 0;
  if (!GetBounded(value, std::numeric_limits<std::uint32_t>::max(), scale) ||
      !GetBounded(value, value.size() / 2, bins) || value.size() < 16) {
    return Corrupt("calibration");
  }
  histogram.layout.score_scale = static_cast<std::uint32_t>(scale);
  histogram.layout.bins = static_cast<std::uint32_t>(bins);
  histogram.layout.low = std::bit_cast<double>(GetFixed64BigEndian(value));
  histogram.layout.high = std::bit_cast<double>(GetFixed64BigEndian(value.substr(8)));
  value.remove_prefix(16);
  histogram.spam.assign(bins, 0);
  histogram.ham.assign(bins, 0);
  for (std::size_t b = 0; b < bins; ++b) {
    if (!GetVarint64(value, histogram.spam[b]) || !GetVarint64(value, histogram.ham[b])) {
      return Corrupt("calibration");
    }
  }
  if (!value.empty()) return Corrupt("calibration");
  return histogram;
}

std::string SourceKeyPrefix(std::string_view source, std::int64_t learned_at) {
  std::string key(source);
  key += '\0';
  PutFixed64BigEndian(key, static_cast<std::uint64_t>(std::max<std::int64_t>(learned_at, 0)));
  return key;
}

std::string EncodeSourceKey(std::string_view id, const model::LearnOrigin& origin) {
  std::string key = SourceKeyPrefix(origin.source, origin.learned_at);
  key += id;
  return key;
}

std::expected<SourceKey, Error> DecodeSourceKey(std::string_view key) {
  const std::size_t zero = key.find('\0');
  if (zero == std::string_view::npos || key.size() < zero + 1 + 8) return Corrupt("source index");
  SourceKey decoded;
  decoded.source = std::string(key.substr(0, zero));
  key.remove_prefix(zero + 1);
  decoded.learned_at = static_cast<std::int64_t>(GetFixed64BigEndian(key) & 0x7fffffffffffffff);
  decoded.id = std::string(key.substr(8));
  return decoded;
}

std::expected<model::LedgerEntry, Error> DecodeLedgerEntry(std::string_view value) {
  model::LedgerEntry entry;
  std::uint64_t length = 0;
  if (!GetVarint64(value, length) || length > value.size()) return Corrupt("ledger");
  entry.label = std::string(value.substr(0, length));
  value.remove_prefix(length);
  std::uint64_t tokens = 0;
  if (!GetBounded(value, value.size() / 9, tokens)) return Corrupt("ledger");
  entry.tokens.resize(tokens);
  for (BagEntry& token : entry.tokens) {
    std::uint64_t count = 0;
    if (value.size() < 8) return Corrupt("ledger");
    token.hash = GetFixed64BigEndian(value);
    value.remove_prefix(8);
    if (!GetBounded(value, std::numeric_limits<std::uint32_t>::max(), count)) {
      return Corrupt("ledger");
    }
    token.count = static_cast<std::uint32_t>(count);
  }
  if (value.empty()) return entry;  // Schema 1: no origin.
  std::uint64_t source_length = 0;
  if (!GetVarint64(value, source_length) || source_length > value.size()) return Corrupt("ledger");
  entry.origin.source = std::string(value.substr(0, source_length));
  value.remove_prefix(source_length);
  std::uint64_t learned_at = 0;
  if (!GetBounded(value, std::numeric_limits<std::int64_t>::max(), learned_at)) {
    return Corrupt("ledger");
  }
  entry.origin.learned_at = static_cast<std::int64_t>(learned_at);
  if (!value.empty() && value.front() == kHeldOutTag) {
    value.remove_prefix(1);
    std::uint64_t scale = 0;
    if (!GetBounded(value, std::numeric_limits<std::uint32_t>::max(), scale) || value.size() < 8) {
      return Corrupt("ledger");
    }
    entry.held_out = model::HeldOutScore{static_cast<std::uint32_t>(scale),
                                         std::bit_cast<double>(GetFixed64BigEndian(value))};
    value.remove_prefix(8);
  }
  if (!value.empty() && value.front() == kCheckedTag) {
    value.remove_prefix(1);
    if (!entry.tokens.empty()) return Corrupt("ledger");  // A checked record counted nothing.
    entry.checked = true;
  }
  if (!value.empty() && value.front() == kRetiredTag) {
    value.remove_prefix(1);
    if (!entry.tokens.empty()) return Corrupt("ledger");  // A retired record has no tokens.
    entry.retired = true;
  }
  if (!value.empty()) return Corrupt("ledger");
  return entry;
}

std::string UserKeyPrefix(std::string_view user) {
  std::string key(user);
  key += '\0';
  return key;
}

std::string UserKeyEnd(std::string_view user) {
  std::string key(user);
  key += '\1';
  return key;
}

std::string UserKindPrefix(std::string_view user, char kind) {
  std::string key = UserKeyPrefix(user);
  key += kind;
  return key;
}

std::string UserStatsKey(std::string_view user) { return UserKindPrefix(user, kUserStatsKind); }

std::string UserTokenKey(std::string_view user, TokenHash hash) {
  std::string key = UserKindPrefix(user, kUserTokenKind);
  PutFixed64BigEndian(key, hash);
  return key;
}

std::string UserBaseKey(std::string_view user, TokenHash hash) {
  std::string key = UserKindPrefix(user, kUserBaseKind);
  PutFixed64BigEndian(key, hash);
  return key;
}

std::string UserBaseDocumentsKey(std::string_view user) {
  return UserKindPrefix(user, kUserBaseDocumentsKind);
}

std::string UserSeenKey(std::string_view user, TokenHash hash) {
  std::string key = UserKindPrefix(user, kUserSeenKind);
  PutFixed64BigEndian(key, hash);
  return key;
}

std::string UserLedgerKey(std::string_view user, std::string_view id) {
  std::string key = UserKindPrefix(user, kUserLedgerKind);
  key += id;
  return key;
}

std::string UserSourceKey(std::string_view user, std::string_view id,
                          const model::LearnOrigin& origin) {
  return UserKindPrefix(user, kUserSourceKind) + EncodeSourceKey(id, origin);
}

std::expected<UserKey, Error> DecodeUserKey(std::string_view key) {
  const std::size_t zero = key.find('\0');
  if (zero == 0 || zero == std::string_view::npos || zero + 1 >= key.size()) {
    return Corrupt("user layer key");
  }
  return UserKey{key.substr(0, zero), key[zero + 1], key.substr(zero + 2)};
}

void PutBagFamilies(std::string& out, std::span<const BagEntry> bag) {
  const auto grams = static_cast<std::uint64_t>(std::count_if(
      bag.begin(), bag.end(), [](const BagEntry& e) { return e.family != TokenFamily::kWord; }));
  PutVarint64(out, grams);
  if (grams == 0) return;
  // A byte of the bitmap is made in a register from its eight entries, then stored: setting bits
  // one by one through the string's bytes reloaded the string's data (a char may alias anything)
  // and was 1% of the daemon's samples under /classify load.
  const std::size_t at = out.size();
  out.resize(at + (bag.size() + 7) / 8);
  char* const bitmap = out.data() + at;
  for (std::size_t first = 0; first < bag.size(); first += 8) {
    const std::size_t end = std::min(bag.size(), first + 8);
    unsigned byte = 0;
    for (std::size_t i = first; i < end; ++i) {
      byte |= static_cast<unsigned>(bag[i].family == TokenFamily::kCharNgram) << (i - first);
    }
    bitmap[first / 8] = static_cast<char>(byte);
  }
}

bool GetBagFamilies(std::string_view& input, std::span<BagEntry> bag) {
  std::uint64_t grams = 0;
  if (!GetVarint64(input, grams) || grams > bag.size()) return false;
  if (grams == 0) return true;
  const std::size_t bytes = (bag.size() + 7) / 8;
  if (input.size() < bytes) return false;
  std::uint64_t set = 0;
  for (std::size_t i = 0; i < bytes; ++i) {
    const auto byte = static_cast<unsigned char>(input[i]);
    for (unsigned bit = 0; bit < 8; ++bit) {
      if ((byte & (1u << bit)) == 0) continue;
      const std::size_t entry = 8 * i + bit;
      if (entry >= bag.size()) return false;
      bag[entry].family = TokenFamily::kCharNgram;
      ++set;
    }
  }
  input.remove_prefix(bytes);
  return set == grams;
}

}  // namespace nbspamd::storage
