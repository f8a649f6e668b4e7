// ModelImport (storage/model_transfer.h).
#include <fcntl.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "storage/encoding.h"
#include "storage/model_transfer.h"
#include "storage/rocksdb_folder.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

// Tokens written in one batch: bounds the memory of an import of any size.
constexpr std::size_t kTokensPerBatch = 4096;

std::expected<void, Error> SyncDirectory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return MakeError(ErrorCode::kInternal, "cannot open " + directory.string());
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return MakeError(ErrorCode::kInternal, "cannot sync " + directory.string());
  return {};
}

// A new, empty model folder (no classes) in `path`, with every family.
std::expected<RocksdbFolder, Error> CreateEmptyFolder(const std::string& path) {
  rocksdb::Options options = ToolOptions();
  options.create_if_missing = true;
  options.error_if_exists = true;
  {
    rocksdb::DB* raw = nullptr;
    const rocksdb::Status status = rocksdb::DB::Open(options, path, &raw);
    if (!status.ok()) return RocksdbError("creating " + path, status);
    const std::unique_ptr<rocksdb::DB> db(raw);
    for (const char* name : {kTokensFamily, kLedgerFamily, kSourcesFamily}) {
      rocksdb::ColumnFamilyHandle* handle = nullptr;
      const rocksdb::Status created = db->CreateColumnFamily(options, name, &handle);
      if (!created.ok()) return RocksdbError("creating " + path, created);
      db->DestroyColumnFamilyHandle(handle);
    }
    rocksdb::WriteBatch batch;
    batch.Put(kSchemaVersionKey, std::to_string(kSchemaVersion));
    batch.Put(kModelStatsKey, EncodeModelStats({}));
    batch.Put(kCalibrationKey, EncodeFeedbackHistogram({}));
    const rocksdb::Status written = db->Write(rocksdb::WriteOptions(), &batch);
    if (!written.ok()) return RocksdbError("creating " + path, written);
    if (const rocksdb::Status closed = db->Close(); !closed.ok()) {
      return RocksdbError("creating " + path, closed);
    }
  }
  return OpenRocksdbFolder(path, FolderAccess::kReadWrite);
}

// The counts stored at `key` of `family` (empty when there is no record).
std::expected<TokenCounts, Error> ReadCounts(const RocksdbFolder& folder,
                                             rocksdb::ColumnFamilyHandle* family,
                                             const std::string& key) {
  std::string value;
  const rocksdb::Status status = folder.db->Get(rocksdb::ReadOptions(), family, key, &value);
  if (status.IsNotFound()) return TokenCounts{};
  if (!status.ok()) return RocksdbError("reading the model", status);
  return DecodeTokenCounts(value);
}

}  // namespace

std::string_view ImportModeName(ImportMode mode) {
  switch (mode) {
    case ImportMode::kReplace:
      return "replace";
    case ImportMode::kAppend:
      return "append";
    case ImportMode::kSubtract:
      return "subtract";
  }
  return "?";
}

class ModelImport::Impl {
 public:
  Impl(std::string path, ImportMode mode, RocksdbFolder work, model::ModelStats global)
      : path_(std::move(path)), mode_(mode), work_(std::move(work)), global_(std::move(global)) {}

  ~Impl() {
    if (committed_) return;
    work_.Close();
    std::error_code ignored;
    std::filesystem::remove_all(WorkPath(path_), ignored);
  }

  static std::string WorkPath(const std::string& path) { return path + ".restore-new"; }
  static std::string OldPath(const std::string& path) { return path + ".restore-old"; }

