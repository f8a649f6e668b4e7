#include "storage/store.h"

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

std::expected<TokenExpiryStep, Error> Store::ExpireTokens(const TokenExpiryRule& /*rule*/,
                                                          TokenHash /*from*/,
                                                          std::size_t /*max_examined*/,
                                                          std::optional<TokenHash> /*until*/,
                                                          std::string_view /*stream_position*/) {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no token expiry");
}

std::expected<ExpiryCandidates, Error> Store::FindExpiryCandidates(
    const TokenExpiryRule& /*rule*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store keeps no token expiry");
}

std::expected<void, Error> Store::Export(ModelVisitor& /*visitor*/) const {
  return MakeError(ErrorCode::kFailedPrecondition, "this store cannot be dumped");
}

}  // namespace nbspamd::storage
