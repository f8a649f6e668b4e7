#include "replication/stream_codec.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

#include "storage/encoding.h"

namespace nbspamd::replication {
namespace {

void PutVarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Reads a varint of at most `limit` from the front of `input`. False when truncated, too long or
// over the limit.
bool GetVarint(std::string_view& input, std::uint64_t limit, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift <= 63 && !input.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(input.front());
    input.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value <= limit;
  }
  return false;
}

void PutString(std::string& out, std::string_view text) {
  PutVarint(out, text.size());
  out.append(text);
}

bool GetString(std::string_view& input, std::string& text) {
  std::uint64_t size = 0;
  // The limit is what is left once the length itself has been read.
  if (!GetVarint(input, std::numeric_limits<std::uint64_t>::max(), size) || size > input.size()) {
    return false;
  }
  text.assign(input.substr(0, size));
  input.remove_prefix(size);
  return true;
}

void PutFixed64BigEndian(std::string& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

std::uint64_t GetFixed64BigEndian(std::string_view input) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = value << 8 | static_cast<unsigned char>(input[i]);
  return value;
}

std::string EncodeLearned(const StreamEvent& event) {
  std::string out;
  PutString(out, event.label);
  PutVarint(out, event.tokens.size());
  for (const BagEntry& token : event.tokens) {
    PutFixed64BigEndian(out, token.hash);
    PutVarint(out, token.count);
  }
  PutString(out, event.origin.source);
  PutVarint(out, static_cast<std::uint64_t>(std::max<std::int64_t>(event.origin.learned_at, 0)));
  return out;
}

bool DecodeLearned(std::string_view input, StreamEvent& event) {
  if (!GetString(input, event.label)) return false;
  std::uint64_t tokens = 0;
  if (!GetVarint(input, input.size() / 9, tokens)) return false;
  event.tokens.resize(tokens);
  for (BagEntry& token : event.tokens) {
    if (input.size() < 8) return false;
    token.hash = GetFixed64BigEndian(input);
    input.remove_prefix(8);
    std::uint64_t count = 0;
    if (!GetVarint(input, std::numeric_limits<std::uint32_t>::max(), count)) return false;
    token.count = static_cast<std::uint32_t>(count);
  }
  if (input.empty()) return true;  // No origin: {"", 0}.
  std::uint64_t learned_at = 0;
  if (!GetString(input, event.origin.source) ||
      !GetVarint(input, std::numeric_limits<std::int64_t>::max(), learned_at)) {
    return false;
  }
  event.origin.learned_at = static_cast<std::int64_t>(learned_at);
  return input.empty();
}

}  // namespace

std::string EncodeTokenFamilies(const StreamEvent& event) {
  std::string out;
  if (event.kind == StreamEvent::Kind::kLearn &&
      std::any_of(event.tokens.begin(), event.tokens.end(),
                  [](const BagEntry& token) { return token.family != TokenFamily::kWord; })) {
    storage::PutBagFamilies(out, event.tokens);
  }
  return out;
}

std::expected<void, Error> DecodeTokenFamilies(std::string_view bytes, StreamEvent& event) {
  if (bytes.empty()) return {};
  if (event.kind != StreamEvent::Kind::kLearn || !storage::GetBagFamilies(bytes, event.tokens) ||
      !bytes.empty()) {
    return MakeError(ErrorCode::kDataLoss, "corrupt stream event: token families");
  }
  return {};
}

std::optional<StreamId> StreamId::Parse(std::string_view text) {
  const std::size_t dash = text.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  StreamId id;
  const char* end = text.data() + dash;
  auto [ms_end, ms_error] = std::from_chars(text.data(), end, id.ms);
  if (ms_error != std::errc() || ms_end != end || dash == 0) return std::nullopt;
  const char* seq_begin = end + 1;
  const char* seq_end = text.data() + text.size();
  auto [parsed_end, seq_error] = std::from_chars(seq_begin, seq_end, id.seq);
  if (seq_error != std::errc() || parsed_end != seq_end || seq_begin == seq_end) {
    return std::nullopt;
  }
  return id;
}

std::string StreamId::ToString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