  std::expected<void, Error> BeginLayer(std::string_view user, const model::ModelStats& stats) {
    if (layer_open_) return MakeError(ErrorCode::kFailedPrecondition, "a layer is still open");
    if (user.empty() == global_given_) {
      return MakeError(ErrorCode::kDataLoss, user.empty() ? "the global layer comes twice"
                                                          : "the global layer must come first");
    }
    if (user.empty() && mode_ == ImportMode::kReplace) {
      for (const model::ClassStats& c : stats.classes) global_.classes.push_back({c.label, 0, 0});
    }
    // Where each of the dump's classes goes (nullopt: a class the folder lacks, kSubtract).
    class_map_.clear();
    for (const model::ClassStats& c : stats.classes) {
      auto index = global_.FindClass(c.label);
      if (!index && mode_ == ImportMode::kAppend) {
        global_.classes.push_back({c.label, 0, 0});
        index = global_.classes.size() - 1;
      }
      class_map_.push_back(index);
    }
    user_ = std::string(user);
    expected_ = stats;
    seen_tokens_.assign(stats.classes.size(), 0);
    seen_vocabulary_ = 0;
    last_hash_.reset();
    if (user_.empty()) {
      layer_ = &global_;
      auto documents = ReadDocuments(meta(), kBaseDocumentsKey);
      if (!documents) return std::unexpected(documents.error());
      base_documents_ = std::move(*documents);
    } else {
      std::string value;
      const rocksdb::Status status =
          work_.db->Get(rocksdb::ReadOptions(), work_.users, UserStatsKey(user_), &value);
      user_stats_ = global_;
      for (model::ClassStats& c : user_stats_.classes) c.documents = c.tokens = 0;
      user_stats_.vocabulary_size = 0;
      if (status.ok()) {
        auto stored = DecodeModelStats(value);
        if (!stored) return std::unexpected(stored.error());
        for (std::size_t c = 0; c < stored->classes.size() && c < user_stats_.classes.size(); ++c) {
          user_stats_.classes[c].documents = stored->classes[c].documents;
          user_stats_.classes[c].tokens = stored->classes[c].tokens;
        }
        user_stats_.vocabulary_size = stored->vocabulary_size;
      } else if (!status.IsNotFound()) {
        return RocksdbError("reading a user's stats", status);
      }
      layer_ = &user_stats_;
      auto documents = ReadDocuments(work_.users, UserBaseDocumentsKey(user_));
      if (!documents) return std::unexpected(documents.error());
      base_documents_ = std::move(*documents);
    }
    // The documents, as base documents.
    base_documents_.resize(std::max(base_documents_.size(), layer_->classes.size()), 0);
    for (std::size_t i = 0; i < stats.classes.size(); ++i) {
      const std::int64_t change = Take(class_map_[i], stats.classes[i].documents, base_documents_);
      if (change != 0) Add(layer_->classes[*class_map_[i]].documents, change);
    }
    layer_open_ = true;
    return {};
  }

  std::expected<void, Error> Token(TokenHash hash, std::span<const std::uint64_t> counts) {
    if (!layer_open_) return MakeError(ErrorCode::kFailedPrecondition, "no layer is open");
    if (counts.size() > class_map_.size()) {
      return MakeError(ErrorCode::kDataLoss, "a token has counts of more classes than the layer");
    }
    if (last_hash_ && hash <= *last_hash_) {
      return MakeError(ErrorCode::kDataLoss, "tokens are not in ascending order");
    }
    last_hash_ = hash;
    ++seen_vocabulary_;
    for (std::size_t i = 0; i < counts.size(); ++i) seen_tokens_[i] += counts[i];

    const std::string token_key = user_.empty() ? EncodeTokenKey(hash) : UserTokenKey(user_, hash);
    const std::string base_key = user_.empty() ? EncodeTokenKey(hash) : UserBaseKey(user_, hash);
    rocksdb::ColumnFamilyHandle* token_family = user_.empty() ? work_.tokens : work_.users;
    rocksdb::ColumnFamilyHandle* base_family = user_.empty() ? work_.base : work_.users;
    TokenCounts total;
    TokenCounts base;
    if (mode_ != ImportMode::kReplace) {
      auto read_total = ReadCounts(work_, token_family, token_key);
      auto read_base = ReadCounts(work_, base_family, base_key);
      if (!read_total) return std::unexpected(read_total.error());
      if (!read_base) return std::unexpected(read_base.error());
      total = std::move(*read_total);
      base = std::move(*read_base);
    }
    TrimZeros(total);
    const bool was_present = !total.empty();
    total.resize(std::max(total.size(), layer_->classes.size()), 0);
    base.resize(std::max(base.size(), layer_->classes.size()), 0);
    for (std::size_t i = 0; i < counts.size(); ++i) {
      const std::int64_t change = Take(class_map_[i], counts[i], base);
      if (change == 0) continue;
      Add(total[*class_map_[i]], change);
      Add(layer_->classes[*class_map_[i]].tokens, change);
    }
    TrimZeros(total);
    TrimZeros(base);
    if (was_present && total.empty()) --layer_->vocabulary_size;
    if (!was_present && !total.empty()) ++layer_->vocabulary_size;
    if (total.empty()) {
      batch_.Delete(token_family, token_key);
    } else {
      batch_.Put(token_family, token_key, EncodeTokenCounts(total));
    }
    if (base.empty()) {
      batch_.Delete(base_family, base_key);
    } else {
      batch_.Put(base_family, base_key, EncodeTokenCounts(base));
    }
    ++summary_.tokens;
    if (++batched_ >= kTokensPerBatch) return WriteBatch(/*sync=*/false);
    return {};
  }

