#include "history/scan_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>
#include <vector>

#include "storage/encoding.h"

namespace nbspamd::history {
namespace {

using storage::GetVarint64;
using storage::PutVarint64;

constexpr std::uint8_t kHasScore = 1;
constexpr std::uint8_t kHasConfidence = 2;
constexpr std::uint64_t kMaxTopTokens = 10'000;
constexpr std::uint64_t kMaxBagEntries = 100'000'000;
constexpr std::uint8_t kMaxBodyDigestBytes = 64;

void PutString(std::string& out, std::string_view text) {
  PutVarint64(out, text.size());
  out.append(text);
}

void PutDouble(std::string& out, double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(bits >> (56 - 8 * i));
  out.append(bytes, 8);
}

// Reads from the front of the input, remembering the first failure.
class Reader {
 public:
  explicit Reader(std::string_view input) : input_(input) {}

  bool Byte(std::uint8_t& value) {
    if (!ok_ || input_.empty()) return ok_ = false;
    value = static_cast<std::uint8_t>(input_.front());
    input_.remove_prefix(1);
    return true;
  }
  bool Varint(std::uint64_t& value) {
    if (!ok_ || !GetVarint64(input_, value)) return ok_ = false;
    return true;
  }
  bool String(std::string& value) {
    std::uint64_t size = 0;
    if (!Varint(size)) return false;  // Also when an earlier read failed.
    if (size > input_.size()) return ok_ = false;
    value.assign(input_.substr(0, size));
    input_.remove_prefix(size);
    return true;
  }
  bool Double(double& value) {
    if (!ok_ || input_.size() < 8) return ok_ = false;
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | static_cast<std::uint8_t>(input_[i]);
    input_.remove_prefix(8);
    value = std::bit_cast<double>(bits);
    return true;
  }
  // The next `size` bytes, consumed; fails when fewer are left.
  bool Bytes(std::size_t size, std::string_view& value) {
    if (!ok_ || input_.size() < size) return ok_ = false;
    value = input_.substr(0, size);
    input_.remove_prefix(size);
    return true;
  }
  // The token families of `bag` (storage::GetBagFamilies).
  bool BagFamilies(std::span<BagEntry> bag) {
    if (!ok_ || !storage::GetBagFamilies(input_, bag)) return ok_ = false;
    return true;
  }
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] bool done() const { return ok_ && input_.empty(); }

