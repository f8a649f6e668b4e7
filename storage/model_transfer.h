// Model transfer: a model read out layer by layer (dump) and written into a data folder
// (restore), docs/STORAGE.md "Dump and restore". The text format of a dump is dump/'s; here a
// model is a sequence of layers, the global model first, then each user's in byte order of id:
//
//   ModelImport::Begin("data", ImportMode::kAppend)  → import    (a ModelVisitor)
//   ExportFolder("other-site/data", *import);                     (or a dump file's reader)
//   auto summary = (*import)->Commit();                           (the folder now holds both)
//
// What a restore writes becomes base counts (docs/STORAGE.md "Base counts"): counts no ledger
// record accounts for, so no forget can take them away and `nbspamd check` still balances.
#ifndef NBSPAMD_STORAGE_MODEL_TRANSFER_H_
#define NBSPAMD_STORAGE_MODEL_TRANSFER_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/token_bag.h"
#include "model/model_stats.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
}  // namespace rocksdb

namespace nbspamd::storage {

// Receives a model layer by layer. Any error stops the transfer and is its result.
class ModelVisitor {
 public:
  virtual ~ModelVisitor() = default;
  // A layer begins: `user` is "" for the global model. `stats` are the layer's: for a user, the
  // global classes in their order (documents and token totals the user's own). The global layer
  // comes first, and each layer once.
  [[nodiscard]] virtual std::expected<void, Error> BeginLayer(std::string_view user,
                                                              const model::ModelStats& stats) = 0;
  // One token of the layer, in ascending hash order, each once: its count per class of the
  // layer's stats (a shorter span: the classes after it have 0). Never all zeros.
  [[nodiscard]] virtual std::expected<void, Error> Token(TokenHash hash,
                                                         std::span<const std::uint64_t> counts) = 0;
  // The layer's tokens are all given.
  [[nodiscard]] virtual std::expected<void, Error> EndLayer() = 0;
};

// Gives `visitor` the model of the folder `path` (opened read-only, so a daemon may serve it
// meanwhile; what it reads is one point in time). Errors: as storage::CheckModel's, the
// visitor's.
[[nodiscard]] std::expected<void, Error> ExportFolder(const std::string& path,
                                                      ModelVisitor& visitor);

// The same from an open database, at one point in time (RocksdbStore::Export). `users` may be
// nullptr (a folder without user layers).
[[nodiscard]] std::expected<void, Error> ExportDatabase(rocksdb::DB& db,
                                                        rocksdb::ColumnFamilyHandle* meta,
                                                        rocksdb::ColumnFamilyHandle* tokens,
                                                        rocksdb::ColumnFamilyHandle* users,
                                                        ModelVisitor& visitor);

enum class ImportMode {
  kReplace,   // The folder holds the dump's model alone: no ledger, no history of training.
  kAppend,    // The dump's counts are added to the folder's (two sites' models merged).
  kSubtract,  // The dump's counts are taken from the folder's base counts (an append undone).
};

// "replace", "append", "subtract".
[[nodiscard]] std::string_view ImportModeName(ImportMode mode);

struct ImportSummary {
  std::uint64_t layers = 0;
  std::uint64_t tokens = 0;  // Token lines applied, all layers.
  // kSubtract: the counts (token counts and documents) the dump held beyond the folder's base
  // counts, which were not taken (the ledger's own counts are never subtracted: forget those).
  std::uint64_t not_subtracted = 0;
};

// Writes a model into a data folder, all of it or nothing: it works on a copy (a new folder for
// kReplace, a RocksDB checkpoint of the folder otherwise, `path` + ".restore-new") that Commit
// puts in the folder's place; destroyed without Commit, it removes the copy and the folder is as
// it was. Memory is bounded: tokens are written in batches as they come.
//
// Classes are matched by label: kAppend creates the dump's classes the folder lacks; kReplace
// takes the dump's classes. A user layer's tokens and documents become that user's base counts.
// Each layer's token counts must sum to its stats' token totals and their number be its |V|;
// else EndLayer fails with kDataLoss (a damaged dump), and nothing is written to `path`.
// Thread safety: one thread. REQUIRES: no daemon has `path` open.
class ModelImport final : public ModelVisitor {
 public:
  // Errors: kNotFound when kAppend or kSubtract finds no model in `path`; kDataLoss for a folder
  // of another schema; kInternal when RocksDB cannot open or copy it (a daemon holds its lock).
  [[nodiscard]] static std::expected<std::unique_ptr<ModelImport>, Error> Begin(
      const std::string& path, ImportMode mode);
  ~ModelImport() override;

  [[nodiscard]] std::expected<void, Error> BeginLayer(std::string_view user,
                                                      const model::ModelStats& stats) override;
  [[nodiscard]] std::expected<void, Error> Token(TokenHash hash,
                                                 std::span<const std::uint64_t> counts) override;
  [[nodiscard]] std::expected<void, Error> EndLayer() override;

  // Makes the copy durable and puts it in place of `path`. Errors: kFailedPrecondition when a
  // layer is still open or no global layer was given; kInternal for an I/O failure (the
  // folder's model is then either the old or the new one, whole, and the other is at
  // `path` + ".restore-old" or ".restore-new": the message says which).
  [[nodiscard]] std::expected<ImportSummary, Error> Commit();

  class Impl;

 private:
  explicit ModelImport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_MODEL_TRANSFER_H_