  std::expected<void, Error> EndLayer() {
    if (!layer_open_) return MakeError(ErrorCode::kFailedPrecondition, "no layer is open");
    const std::string name = user_.empty() ? "the global layer" : "user '" + user_ + "'";
    for (std::size_t c = 0; c < expected_.classes.size(); ++c) {
      if (seen_tokens_[c] != expected_.classes[c].tokens) {
        return MakeError(ErrorCode::kDataLoss, "the dump is damaged: the token counts of class '" +
                                                   expected_.classes[c].label + "' in " + name +
                                                   " sum to " + std::to_string(seen_tokens_[c]) +
                                                   ", its header says " +
                                                   std::to_string(expected_.classes[c].tokens));
      }
    }
    if (seen_vocabulary_ != expected_.vocabulary_size) {
      return MakeError(ErrorCode::kDataLoss,
                       "the dump is damaged: " + name + " has " + std::to_string(seen_vocabulary_) +
                           " tokens, its header says " + std::to_string(expected_.vocabulary_size));
    }
    TrimZeros(base_documents_);
    if (user_.empty()) {
      global_given_ = true;
      if (base_documents_.empty()) {
        batch_.Delete(meta(), kBaseDocumentsKey);
      } else {
        batch_.Put(meta(), kBaseDocumentsKey, EncodeDocumentCounts(base_documents_));
      }
    } else {
      const bool empty = user_stats_.vocabulary_size == 0 && user_stats_.TotalDocuments() == 0;
      if (empty) {
        batch_.Delete(work_.users, UserStatsKey(user_));
      } else {
        batch_.Put(work_.users, UserStatsKey(user_), EncodeModelStats(user_stats_));
      }
      if (base_documents_.empty()) {
        batch_.Delete(work_.users, UserBaseDocumentsKey(user_));
      } else {
        batch_.Put(work_.users, UserBaseDocumentsKey(user_), EncodeDocumentCounts(base_documents_));
      }
    }
    layer_open_ = false;
    ++summary_.layers;
    return WriteBatch(/*sync=*/false);
  }

  std::expected<ImportSummary, Error> Commit() {
    if (layer_open_ || !global_given_) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       layer_open_ ? "a layer is still open" : "the dump has no global layer");
    }
    batch_.Put(meta(), kModelStatsKey, EncodeModelStats(global_));
    // Synced: every batch before it is in the write-ahead log too, so the copy is durable
    // without a flush (and closing it flushes nothing).
    if (auto written = WriteBatch(/*sync=*/true); !written) return std::unexpected(written.error());
    work_.Close();
    namespace fs = std::filesystem;
    const fs::path target(path_);
    const fs::path old_path(OldPath(path_));
    std::error_code error;
    fs::remove_all(old_path, error);
    const bool had_model = fs::exists(target);
    if (had_model) {
      fs::rename(target, old_path, error);
      if (error) {
        return MakeError(ErrorCode::kInternal, "cannot move " + path_ +
                                                   " aside: " + error.message() +
                                                   "; the restored model is in " + WorkPath(path_));
      }
    }
    fs::rename(WorkPath(path_), target, error);
    if (error) {
      return MakeError(ErrorCode::kInternal, "cannot put the restored model in place: " +
                                                 error.message() + "; it is in " + WorkPath(path_) +
                                                 ", the old model in " + old_path.string());
    }
    committed_ = true;
    if (auto synced = SyncDirectory(fs::absolute(target).parent_path()); !synced) {
      return std::unexpected(synced.error());
    }
    if (had_model) fs::remove_all(old_path, error);
    return summary_;
  }

 private:
  rocksdb::ColumnFamilyHandle* meta() const { return work_.meta; }

  std::expected<std::vector<std::uint64_t>, Error> ReadDocuments(
      rocksdb::ColumnFamilyHandle* family, const std::string& key) {
    std::string value;
    const rocksdb::Status status = work_.db->Get(rocksdb::ReadOptions(), family, key, &value);
    if (status.IsNotFound()) return std::vector<std::uint64_t>{};
    if (!status.ok()) return RocksdbError("reading the base documents", status);
    return DecodeDocumentCounts(value);
  }

  // The change that `amount` of the dump's class makes to the folder's class `target`, already
  // made to base[*target]: +amount, or for kSubtract minus what the base counts have of it (the
  // rest is counted as not subtracted). 0 for a class the folder lacks (kSubtract only).
  std::int64_t Take(std::optional<std::size_t> target, std::uint64_t amount,
                    std::vector<std::uint64_t>& base) {
    if (amount == 0) return 0;
    if (!target) {
      summary_.not_subtracted += amount;
      return 0;
    }
    std::uint64_t& from = base[*target];
    if (mode_ != ImportMode::kSubtract) {
      from += amount;
      return static_cast<std::int64_t>(amount);
    }
    const std::uint64_t taken = std::min(amount, from);
    summary_.not_subtracted += amount - taken;
    from -= taken;
    return -static_cast<std::int64_t>(taken);
  }

  static void Add(std::uint64_t& count, std::int64_t change) {
    count = change < 0 ? count - static_cast<std::uint64_t>(-change)
                       : count + static_cast<std::uint64_t>(change);
  }

  std::expected<void, Error> WriteBatch(bool sync) {
    rocksdb::WriteOptions options;
    options.sync = sync;
    const rocksdb::Status status = work_.db->Write(options, &batch_);
    if (!status.ok()) return RocksdbError("writing the restored model", status);
    batch_.Clear();
    batched_ = 0;
    return {};
  }

  const std::string path_;
  const ImportMode mode_;
  RocksdbFolder work_;
  model::ModelStats global_;
  model::ModelStats user_stats_;
  model::ModelStats* layer_ = nullptr;  // The stats the open layer changes.
  std::vector<std::optional<std::size_t>> class_map_;
  std::vector<std::uint64_t> base_documents_;
  model::ModelStats expected_;
  std::vector<std::uint64_t> seen_tokens_;
  std::uint64_t seen_vocabulary_ = 0;
  std::optional<TokenHash> last_hash_;
  std::string user_;
  bool layer_open_ = false;
  bool global_given_ = false;
  bool committed_ = false;
  rocksdb::WriteBatch batch_;
  std::size_t batched_ = 0;
  ImportSummary summary_;
};

