#include "server/spam_filter.h"

#include <xxhash.h>

#include <cassert>
#include <cstdio>

namespace nbspamd::server {
namespace {

constexpr std::size_t kMaxLabelBytes = 64;
constexpr std::size_t kMaxIdBytes = 256;

std::expected<void, Error> RequireMessage(std::string_view message) {
  if (message.empty()) return MakeError(ErrorCode::kInvalidArgument, "the message is empty");
  return {};
}

}  // namespace

SpamFilter::SpamFilter(std::unique_ptr<storage::Store> store, SpamFilterOptions options)
    : store_(std::move(store)), options_(options), tokenizer_(options.tokenizer) {
  assert(options_.alpha > 0);
}

std::expected<ClassifyOutcome, Error> SpamFilter::Classify(std::string_view message,
                                                           std::size_t explain) const {
  if (auto ok = RequireMessage(message); !ok) return std::unexpected(ok.error());
  const TokenBag bag = tokenizer_.Tokenize(message, /*keep_text=*/explain > 0);
  const model::Snapshot snapshot = store_->Read(bag.entries);
  auto result = model::Classify(
      bag, snapshot,
      {.alpha = options_.alpha, .spam_threshold = options_.spam_threshold, .explain = explain});
  if (!result) return std::unexpected(result.error());
  return ClassifyOutcome{std::move(*result), bag.TotalCount()};
}

std::expected<TrainOutcome, Error> SpamFilter::Train(std::string_view message,
                                                     std::string_view label,
                                                     std::optional<std::string_view> id) {
  if (auto ok = RequireMessage(message); !ok) return std::unexpected(ok.error());
  if (auto ok = ValidateLabel(label); !ok) return std::unexpected(ok.error());
  if (id) {
    if (auto ok = ValidateId(*id); !ok) return std::unexpected(ok.error());
  }
  TrainOutcome outcome{id ? std::string(*id) : ContentId(message), std::string(label)};
  const TokenBag bag = tokenizer_.Tokenize(message);
  outcome.tokens = bag.TotalCount();

  std::lock_guard lock(writer_mutex_);
  auto learned = store_->FindLearned(outcome.id);
  if (!learned) return std::unexpected(learned.error());
  model::LearnPlan plan = model::PlanLearn(outcome.id, label, bag, *learned, *store_->Stats());
  outcome.status = plan.status;
  if (plan.status != model::LearnStatus::kUnchanged) {
    if (auto applied = store_->Apply(plan.delta); !applied) {
      return std::unexpected(applied.error());
    }
  }
  return outcome;
}

std::expected<std::string, Error> SpamFilter::ForgetId(std::string_view id) {
  if (auto ok = ValidateId(id); !ok) return std::unexpected(ok.error());
  std::lock_guard lock(writer_mutex_);
  auto learned = store_->FindLearned(id);
  if (!learned) return std::unexpected(learned.error());
  if (!*learned) {
    return MakeError(ErrorCode::kNotFound,
                     "no message was learned with id '" + std::string(id) + "'");
  }
  const model::Delta delta = model::PlanForget(id, **learned, *store_->Stats());
  if (auto applied = store_->Apply(delta); !applied) return std::unexpected(applied.error());
  return std::string(id);
}

std::expected<std::string, Error> SpamFilter::ForgetMessage(std::string_view message) {
  if (auto ok = RequireMessage(message); !ok) return std::unexpected(ok.error());
  return ForgetId(ContentId(message));
}

std::string SpamFilter::ContentId(std::string_view message) {
  const XXH128_hash_t hash = XXH3_128bits(message.data(), message.size());
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx", static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return text;
}

std::expected<void, Error> SpamFilter::ValidateLabel(std::string_view label) {
  if (label.empty()) return MakeError(ErrorCode::kInvalidArgument, "the label is empty");
  if (label.size() > kMaxLabelBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the label is longer than 64 characters");
  }
  for (char c : label) {
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    if (!allowed) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "the label may hold only letters, digits, '_', '.' and '-'");
    }
  }
  return {};
}

std::expected<void, Error> SpamFilter::ValidateId(std::string_view id) {
  if (id.empty()) return MakeError(ErrorCode::kInvalidArgument, "the id is empty");
  if (id.size() > kMaxIdBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the id is longer than 256 bytes");
  }
  for (unsigned char c : id) {
    if (c < 0x20 || c == 0x7f) {
      return MakeError(ErrorCode::kInvalidArgument, "the id holds a control character");
    }
  }
  return {};
}

}  // namespace nbspamd::server
