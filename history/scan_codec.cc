#include "history/scan_codec.h"

#include <bit>
#include <cstring>
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

void PutString(std::string& out, std::string_view text) {
  PutVarint64(out, text.size());
  out.append(text);
}

void PutDouble(std::string& out, double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(bits >> shift));
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

}  // namespace

std::string EncodeScanSummary(const ScanSummary& summary) {
  std::string out;
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
  return out;
}

std::expected<ScanSummary, Error> DecodeScanSummary(std::string_view scan_id,
                                                    std::string_view value) {
  Reader in(value);
  ScanSummary summary;
  summary.scan_id = std::string(scan_id);
  std::uint8_t format = 0;
  if (!in.Byte(format) || format != kScanFormat) return Malformed("summary format");
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
  if (!in.done() || (flags & ~(kHasScore | kHasConfidence)) != 0) return Malformed("summary");
  return summary;
}

std::string EncodeScanBag(std::span<const BagEntry> bag) {
  std::string out;
  out.reserve(10 + bag.size() * 9);
  PutVarint64(out, bag.size());
  // The hashes as one block of 8-byte little-endian words (random: a varint would be longer),
  // then the counts, nearly all one byte.
  const std::size_t hashes_at = out.size();
  out.resize(hashes_at + 8 * bag.size());
  char* hash_bytes = out.data() + hashes_at;
  for (const BagEntry& entry : bag) {
    storage::EncodeFixed64(hash_bytes, entry.hash);
    hash_bytes += 8;
  }
  for (const BagEntry& entry : bag) {
    if (entry.count < 0x80) {
      out.push_back(static_cast<char>(entry.count));
    } else {
      PutVarint64(out, entry.count);
    }
  }
  return out;
}

std::expected<std::vector<BagEntry>, Error> DecodeScanBag(std::string_view value) {
  Reader in(value);
  std::vector<BagEntry> bag;
  if (!ReadBag(in, value.size(), /*fixed=*/true, bag)) return Malformed("bag");
  if (!in.done()) return Malformed("bag");
  return bag;
}

std::string EncodeScanDetail(const ScanDetail& detail, const BagLocation& bag) {
  std::string out;
  out.reserve(32 + detail.top.size() * 48);
  out.push_back(static_cast<char>(kScanDetailFormat));
  PutVarint64(out, detail.top.size());
  for (const ScanToken& token : detail.top) {
    PutString(out, token.text);
    out.push_back(static_cast<char>(token.source));
    PutVarint64(out, token.count);
    PutDouble(out, token.weight);
  }
  PutString(out, bag.segment);
  PutVarint64(out, bag.offset);
  PutVarint64(out, bag.size);
  return out;
}

std::expected<StoredDetail, Error> DecodeScanDetail(std::string_view value) {
  Reader in(value);
  StoredDetail stored;
  ScanDetail& detail = stored.detail;
  std::uint8_t format = 0;
  if (!in.Byte(format) || format < kScanFormat || format > kScanDetailFormat) {
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
        source > static_cast<std::uint8_t>(TokenSource::kMeta) || count > UINT32_MAX) {
      return Malformed("detail token");
    }
    token.source = static_cast<TokenSource>(source);
    token.count = static_cast<std::uint32_t>(count);
  }
  if (format == kScanDetailFormat) {
    BagLocation& bag = stored.bag_location.emplace();
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    if (!(in.String(bag.segment) && in.Varint(offset) && in.Varint(size)) || size > UINT32_MAX) {
      return Malformed("detail bag location");
    }
    bag.offset = offset;
    bag.size = static_cast<std::uint32_t>(size);
  } else if (!ReadBag(in, value.size(), /*fixed=*/false, detail.bag)) {
    return Malformed("detail bag");
  }
  if (!in.done()) return Malformed("detail");
  return stored;
}

}  // namespace nbspamd::history