namespace {

bool IsExpiryKind(StreamEvent::Kind kind) {
  return kind == StreamEvent::Kind::kRetire || kind == StreamEvent::Kind::kExpire ||
         kind == StreamEvent::Kind::kExpireUsers || kind == StreamEvent::Kind::kRetireStep;
}

// Appends the rule's flags that came later than its first fields: nothing when none is set, so
// a rule without them is encoded as before.
void PutExpiryRuleFlags(std::string& out, const storage::TokenExpiryRule& rule) {
  if (rule.keep_ham) out.push_back(1);
}

// Version 3: a step of the model expiry.
std::string EncodeExpiryEvent(const StreamEvent& event) {
  std::string out;
  out.push_back(static_cast<char>(kStreamEventVersionExpiry));
  out.push_back(static_cast<char>(event.kind));
  PutString(out, event.id);
  PutString(out, event.waiter);
  if (event.kind == StreamEvent::Kind::kRetire) {
    PutVarint(out, static_cast<std::uint64_t>(std::max<std::int64_t>(event.learned_before, 0)));
    return out;
  }
  if (event.kind == StreamEvent::Kind::kRetireStep) {
    PutVarint(out, static_cast<std::uint64_t>(std::max<std::int64_t>(event.learned_before, 0)));
    out.push_back(event.retire_users ? 1 : 0);
    PutVarint(out, event.retire_max_records);
    PutString(out, event.retire_from);
    return out;
  }
  const storage::TokenExpiryRule& rule = event.expiry_rule;
  PutVarint(out, static_cast<std::uint64_t>(std::max<std::int64_t>(rule.seen_before, 0)));
  PutVarint(out, rule.max_count);
  PutFixed64BigEndian(out, std::bit_cast<std::uint64_t>(rule.keep_weight));
  PutFixed64BigEndian(out, std::bit_cast<std::uint64_t>(rule.alpha));
  if (event.kind == StreamEvent::Kind::kExpireUsers) {
    PutString(out, event.user_expiry_from);
    out.push_back(event.user_expiry_until ? 1 : 0);
    if (event.user_expiry_until) PutString(out, *event.user_expiry_until);
    PutExpiryRuleFlags(out, rule);
    return out;
  }
  PutFixed64BigEndian(out, event.expiry_from);
  out.push_back(event.expiry_until ? 1 : 0);
  if (event.expiry_until) PutFixed64BigEndian(out, *event.expiry_until);
  PutExpiryRuleFlags(out, rule);
  return out;
}

std::expected<StreamEvent, Error> DecodeExpiryEvent(std::string_view bytes) {
  const auto corrupt = [](std::string what) {
    return MakeError(ErrorCode::kDataLoss, "corrupt stream event: " + std::move(what));
  };
  StreamEvent event;
  const auto kind = static_cast<std::uint8_t>(bytes[1]);
  if (kind < 3 || kind > 6) return corrupt("unknown kind " + std::to_string(kind));
  event.kind = static_cast<StreamEvent::Kind>(kind);
  bytes.remove_prefix(2);
  if (!GetString(bytes, event.id) || !GetString(bytes, event.waiter)) return corrupt("truncated");
  if (!event.id.empty()) return corrupt("a model expiry step with an id");
  constexpr std::uint64_t kMaxTime = std::numeric_limits<std::int64_t>::max();
  std::uint64_t time = 0;
  if (!GetVarint(bytes, kMaxTime, time)) return corrupt("truncated");
  if (event.kind == StreamEvent::Kind::kRetire) {
    event.learned_before = static_cast<std::int64_t>(time);
  } else if (event.kind == StreamEvent::Kind::kRetireStep) {
    event.learned_before = static_cast<std::int64_t>(time);
    if (bytes.empty()) return corrupt("truncated");
    const auto users = static_cast<std::uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    if (users > 1) return corrupt("users is " + std::to_string(users));
    event.retire_users = users == 1;
    if (!GetVarint(bytes, std::numeric_limits<std::uint64_t>::max(), event.retire_max_records) ||
        !GetString(bytes, event.retire_from)) {
      return corrupt("truncated");
    }
    if (event.retire_max_records == 0) return corrupt("a retire step of no records");
  } else {
    storage::TokenExpiryRule& rule = event.expiry_rule;
    rule.seen_before = static_cast<std::int64_t>(time);
    if (!GetVarint(bytes, std::numeric_limits<std::uint64_t>::max(), rule.max_count) ||
        bytes.size() < 16) {
      return corrupt("truncated");
    }
    rule.keep_weight = std::bit_cast<double>(GetFixed64BigEndian(bytes));
    rule.alpha = std::bit_cast<double>(GetFixed64BigEndian(bytes.substr(8)));
    bytes.remove_prefix(16);
    const bool users = event.kind == StreamEvent::Kind::kExpireUsers;
    if (users) {
      if (!GetString(bytes, event.user_expiry_from) || bytes.empty()) return corrupt("truncated");
    } else {
      if (bytes.size() < 9) return corrupt("truncated");
      event.expiry_from = GetFixed64BigEndian(bytes);
      bytes.remove_prefix(8);
    }
    const auto has_until = static_cast<std::uint8_t>(bytes[0]);
    bytes.remove_prefix(1);
    if (has_until > 1) return corrupt("has_until is " + std::to_string(has_until));
    if (has_until == 1 && users) {
      if (!GetString(bytes, event.user_expiry_until.emplace())) return corrupt("truncated");
    } else if (has_until == 1) {
      if (bytes.size() < 8) return corrupt("truncated");
      event.expiry_until = GetFixed64BigEndian(bytes);
      bytes.remove_prefix(8);
    }
    if (!std::isfinite(rule.keep_weight) || rule.keep_weight < 0 || !std::isfinite(rule.alpha) ||
        rule.alpha <= 0) {
      return corrupt("a damaged expiry rule");
    }
    if (!bytes.empty()) {  // The flags, when any is set.
      const auto flags = static_cast<std::uint8_t>(bytes[0]);
      bytes.remove_prefix(1);
      if (flags != 1) return corrupt("expiry rule flags " + std::to_string(flags));
      rule.keep_ham = true;
    }
  }
  if (!bytes.empty()) return corrupt("trailing bytes");
  return event;
}

}  // namespace