std::expected<std::unique_ptr<ModelImport>, Error> ModelImport::Begin(const std::string& path,
                                                                      ImportMode mode) {
  namespace fs = std::filesystem;
  const std::string work_path = Impl::WorkPath(path);
  std::error_code error;
  fs::remove_all(work_path, error);  // A copy an earlier restore left when it stopped.
  std::optional<RocksdbFolder> work;
  model::ModelStats global;
  if (mode == ImportMode::kReplace) {
    if (fs::exists(path) && !fs::exists(fs::path(path) / "CURRENT") && !fs::is_empty(path)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       path + " is neither a model folder nor empty: nothing is replaced");
    }
    if (fs::exists(fs::path(path) / "CURRENT")) {
      // Refused by RocksDB's lock while a daemon has it open.
      auto open = OpenRocksdbFolder(path, FolderAccess::kReadWrite);
      if (!open) return std::unexpected(open.error());
    }
    auto created = CreateEmptyFolder(work_path);
    if (!created) return std::unexpected(created.error());
    work.emplace(std::move(*created));
  } else {
    {
      auto source = OpenRocksdbFolder(path, FolderAccess::kReadWrite);
      if (!source) return std::unexpected(source.error());
      if (auto stats = ReadFolderStats(*source); !stats) return std::unexpected(stats.error());
      rocksdb::Checkpoint* raw = nullptr;
      rocksdb::Status status = rocksdb::Checkpoint::Create(source->db.get(), &raw);
      const std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
      if (status.ok()) status = checkpoint->CreateCheckpoint(work_path);
      if (!status.ok()) return RocksdbError("copying " + path, status);
    }
    auto opened = OpenRocksdbFolder(work_path, FolderAccess::kReadWrite);
    if (!opened) return std::unexpected(opened.error());
    auto stats = ReadFolderStats(*opened);
    if (!stats) return std::unexpected(stats.error());
    global = std::move(*stats);
    work.emplace(std::move(*opened));
  }
  if (auto created = work->CreateOptionalFamilies(); !created) {
    return std::unexpected(created.error());
  }
  return std::unique_ptr<ModelImport>(
      new ModelImport(std::make_unique<Impl>(path, mode, std::move(*work), std::move(global))));
}

ModelImport::ModelImport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModelImport::~ModelImport() = default;

std::expected<void, Error> ModelImport::BeginLayer(std::string_view user,
                                                   const model::ModelStats& stats) {
  return impl_->BeginLayer(user, stats);
}
std::expected<void, Error> ModelImport::Token(TokenHash hash,
                                              std::span<const std::uint64_t> counts) {
  return impl_->Token(hash, counts);
}
std::expected<void, Error> ModelImport::EndLayer() { return impl_->EndLayer(); }
std::expected<ImportSummary, Error> ModelImport::Commit() { return impl_->Commit(); }

}  // namespace nbspamd::storage