 private:
  std::string_view input_;
  bool ok_ = true;
};

bool ValidCount(std::uint64_t count) { return count != 0 && count <= UINT32_MAX; }

// Format 1's bag: each hash as the varint difference from the one before, then its count.
bool ReadDeltaBag(Reader& in, std::vector<BagEntry>& bag) {
  TokenHash previous = 0;
  for (BagEntry& entry : bag) {
    std::uint64_t delta = 0;
    std::uint64_t count = 0;
    if (!in.Varint(delta) || !in.Varint(count) || !ValidCount(count)) return false;
    previous += delta;  // Wraps only for a malformed value: then the order check fails.
    entry = {previous, static_cast<std::uint32_t>(count)};
  }
  return true;
}

// The bag log's layout: the hashes as 8-byte little-endian words,
// then the counts as varints.
bool ReadFixedBag(Reader& in, std::vector<BagEntry>& bag) {
  std::string_view hashes;
  if (!in.Bytes(8 * bag.size(), hashes)) return false;
  for (std::size_t i = 0; i < bag.size(); ++i) {
    bag[i].hash = storage::DecodeFixed64(hashes.data() + 8 * i);
  }
  for (BagEntry& entry : bag) {
    std::uint64_t count = 0;
    if (!in.Varint(count) || !ValidCount(count)) return false;
    entry.count = static_cast<std::uint32_t>(count);
  }
  return true;
}

std::unexpected<Error> Malformed(std::string_view what) {
  return MakeError(ErrorCode::kDataLoss, "malformed scan " + std::string(what));
}

// A bag: varint entries, then format 1's or the fixed layout; sorted hashes, each once.
bool ReadBag(Reader& in, std::size_t value_size, bool fixed, std::vector<BagEntry>& bag) {
  std::uint64_t entries = 0;
  if (!in.Varint(entries) || entries > kMaxBagEntries || entries > value_size) return false;
  bag.resize(entries);
  if (!(fixed ? ReadFixedBag(in, bag) : ReadDeltaBag(in, bag))) return false;
  for (std::size_t i = 1; i < bag.size(); ++i) {
    if (bag[i].hash <= bag[i - 1].hash) return false;
  }
  return true;
}

void PutLocation(std::string& out, const BagLocation& where) {
  PutString(out, where.segment);
  PutVarint64(out, where.offset);
  PutVarint64(out, where.size);
}

bool ReadLocation(Reader& in, BagLocation& where) {
  std::uint64_t size = 0;
  if (!(in.String(where.segment) && in.Varint(where.offset) && in.Varint(size)) ||
      size > UINT32_MAX) {
    return false;
  }
  where.size = static_cast<std::uint32_t>(size);
  return true;
}

// The hashes as one block of 8-byte little-endian words (random: a varint would be longer), then
// the counts, nearly all one byte. Sized once, then written in place.
void PutBag(std::string& out, std::span<const BagEntry> bag) {
  PutVarint64(out, bag.size());
  std::size_t count_bytes = bag.size();
  for (const BagEntry& entry : bag) {
    for (std::uint32_t rest = entry.count >> 7; rest != 0; rest >>= 7) ++count_bytes;
  }
  const std::size_t at = out.size();
  out.resize(at + 8 * bag.size() + count_bytes);
  char* next = out.data() + at;
  for (const BagEntry& entry : bag) {
    storage::EncodeFixed64(next, entry.hash);
    next += 8;
  }
  for (const BagEntry& entry : bag) {
    std::uint32_t count = entry.count;
    while (count >= 0x80) {
      *next++ = static_cast<char>(count | 0x80);
      count >>= 7;
    }
    *next++ = static_cast<char>(count);
  }
}

// A summary's fields after its format byte, up to where its detail is.
bool ReadSummaryFields(Reader& in, ScanSummary& summary) {
  std::uint64_t time = 0;
  std::uint8_t flags = 0;
  in.Varint(time);
  summary.time_ms = static_cast<std::int64_t>(time);
  for (std::string* text : {&summary.front_end, &summary.user, &summary.message_key, &summary.label,
                            &summary.verdict}) {
    in.String(*text);
  }
  in.Byte(flags);
  if ((flags & kHasScore) != 0) in.Double(summary.score.emplace());
  if ((flags & kHasConfidence) != 0) in.Double(summary.spam_confidence.emplace());
  in.Varint(summary.size);
  in.Varint(summary.tokens);
  ScanFacts& facts = summary.facts;
  for (std::string* fact :
       {&facts.message_id, &facts.from_domain, &facts.subject, &facts.client, &facts.recipients}) {
    in.String(*fact);
  }
  return in.ok() && (flags & ~(kHasScore | kHasConfidence)) == 0;
}

}  // namespace

void AppendScanSummary(std::string& out, const ScanSummary& summary) {
  out.push_back(static_cast<char>(kScanFormat));
  PutVarint64(out, static_cast<std::uint64_t>(summary.time_ms));
  PutString(out, summary.front_end);
  PutString(out, summary.user);
  PutString(out, summary.message_key);
  PutString(out, summary.label);
  PutString(out, summary.verdict);
  const std::uint8_t flags =
      (summary.score ? kHasScore : 0) | (summary.spam_confidence ? kHasConfidence : 0);
  out.push_back(static_cast<char>(flags));
  if (summary.score) PutDouble(out, *summary.score);
  if (summary.spam_confidence) PutDouble(out, *summary.spam_confidence);
  PutVarint64(out, summary.size);
  PutVarint64(out, summary.tokens);
  const ScanFacts& facts = summary.facts;
  for (const std::string* fact :
       {&facts.message_id, &facts.from_domain, &facts.subject, &facts.client, &facts.recipients}) {
    PutString(out, *fact);
  }
}

void AppendDetailLocation(std::string& out, const BagLocation& detail) { PutLocation(out, detail); }

std::expected<StoredSummary, Error> DecodeScanSummary(std::string_view scan_id,
                                                      std::string_view value) {
  Reader in(value);
  StoredSummary stored;
  stored.summary.scan_id = std::string(scan_id);
  std::uint8_t format = 0;
  if (!in.Byte(format) || format < 1 || format > kScanFormat) return Malformed("summary format");
  if (!ReadSummaryFields(in, stored.summary)) return Malformed("summary");
  if (format == kScanFormat && !ReadLocation(in, stored.detail_location.emplace())) {
    return Malformed("summary's detail location");
  }
  if (!in.done()) return Malformed("summary");
  return stored;
}

bool SummaryUserAndKey(std::string_view value, std::string_view& user,
                       std::string_view& message_key) {
  if (value.empty()) return false;
  value.remove_prefix(1);  // The format byte.
  std::uint64_t skipped = 0;
  if (!GetVarint64(value, skipped)) return false;  // time_ms.
  std::string_view fields[3];                      // front_end, user, message_key.
  for (std::string_view& field : fields) {
    std::uint64_t size = 0;
    if (!GetVarint64(value, size) || size > value.size()) return false;
    field = value.substr(0, size);
    value.remove_prefix(size);
  }
  user = fields[1];
  message_key = fields[2];
  return true;
}