std::string EncodeStreamEvent(const StreamEvent& event) {
  if (IsExpiryKind(event.kind)) return EncodeExpiryEvent(event);
  const bool for_user = !event.user.empty();
  std::string out;
  out.push_back(static_cast<char>(for_user ? kStreamEventVersion : kStreamEventVersionGlobal));
  out.push_back(static_cast<char>(event.kind));
  PutString(out, event.id);
  PutString(out, event.waiter);
  if (for_user) {
    PutString(out, event.user);
    out.push_back(event.train_global ? 1 : 0);
  }
  if (event.kind == StreamEvent::Kind::kLearn) {
    PutString(out, EncodeLearned(event));
  } else if (event.kind == StreamEvent::Kind::kForget) {
    out.push_back(event.only_source ? 1 : 0);
    if (event.only_source) PutString(out, *event.only_source);
  }
  return out;
}

std::expected<StreamEvent, Error> DecodeStreamEvent(std::string_view bytes) {
  const auto corrupt = [](std::string what) {
    return MakeError(ErrorCode::kDataLoss, "corrupt stream event: " + std::move(what));
  };
  if (bytes.size() < 2) return corrupt("too short");
  const auto version = static_cast<std::uint8_t>(bytes[0]);
  if (version == kStreamEventVersionExpiry) return DecodeExpiryEvent(bytes);
  if (version != kStreamEventVersion && version != kStreamEventVersionGlobal) {
    return corrupt("unknown version " + std::to_string(version));
  }
  const bool for_user = version == kStreamEventVersion;
  StreamEvent event;
  const auto kind = static_cast<std::uint8_t>(bytes[1]);
  if (kind > (for_user ? 2 : 1)) return corrupt("unknown kind " + std::to_string(kind));
  event.kind = static_cast<StreamEvent::Kind>(kind);
  bytes.remove_prefix(2);
  if (!GetString(bytes, event.id) || !GetString(bytes, event.waiter)) return corrupt("truncated");
  if (for_user) {
    if (!GetString(bytes, event.user) || bytes.empty()) return corrupt("truncated");
    if (event.user.empty()) return corrupt("a user event without a user");
    const auto train_global = static_cast<std::uint8_t>(bytes[0]);
    if (train_global > 1) return corrupt("train_global is " + std::to_string(train_global));
    event.train_global = train_global == 1;
    bytes.remove_prefix(1);
  }
  if (event.kind == StreamEvent::Kind::kDeleteUser) {
    if (!event.id.empty()) return corrupt("a delete user with an id");
    if (event.train_global) return corrupt("a delete user with train_global");
    if (!bytes.empty()) return corrupt("trailing bytes");
    return event;
  }
  if (event.kind == StreamEvent::Kind::kLearn) {
    std::string learned;
    if (!GetString(bytes, learned) || !bytes.empty()) return corrupt("truncated");
    if (!DecodeLearned(learned, event)) return corrupt("a damaged learn");
    if (event.label.empty()) return corrupt("a learn without a label");
  } else {
    if (bytes.empty()) return corrupt("truncated");
    const bool has_source = bytes[0] != 0;
    bytes.remove_prefix(1);
    if (has_source) {
      std::string source;
      if (!GetString(bytes, source)) return corrupt("truncated");
      event.only_source = std::move(source);
    }
    if (!bytes.empty()) return corrupt("trailing bytes");
  }
  if (event.id.empty()) return corrupt("an event without an id");
  return event;
}

std::string EncodePositionReport(std::string_view applied, std::int64_t seen_ms) {
  std::string out(applied.empty() ? std::string_view("0-0") : applied);
  out += ' ';
  out += std::to_string(seen_ms);
  return out;
}

std::expected<PositionReport, Error> DecodePositionReport(std::string_view value) {
  const auto corrupt = [](std::string what) {
    return MakeError(ErrorCode::kDataLoss, "corrupt position report: " + std::move(what));
  };
  const std::size_t space = value.find(' ');
  if (space == std::string_view::npos) return corrupt("no time");
  const std::optional<StreamId> position = StreamId::Parse(value.substr(0, space));
  if (!position) return corrupt("the position is not a stream id");
  PositionReport report{*position, 0};
  const char* end = value.data() + value.size();
  const auto [parsed_end, error] = std::from_chars(value.data() + space + 1, end, report.seen_ms);
  if (error != std::errc() || parsed_end != end) return corrupt("the time is not an integer");
  return report;
}

}  // namespace nbspamd::replication
