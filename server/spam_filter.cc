#include "server/spam_filter.h"

#include <xxhash.h>

#include <cassert>
#include <cstdio>
#include <exception>
#include <future>

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
    : store_(std::move(store)), options_(options), tokenizer_(options.tokenizer), writer_(*store_) {
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

void SpamFilter::TrainAsync(std::string_view message, std::string_view label,
                            std::optional<std::string_view> id, TrainDone done) {
  std::expected<void, Error> valid = RequireMessage(message);
  if (valid) valid = ValidateLabel(label);
  if (valid && id) valid = ValidateId(*id);
  if (!valid) return done(std::unexpected(std::move(valid.error())));

  TrainOutcome outcome{id ? std::string(*id) : ContentId(message), std::string(label)};
  TokenBag bag;
  try {
    bag = tokenizer_.Tokenize(message);
  } catch (const std::exception& e) {
    return done(MakeError(ErrorCode::kInternal, std::string("tokenizing failed: ") + e.what()));
  }
  outcome.tokens = bag.TotalCount();
  LearnRequest request{outcome.id, outcome.label, std::move(bag)};
  writer_.Learn(std::move(request), [outcome = std::move(outcome), done = std::move(done)](
                                        std::expected<model::LearnStatus, Error> learned) mutable {
    if (!learned) return done(std::unexpected(std::move(learned.error())));
    outcome.status = *learned;
    done(std::move(outcome));
  });
}

void SpamFilter::ForgetIdAsync(std::string_view id, ForgetDone done) {
  if (auto ok = ValidateId(id); !ok) return done(std::unexpected(std::move(ok.error())));
  writer_.Forget(std::string(id), [id = std::string(id), done = std::move(done)](
                                      std::expected<void, Error> forgotten) mutable {
    if (!forgotten) return done(std::unexpected(std::move(forgotten.error())));
    done(std::move(id));
  });
}

void SpamFilter::ForgetMessageAsync(std::string_view message, ForgetDone done) {
  if (auto ok = RequireMessage(message); !ok) return done(std::unexpected(std::move(ok.error())));
  ForgetIdAsync(ContentId(message), std::move(done));
}

std::expected<TrainOutcome, Error> SpamFilter::Train(std::string_view message,
                                                     std::string_view label,
                                                     std::optional<std::string_view> id) {
  std::promise<std::expected<TrainOutcome, Error>> outcome;
  auto future = outcome.get_future();
  TrainAsync(message, label, id, [&outcome](std::expected<TrainOutcome, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<std::string, Error> SpamFilter::ForgetId(std::string_view id) {
  std::promise<std::expected<std::string, Error>> outcome;
  auto future = outcome.get_future();
  ForgetIdAsync(id, [&outcome](std::expected<std::string, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
}

std::expected<std::string, Error> SpamFilter::ForgetMessage(std::string_view message) {
  std::promise<std::expected<std::string, Error>> outcome;
  auto future = outcome.get_future();
  ForgetMessageAsync(message, [&outcome](std::expected<std::string, Error> result) {
    outcome.set_value(std::move(result));
  });
  return future.get();
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