std::expected<std::vector<BagEntry>, Error> DecodeScanBag(std::string_view value) {
  Reader in(value);
  std::vector<BagEntry> bag;
  if (!ReadBag(in, value.size(), /*fixed=*/true, bag)) return Malformed("bag");
  if (!in.done()) return Malformed("bag");
  return bag;
}

void AppendScanDetail(std::string& out, const ScanDetail& detail) {
  const bool families = std::any_of(detail.bag.begin(), detail.bag.end(), [](const BagEntry& e) {
    return e.family != TokenFamily::kWord;
  });
  out.push_back(static_cast<char>(families ? kScanDetailFormat : 4));
  PutVarint64(out, detail.top.size());
  for (const ScanToken& token : detail.top) {
    PutString(out, token.text);
    out.push_back(static_cast<char>(token.source));
    PutVarint64(out, token.count);
    PutDouble(out, token.weight);
  }
  PutBag(out, detail.bag);
  // Format 4: the body digest (body_digest.h), a length byte then its bytes (0: none).
  out.push_back(static_cast<char>(detail.body_digest.size()));
  out.append(detail.body_digest);
  // Format 5: the bag's token families.
  if (families) storage::PutBagFamilies(out, detail.bag);
}

std::expected<StoredDetail, Error> DecodeScanDetail(std::string_view value) {
  Reader in(value);
  StoredDetail stored;
  ScanDetail& detail = stored.detail;
  std::uint8_t format = 0;
  if (!in.Byte(format) || format < 1 || format > kScanDetailFormat) {
    return Malformed("detail format");
  }
  std::uint64_t top = 0;
  if (!in.Varint(top) || top > kMaxTopTokens) return Malformed("detail");
  detail.top.resize(top);
  for (ScanToken& token : detail.top) {
    std::uint8_t source = 0;
    std::uint64_t count = 0;
    if (!(in.String(token.text) && in.Byte(source) && in.Varint(count) &&
          in.Double(token.weight)) ||
        source > static_cast<std::uint8_t>(kLastTokenSource) || count > UINT32_MAX) {
      return Malformed("detail token");
    }
    token.source = static_cast<TokenSource>(source);
    token.count = static_cast<std::uint32_t>(count);
  }
  if (format == 2) {
    if (!ReadLocation(in, stored.bag_location.emplace())) return Malformed("detail bag location");
  } else if (!ReadBag(in, value.size(), /*fixed=*/format >= 3, detail.bag)) {
    return Malformed("detail bag");
  }
  if (format >= 4) {
    std::uint8_t size = 0;
    std::string_view digest;
    if (!in.Byte(size) || size > kMaxBodyDigestBytes || !in.Bytes(size, digest)) {
      return Malformed("detail body digest");
    }
    detail.body_digest.assign(digest);
  }
  if (format >= 5 && !in.BagFamilies(detail.bag)) return Malformed("detail token families");
  if (!in.done()) return Malformed("detail");
  return stored;
}

EncodedScan::EncodedScan(const ScanRecord& record) {
  const std::string& id = record.summary.scan_id;
  bytes_.reserve(id.size() + 256 + record.detail.top.size() * 32 + record.detail.bag.size() * 9 +
                 record.detail.bag.size() / 8);
  bytes_.append(id);
  AppendScanSummary(bytes_, record.summary);
  id_size_ = static_cast<std::uint32_t>(id.size());
  summary_size_ = static_cast<std::uint32_t>(bytes_.size() - id.size());
  AppendScanDetail(bytes_, record.detail);
}

std::expected<ScanSummary, Error> EncodedScan::DecodeSummary() const {
  return DecodeSummary(id(), summary());
}

std::expected<ScanSummary, Error> EncodedScan::DecodeSummary(std::string_view id,
                                                             std::string_view summary_bytes) {
  if (summary_bytes.empty()) return Malformed("summary");
  Reader in(summary_bytes.substr(1));  // After the format byte.
  ScanSummary summary;
  summary.scan_id = std::string(id);
  if (!ReadSummaryFields(in, summary) || !in.done()) return Malformed("summary");
  return summary;
}

std::expected<ScanRecord, Error> EncodedScan::Decode() const {
  auto summary = DecodeSummary();
  if (!summary) return std::unexpected(std::move(summary.error()));
  auto detail = DecodeScanDetail(detail_bytes());
  if (!detail) return std::unexpected(std::move(detail.error()));
  return ScanRecord{std::move(*summary), std::move(detail->detail)};
}

}  // namespace nbspamd::history
