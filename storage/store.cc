#include "storage/store.h"

#include <cmath>
#include <iterator>
#include <utility>

namespace nbspamd::storage {
namespace {

std::unexpected<Error> NoUserLayers() {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no user layers");
}

}  // namespace

std::expected<std::optional<model::Snapshot>, Error> Store::ReadUser(
    std::string_view /*user*/, const model::ModelStats& /*global*/,
    std::span<const BagEntry> /*entries*/) const {
  return NoUserLayers();
}

std::expected<std::optional<model::ModelStats>, Error> Store::UserStats(
    std::string_view /*user*/) const {
  return NoUserLayers();
}

std::expected<std::vector<UserSummary>, Error> Store::ListUsers(std::string_view /*after*/,
                                                                std::size_t /*limit*/) const {
  return NoUserLayers();
}

std::expected<std::vector<UserSummary>, Error> Store::ListAllUsers() const {
  constexpr std::size_t kUsersPerPage = 1000;
  std::vector<UserSummary> users;
  std::string after;
  for (;;) {
    auto page = ListUsers(after, kUsersPerPage);
    if (!page) return std::unexpected(std::move(page.error()));
    std::move(page->begin(), page->end(), std::back_inserter(users));
    if (page->size() < kUsersPerPage) return users;
    after = users.back().user;
  }
}

std::expected<std::optional<model::LedgerEntry>, Error> Store::FindUserLearned(
    std::string_view /*user*/, std::string_view /*id*/) const {
  return NoUserLayers();
}

std::expected<std::vector<LearnedMessage>, Error> Store::ListUserLearned(
    std::string_view /*user*/, std::string_view /*source*/, std::int64_t /*since*/,
    std::int64_t /*until*/, std::size_t /*limit*/) const {
  return NoUserLayers();
}

std::expected<std::optional<std::int64_t>, Error> Store::UserLastLearned(
    std::string_view /*user*/) const {
  return NoUserLayers();
}

std::expected<void, Error> Store::DeleteUser(std::string_view /*user*/,
                                             std::string_view /*stream_position*/) {
  return NoUserLayers();
}

std::expected<RetireStep, Error> Store::RetireLedger(std::int64_t /*learned_before*/,
                                                     std::size_t /*max_records*/,
                                                     std::string_view /*stream_position*/,
                                                     std::string_view /*from*/) {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no ledger retention");
}

std::expected<std::vector<std::string>, Error> Store::RetireStepStarts(
    std::int64_t /*learned_before*/, std::size_t /*records_per_step*/, bool /*users*/,
    std::size_t /*max_starts*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no ledger retention");
}

std::expected<std::optional<std::int64_t>, Error> Store::NthNewestLearned(
    std::uint64_t /*n*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no ledger retention");
}

std::expected<TokenExpiryStep, Error> Store::ExpireTokens(const TokenExpiryRule& /*rule*/,
                                                          TokenHash /*from*/,
                                                          std::size_t /*max_examined*/,
                                                          std::optional<TokenHash> /*until*/,
                                                          std::string_view /*stream_position*/) {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no token expiry");
}

std::expected<RetireStep, Error> Store::RetireUserLedgers(std::int64_t /*learned_before*/,
                                                          std::size_t /*max_records*/,
                                                          std::string_view /*stream_position*/,
                                                          std::string_view /*from*/) {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no ledger retention");
}

std::expected<UserTokenExpiryStep, Error> Store::ExpireUserTokens(
    const TokenExpiryRule& /*rule*/, std::string_view /*from*/, std::size_t /*max_examined*/,
    const std::optional<std::string>& /*until*/, std::string_view /*stream_position*/) {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no token expiry");
}

double ExpiryWeight(const std::vector<std::uint64_t>& counts, const model::ModelStats& stats,
                    double alpha) {
  const auto spam = stats.FindClass("spam");
  const auto ham = stats.FindClass("ham");
  if (!spam || !ham) return 0;
  const auto count = [&](std::size_t c) {
    return c < counts.size() ? static_cast<double>(counts[c]) : 0.0;
  };
  const double vocabulary = alpha * static_cast<double>(stats.vocabulary_size);
  const double p_spam =
      (count(*spam) + alpha) / (static_cast<double>(stats.classes[*spam].tokens) + vocabulary);
  const double p_ham =
      (count(*ham) + alpha) / (static_cast<double>(stats.classes[*ham].tokens) + vocabulary);
  return std::fabs(std::log(p_spam) - std::log(p_ham));
}

bool ExpiryKeeps(const TokenExpiryRule& rule, const std::vector<std::uint64_t>& counts,
                 const model::ModelStats& stats) {
  if (rule.keep_ham) {
    const auto ham = stats.FindClass("ham");
    if (ham && *ham < counts.size() && counts[*ham] > 0) return true;
  }
  return rule.keep_weight > 0 && ExpiryWeight(counts, stats, rule.alpha) >= rule.keep_weight;
}

std::expected<ExpiryCandidates, Error> Store::FindExpiryCandidates(
    const TokenExpiryRule& /*rule*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no token expiry");
}

std::expected<void, Error> Store::Export(ModelVisitor& /*visitor*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store cannot be dumped");
}

std::expected<void, Error> Store::VisitTokens(const TokenVisitor& /*visit*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store cannot list its tokens");
}

}  // namespace nbspamd::storage
