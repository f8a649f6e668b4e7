// ForwardingStore: a test double at the storage seam that passes every call to a MemoryStore,
// for tests that change one or two calls (a write held at a gate, a read that throws) and keep
// the rest real. Override what the test changes and call ForwardingStore's for the real call.
// Thread-safe as the MemoryStore is.
#ifndef NBSPAMD_STORAGE_TESTING_FORWARDING_STORE_H_
#define NBSPAMD_STORAGE_TESTING_FORWARDING_STORE_H_

#include "storage/memory_store.h"
#include "storage/store.h"

namespace nbspamd::storage::testing {

class ForwardingStore : public Store {
 public:
  model::Snapshot Read(std::span<const BagEntry> entries) const override {
    return inner_.Read(entries);
  }
  std::shared_ptr<const model::ModelStats> Stats() const override { return inner_.Stats(); }
  std::shared_ptr<const model::FeedbackHistogram> Feedback() const override {
    return inner_.Feedback();
  }
  std::expected<std::optional<model::LedgerEntry>, Error> FindLearned(
      std::string_view id) const override {
    return inner_.FindLearned(id);
  }
  std::expected<std::vector<LearnedMessage>, Error> ListLearned(std::string_view source,
                                                                std::int64_t since,
                                                                std::int64_t until,
                                                                std::size_t limit) const override {
    return inner_.ListLearned(source, since, until, limit);
  }
  std::expected<std::vector<LearnedRecord>, Error> NewestLearned(std::size_t limit) const override {
    return inner_.NewestLearned(limit);
  }
  std::expected<BatchResults, Error> ApplyBatch(std::span<const model::Delta> deltas) override {
    return inner_.ApplyBatch(deltas);
  }
  std::string StreamPosition() const override { return inner_.StreamPosition(); }
  std::vector<StorageProperty> Properties() const override { return inner_.Properties(); }
  std::expected<void, Error> Checkpoint(const std::string& path) override {
    return inner_.Checkpoint(path);
  }
  std::expected<void, Error> FlushMemoryTables() override { return inner_.FlushMemoryTables(); }
  std::expected<std::optional<model::Snapshot>, Error> ReadUser(
      std::string_view user, const model::ModelStats& global,
      std::span<const BagEntry> entries) const override {
    return inner_.ReadUser(user, global, entries);
  }
  std::expected<std::optional<model::ModelStats>, Error> UserStats(
      std::string_view user) const override {
    return inner_.UserStats(user);
  }
  std::expected<std::optional<model::LedgerEntry>, Error> FindUserLearned(
      std::string_view user, std::string_view id) const override {
    return inner_.FindUserLearned(user, id);
  }
  std::expected<void, Error> DeleteUser(std::string_view user,
                                        std::string_view stream_position) override {
    return inner_.DeleteUser(user, stream_position);
  }

 private:
  MemoryStore inner_;
};

}  // namespace nbspamd::storage::testing

#endif  // NBSPAMD_STORAGE_TESTING_FORWARDING_STORE_H_
