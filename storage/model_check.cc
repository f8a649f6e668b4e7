#include "storage/model_check.h"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "storage/encoding.h"
#include "storage/rocksdb_folder.h"
#include "storage/rocksdb_layout.h"
#include "storage/rocksdb_status.h"

namespace nbspamd::storage {
namespace {

using Folder = RocksdbFolder;

std::string Hex(TokenHash hash) {
  char text[17];
  const auto end = std::to_chars(text, text + 16, hash, 16).ptr;
  return std::string(16 - (end - text), '0') + std::string(text, end);
}

// What the ledger says the model must be, next to what the folder holds.
struct Scan {
  CheckReport report;
  model::ModelStats expected_stats;  // Classes: the stored ones, then unknown ledger labels.
  std::unordered_map<TokenHash, TokenCounts> expected;   // From the ledger; trimmed.
  std::unordered_set<std::string> expected_source_keys;  // From the ledger.
  std::vector<std::string> stray_source_keys;            // In the index, of no ledger record.
  std::vector<std::string> corrupt_ledger_ids;
  std::vector<std::string> corrupt_base_keys;  // Base records that cannot be read.
  bool corrupt_base_documents = false;
  model::FeedbackHistogram expected_feedback;    // From the ledger.
  std::vector<std::string> damaged_users;        // Users with a problem of invariant 8.
  std::vector<std::string> malformed_user_keys;  // Users-family keys of no user.
  std::uint64_t problem_count = 0;

  void Problem(std::string text) {
    if (++problem_count <= kMaxProblems) report.problems.push_back(std::move(text));
  }
};

// One user's records, gathered while the users family is scanned (by user, then kind: ledger,
// source index, stats, tokens).
struct UserScan {
  std::string user;
  std::uint64_t problems_before = 0;  // Scan::problem_count when its first record was read.
  std::uint64_t records = 0;
  std::optional<model::ModelStats> stats;  // The stored stats record.
  model::ModelStats expected_stats;        // Counted from the user's ledger.
  std::unordered_map<TokenHash, TokenCounts> expected;
  std::unordered_set<std::string> expected_source_keys;  // The source keys, without the prefix.
  std::uint64_t indexed = 0;
  std::uint64_t stray_source_keys = 0;
  std::uint64_t token_records = 0;
  std::uint64_t matched = 0;
  std::vector<std::uint64_t> totals;
};

// Checks invariant 8 for `user` once all of its records were read.
void FinishUser(const UserScan& user, const model::ModelStats& global, Scan& scan) {
  const std::string name = "user '" + user.user + "'";
  if (!user.stats) {
    scan.Problem(name + " has " + std::to_string(user.records) + " records but no stats record");
    return;
  }
  ++scan.report.user_layers;
  const model::ModelStats& stats = *user.stats;
  for (std::size_t c = 0; c < stats.classes.size(); ++c) {
    if (c >= global.classes.size() || stats.classes[c].label != global.classes[c].label) {
      scan.Problem(name + " has stats for class '" + stats.classes[c].label +
                   "', which is not the model's class " + std::to_string(c));
      return;
    }
  }
  for (std::size_t c = 0; c < std::max(stats.classes.size(), user.totals.size()); ++c) {
    const std::uint64_t tokens = c < stats.classes.size() ? stats.classes[c].tokens : 0;
    const std::uint64_t documents = c < stats.classes.size() ? stats.classes[c].documents : 0;
    const std::uint64_t total = c < user.totals.size() ? user.totals[c] : 0;
    const std::uint64_t ledger =
        c < user.expected_stats.classes.size() ? user.expected_stats.classes[c].documents : 0;
    if (tokens != total) {
      scan.Problem(name + " has a token total of " + std::to_string(tokens) + " in class " +
                   std::to_string(c) + " but its token counts sum to " + std::to_string(total));
    }
    if (documents != ledger) {
      scan.Problem(name + " has " + std::to_string(documents) + " documents in class " +
                   std::to_string(c) + " but its ledger holds " + std::to_string(ledger));
    }
  }
  if (stats.vocabulary_size != user.token_records) {
    scan.Problem(name + " has |V| " + std::to_string(stats.vocabulary_size) + " but " +
                 std::to_string(user.token_records) + " token records");
  }
  if (user.matched != user.expected.size()) {
    scan.Problem(name + " lacks the token records of " +
                 std::to_string(user.expected.size() - user.matched) + " tokens its ledger added");
  }
  if (user.stray_source_keys > 0) {
    scan.Problem(name + " has " + std::to_string(user.stray_source_keys) +
                 " source index entries of no ledger record");
  }
  if (user.indexed != user.expected_source_keys.size()) {
    scan.Problem(name + " has " + std::to_string(user.expected_source_keys.size() - user.indexed) +
                 " ledger records missing from its source index");
  }
}

// Invariant 8: one pass over the users family, one user's records in memory at a time.
std::expected<void, Error> ScanUsers(const Folder& folder, Scan& scan) {
  if (folder.users == nullptr) return {};
  const model::ModelStats& global = scan.report.stats;
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(folder.db->NewIterator(read_options, folder.users));
  std::optional<UserScan> user;
  const auto finish = [&] {
    FinishUser(*user, global, scan);
    if (scan.problem_count > user->problems_before) scan.damaged_users.push_back(user->user);
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++scan.report.user_records;
    const std::string key_bytes = it->key().ToString();
    const std::string_view value(it->value().data(), it->value().size());
    auto key = DecodeUserKey(key_bytes);
    if (!key) {
      scan.Problem("a users record has a malformed key");
      scan.malformed_user_keys.push_back(key_bytes);
      continue;
    }
    if (!user || user->user != key->user) {
      if (user) finish();
      user.emplace();
      user->user = std::string(key->user);
      user->problems_before = scan.problem_count;
      user->expected_stats = global;
      for (model::ClassStats& c : user->expected_stats.classes) c.documents = c.tokens = 0;
    }
    ++user->records;
    const std::string name = "user '" + user->user + "'";
    switch (key->kind) {
      case kUserBaseKind: {
        auto hash = DecodeTokenKey(key->rest);
        auto counts = DecodeTokenCounts(value);
        if (!hash || !counts) {
          scan.Problem(name + " has a corrupt base count record");
          break;
        }
        if (counts->size() > global.classes.size()) {
          scan.Problem(name + " base counts of token " + Hex(*hash) + " name unknown classes");
          break;
        }
        TokenCounts& expected = user->expected[*hash];
        expected.resize(std::max(expected.size(), counts->size()), 0);
        for (std::size_t c = 0; c < counts->size(); ++c) expected[c] += (*counts)[c];
        TrimZeros(*counts);
        if (counts->empty()) scan.Problem(name + " base token " + Hex(*hash) + " has zero counts");
        break;
      }
      case kUserBaseDocumentsKind: {
        auto documents = DecodeDocumentCounts(value);
        if (!documents || documents->size() > global.classes.size()) {
          scan.Problem(name + " has a corrupt base documents record");
          break;
        }
        for (std::size_t c = 0; c < documents->size(); ++c) {
          user->expected_stats.classes[c].documents += (*documents)[c];
        }
        break;
      }
      case kUserSeenKind:
        // Last-seen times only date tokens for the token expiry: any decodable value will do.
        if (!DecodeTokenKey(key->rest) || !DecodeLastSeen(value)) {
          scan.Problem(name + " has a corrupt last-seen record");
        }
        break;
      case kUserLedgerKind: {
        const std::string id(key->rest);
        auto entry = DecodeLedgerEntry(value);
        if (!entry) {
          scan.Problem(name + " ledger record '" + id + "' cannot be decoded");
          break;
        }
        const auto class_index = global.FindClass(entry->label);
        if (!class_index) {
          scan.Problem(name + " ledger record '" + id + "' names the unknown class '" +
                       entry->label + "'");
          break;
        }
        // A retired record's counts and document are in the user's base counts, and it has no
        // index entry.
        if (entry->retired) break;
        user->expected_source_keys.insert(EncodeSourceKey(id, entry->origin));
        ++user->expected_stats.classes[*class_index].documents;
        for (const BagEntry& token : entry->tokens) {
          TokenCounts& counts = user->expected[token.hash];
          counts.resize(std::max(counts.size(), *class_index + 1), 0);
          counts[*class_index] += token.count;
        }
        break;
      }
      case kUserSourceKind:
        if (user->expected_source_keys.contains(std::string(key->rest))) {
          ++user->indexed;
        } else {
          ++user->stray_source_keys;
        }
        break;
      case kUserStatsKind: {
        auto stats = DecodeModelStats(value);
        if (!stats) {
          scan.Problem(name + " has a corrupt stats record");
          break;
        }
        user->stats = std::move(*stats);
        // The ledger comes before the tokens: drop what added nothing.
        for (auto& [hash, counts] : user->expected) TrimZeros(counts);
        std::erase_if(user->expected, [](const auto& item) { return item.second.empty(); });
        break;
      }
      case kUserTokenKind: {
        ++user->token_records;
        auto hash = DecodeTokenKey(key->rest);
        auto counts = DecodeTokenCounts(value);
        if (!hash || !counts) {
          scan.Problem(name + " has a corrupt token record");
          break;
        }
        if (counts->size() > user->totals.size()) user->totals.resize(counts->size(), 0);
        for (std::size_t c = 0; c < counts->size(); ++c) user->totals[c] += (*counts)[c];
        TrimZeros(*counts);
        if (counts->empty()) scan.Problem(name + " token " + Hex(*hash) + " has zero counts");
        const auto expected = user->expected.find(*hash);
        const TokenCounts none;
        const TokenCounts& want = expected == user->expected.end() ? none : expected->second;
        if (expected != user->expected.end()) ++user->matched;
        if (*counts != want) {
          scan.Problem(name + " token " + Hex(*hash) + " counts differ from what its ledger added");
        }
        break;
      }
      default:
        scan.Problem(name + " has a record of unknown kind");
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the user layers", it->status());
  if (user) finish();
  return {};
}

// Adds to `batch` the rebuilding of `user`'s layer from its ledger: token records, stats and
// source index rewritten, any other record of the user deleted, and so are ledger records that
// cannot be decoded or name a class `classes` lacks (they could never be forgotten).
std::expected<void, Error> RebuildUser(const Folder& folder, const std::string& user,
                                       const model::ModelStats& classes,
                                       rocksdb::WriteBatch& batch) {
  model::ModelStats stats = classes;
  for (model::ClassStats& c : stats.classes) c.documents = c.tokens = 0;
  stats.vocabulary_size = 0;
  std::unordered_map<TokenHash, TokenCounts> tokens;
  std::vector<std::string> source_keys;
  const std::string begin = UserKindPrefix(user, kUserLedgerKind);
  const std::string end = UserKindPrefix(user, kUserLedgerKind + 1);
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(folder.db->NewIterator(read_options, folder.users));
  // The base counts stay as they are (the check reported those it cannot read: they go).
  const std::string base_begin = UserKindPrefix(user, kUserBaseKind);
  const std::string base_end = UserKindPrefix(user, kUserBaseKind + 1);
  for (it->Seek(base_begin); it->Valid() && it->key().compare(base_end) < 0; it->Next()) {
    auto hash = DecodeTokenKey(
        std::string_view(it->key().data(), it->key().size()).substr(base_begin.size()));
    auto counts = DecodeTokenCounts(std::string_view(it->value().data(), it->value().size()));
    if (!hash || !counts || counts->size() > stats.classes.size()) {
      batch.Delete(folder.users, it->key());
      continue;
    }
    TokenCounts& total = tokens[*hash];
    total.resize(std::max(total.size(), counts->size()), 0);
    for (std::size_t c = 0; c < counts->size(); ++c) total[c] += (*counts)[c];
  }
  if (!it->status().ok()) return RocksdbError("reading a user's base counts", it->status());
  std::string documents_value;
  const rocksdb::Status documents_status = folder.db->Get(
      rocksdb::ReadOptions(), folder.users, UserBaseDocumentsKey(user), &documents_value);
  if (documents_status.ok()) {
    auto documents = DecodeDocumentCounts(documents_value);
    if (documents && documents->size() <= stats.classes.size()) {
      for (std::size_t c = 0; c < documents->size(); ++c) {
        stats.classes[c].documents += (*documents)[c];
      }
    } else {
      batch.Delete(folder.users, UserBaseDocumentsKey(user));
    }
  } else if (!documents_status.IsNotFound()) {
    return RocksdbError("reading a user's base documents", documents_status);
  }
  for (it->Seek(begin); it->Valid() && it->key().compare(end) < 0; it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    auto entry = DecodeLedgerEntry(std::string_view(it->value().data(), it->value().size()));
    const auto class_index = entry ? stats.FindClass(entry->label) : std::nullopt;
    if (!class_index) {
      batch.Delete(folder.users, it->key());
      continue;
    }
    if (entry->retired) continue;  // Its counts and document are in the base counts.
    ++stats.classes[*class_index].documents;
    for (const BagEntry& token : entry->tokens) {
      TokenCounts& counts = tokens[token.hash];
      counts.resize(std::max(counts.size(), *class_index + 1), 0);
      counts[*class_index] += token.count;
    }
    source_keys.push_back(UserSourceKey(user, key.substr(begin.size()), entry->origin));
  }
  if (!it->status().ok()) return RocksdbError("reading a user's ledger", it->status());
  batch.DeleteRange(folder.users, UserKeyPrefix(user), base_begin);
  // The base counts, base documents and last-seen times ('b', 'd', 'e') stay.
  batch.DeleteRange(folder.users, UserKindPrefix(user, kUserSeenKind + 1), begin);
  batch.DeleteRange(folder.users, end, UserKeyEnd(user));
  for (auto& [hash, counts] : tokens) {
    TrimZeros(counts);
    if (counts.empty()) continue;
    for (std::size_t c = 0; c < counts.size(); ++c) stats.classes[c].tokens += counts[c];
    ++stats.vocabulary_size;
    batch.Put(folder.users, UserTokenKey(user, hash), EncodeTokenCounts(counts));
  }
  for (const std::string& key : source_keys) batch.Put(folder.users, key, "");
  if (stats.TotalDocuments() > 0 || stats.vocabulary_size > 0) {
    batch.Put(folder.users, UserStatsKey(user), EncodeModelStats(stats));
  }
  return {};
}

// Adds the base counts and documents (schema 4) to what the ledger says the model must be.
// Unreadable base records are problems; repair leaves them out.
std::expected<void, Error> AddBaseCounts(const Folder& folder, Scan& scan) {
  const std::size_t classes = scan.report.stats.classes.size();
  std::string documents_value;
  const rocksdb::Status status =
      folder.db->Get(rocksdb::ReadOptions(), folder.meta, kBaseDocumentsKey, &documents_value);
  if (status.ok()) {
    auto documents = DecodeDocumentCounts(documents_value);
    if (!documents || documents->size() > classes) {
      scan.Problem("the base documents record cannot be decoded");
      scan.corrupt_base_documents = true;
    } else {
      for (std::size_t c = 0; c < documents->size(); ++c) {
        scan.expected_stats.classes[c].documents += (*documents)[c];
      }
    }
  } else if (!status.IsNotFound()) {
    return RocksdbError("reading the base documents", status);
  }
  if (folder.base == nullptr) return {};
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(folder.db->NewIterator(read_options, folder.base));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++scan.report.base_records;
    auto hash = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
    auto counts = DecodeTokenCounts(std::string_view(it->value().data(), it->value().size()));
    if (!hash || !counts || counts->size() > classes) {
      scan.Problem("a base count record cannot be decoded");
      scan.corrupt_base_keys.push_back(it->key().ToString());
      continue;
    }
    TokenCounts& expected = scan.expected[*hash];
    expected.resize(std::max(expected.size(), counts->size()), 0);
    for (std::size_t c = 0; c < counts->size(); ++c) {
      expected[c] += (*counts)[c];
      scan.expected_stats.classes[c].tokens += (*counts)[c];
    }
    TrimZeros(*counts);
    if (counts->empty()) scan.Problem("base token " + Hex(*hash) + " has zero counts");
  }
  if (!it->status().ok()) return RocksdbError("reading the base counts", it->status());
  return {};
}

std::expected<Scan, Error> ScanFolder(const Folder& folder) {
  Scan scan;
  auto stats = ReadFolderStats(folder);
  if (!stats) return std::unexpected(stats.error());
  scan.report.stats = *stats;
  scan.expected_stats = *stats;
  for (model::ClassStats& c : scan.expected_stats.classes) c.documents = c.tokens = 0;
  scan.expected_stats.vocabulary_size = 0;

  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  // Invariants 4 and 5, and the expected counts of invariant 1.
  std::unique_ptr<rocksdb::Iterator> it(folder.db->NewIterator(read_options, folder.ledger));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++scan.report.ledger_records;
    const std::string id = it->key().ToString();
    auto entry = DecodeLedgerEntry(std::string_view(it->value().data(), it->value().size()));
    if (!entry) {
      scan.Problem("ledger record '" + id + "' cannot be decoded: " + entry.error().message);
      scan.corrupt_ledger_ids.push_back(id);
      continue;
    }
    auto class_index = scan.expected_stats.FindClass(entry->label);
    if (!class_index) {
      scan.Problem("ledger record '" + id + "' names the unknown class '" + entry->label + "'");
      scan.expected_stats.classes.push_back({entry->label, 0, 0});
      class_index = scan.expected_stats.classes.size() - 1;
    }
    if (const auto cell = model::FeedbackCellOf(*entry)) scan.expected_feedback.Add(*cell);
    // A retired record's counts and document are in the base counts, and it has no index entry.
    if (entry->retired) continue;
    scan.expected_source_keys.insert(EncodeSourceKey(id, entry->origin));
    if (entry->checked) continue;  // A checked record counted nothing.
    ++scan.expected_stats.classes[*class_index].documents;
    for (const BagEntry& token : entry->tokens) {
      TokenCounts& counts = scan.expected[token.hash];
      counts.resize(std::max(counts.size(), *class_index + 1), 0);
      counts[*class_index] += token.count;
      scan.expected_stats.classes[*class_index].tokens += token.count;
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the ledger", it->status());
  // Invariants 1 and 4 count the base counts too.
  if (auto base = AddBaseCounts(folder, scan); !base) return std::unexpected(base.error());
  for (auto& [hash, counts] : scan.expected) TrimZeros(counts);
  std::erase_if(scan.expected, [](const auto& item) { return item.second.empty(); });
  scan.expected_stats.vocabulary_size = scan.expected.size();

  // Invariants 1 to 3 over the token records.
  std::vector<std::uint64_t> totals(scan.report.stats.classes.size(), 0);
  std::size_t matched = 0;
  it.reset(folder.db->NewIterator(read_options, folder.tokens));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ++scan.report.token_records;
    auto hash = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
    if (!hash) {
      scan.Problem("a token record has a malformed key");
      continue;
    }
    auto counts = DecodeTokenCounts(std::string_view(it->value().data(), it->value().size()));
    if (!counts) {
      scan.Problem("token " + Hex(*hash) + " has a corrupt record");
      continue;
    }
    if (counts->size() > totals.size()) totals.resize(counts->size(), 0);
    for (std::size_t c = 0; c < counts->size(); ++c) totals[c] += (*counts)[c];
    TrimZeros(*counts);
    if (counts->empty()) scan.Problem("token " + Hex(*hash) + " has a record of zero counts");
    const auto expected = scan.expected.find(*hash);
    const TokenCounts none;
    const TokenCounts& want = expected == scan.expected.end() ? none : expected->second;
    if (expected != scan.expected.end()) ++matched;
    if (*counts != want) {
      scan.Problem("token " + Hex(*hash) +
                   " counts differ from what the ledger and the base counts added");
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the token counts", it->status());
  if (matched != scan.expected.size()) {
    scan.Problem(std::to_string(scan.expected.size() - matched) +
                 " tokens added by the ledger have no token record");
  }
  // Invariant 6: the source index holds exactly one key per ledger record.
  std::size_t indexed = 0;
  it.reset(folder.db->NewIterator(read_options, folder.sources));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string key = it->key().ToString();
    if (scan.expected_source_keys.contains(key)) {
      ++indexed;
    } else {
      scan.stray_source_keys.push_back(std::move(key));
    }
  }
  if (!it->status().ok()) return RocksdbError("reading the source index", it->status());
  if (!scan.stray_source_keys.empty()) {
    scan.Problem(std::to_string(scan.stray_source_keys.size()) +
                 " source index entries point to no ledger record");
  }
  if (indexed != scan.expected_source_keys.size()) {
    scan.Problem(std::to_string(scan.expected_source_keys.size() - indexed) +
                 " ledger records are missing from the source index");
  }

  // Invariant 7.
  std::string calibration;
  const rocksdb::Status calibration_status =
      folder.db->Get(rocksdb::ReadOptions(), folder.meta, kCalibrationKey, &calibration);
  if (calibration_status.IsNotFound()) {
    scan.Problem("the calibration record is missing");
  } else if (!calibration_status.ok()) {
    return RocksdbError("reading the calibration record", calibration_status);
  } else if (auto histogram = DecodeFeedbackHistogram(calibration); !histogram) {
    scan.Problem("the calibration record cannot be decoded");
  } else if (histogram->layout == model::CalibrationLayout{} &&
             *histogram != scan.expected_feedback) {
    scan.Problem("the calibration record does not count the ledger's held-out scores (" +
                 std::to_string(histogram->SpamTotal()) + " spam, " +
                 std::to_string(histogram->HamTotal()) + " ham where the ledger has " +
                 std::to_string(scan.expected_feedback.SpamTotal()) + " and " +
                 std::to_string(scan.expected_feedback.HamTotal()) + ")");
  }

  const model::ModelStats& stored = scan.report.stats;
  if (totals.size() > stored.classes.size()) {
    scan.Problem("token records name more classes than exist");
  }
  for (std::size_t c = 0; c < stored.classes.size(); ++c) {
    const model::ClassStats& s = stored.classes[c];
    if (s.tokens != totals[c]) {
      scan.Problem("class '" + s.label + "' token total is " + std::to_string(s.tokens) +
                   " but its token counts sum to " + std::to_string(totals[c]));
    }
    if (s.documents != scan.expected_stats.classes[c].documents) {
      scan.Problem("class '" + s.label + "' has " + std::to_string(s.documents) +
                   " documents but the ledger and the base documents hold " +
                   std::to_string(scan.expected_stats.classes[c].documents));
    }
  }
  if (stored.vocabulary_size != scan.report.token_records) {
    scan.Problem("|V| is " + std::to_string(stored.vocabulary_size) + " but there are " +
                 std::to_string(scan.report.token_records) + " token records");
  }
  if (auto users = ScanUsers(folder, scan); !users) return std::unexpected(users.error());
  if (scan.problem_count > kMaxProblems) {
    scan.report.problems.push_back("... and " + std::to_string(scan.problem_count - kMaxProblems) +
                                   " more problems");
  }
  return scan;
}

}  // namespace

std::expected<CheckReport, Error> CheckModel(const std::string& path) {
  auto folder = OpenRocksdbFolder(path, FolderAccess::kReadOnly);
  if (!folder) return std::unexpected(folder.error());
  auto scan = ScanFolder(*folder);
  if (!scan) return std::unexpected(scan.error());
  return std::move(scan->report);
}

std::expected<CheckReport, Error> RepairModel(const std::string& path) {
  {
    auto folder = OpenRocksdbFolder(path, FolderAccess::kReadWrite);
    if (!folder) return std::unexpected(folder.error());
    auto scan = ScanFolder(*folder);
    if (!scan) return std::unexpected(scan.error());
    if (!scan->report.ok()) {
      // Every token record the ledger does not account for goes; every other one is rewritten.
      rocksdb::WriteBatch batch;
      rocksdb::ReadOptions read_options;
      read_options.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(folder->db->NewIterator(read_options, folder->tokens));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        auto hash = DecodeTokenKey(std::string_view(it->key().data(), it->key().size()));
        if (!hash || !scan->expected.contains(*hash)) batch.Delete(folder->tokens, it->key());
      }
      if (!it->status().ok()) return RocksdbError("reading the token counts", it->status());
      for (const auto& [hash, counts] : scan->expected) {
        batch.Put(folder->tokens, EncodeTokenKey(hash), EncodeTokenCounts(counts));
      }
      for (const std::string& id : scan->corrupt_ledger_ids) batch.Delete(folder->ledger, id);
      for (const std::string& key : scan->corrupt_base_keys) batch.Delete(folder->base, key);
      if (scan->corrupt_base_documents) batch.Delete(folder->meta, kBaseDocumentsKey);
      for (const std::string& key : scan->stray_source_keys) batch.Delete(folder->sources, key);
      for (const std::string& key : scan->expected_source_keys) batch.Put(folder->sources, key, "");
      batch.Put(folder->meta, kModelStatsKey, EncodeModelStats(scan->expected_stats));
      batch.Put(folder->meta, kCalibrationKey, EncodeFeedbackHistogram(scan->expected_feedback));
      for (const std::string& key : scan->malformed_user_keys) batch.Delete(folder->users, key);
      for (const std::string& user : scan->damaged_users) {
        if (auto rebuilt = RebuildUser(*folder, user, scan->expected_stats, batch); !rebuilt) {
          return std::unexpected(rebuilt.error());
        }
      }
      rocksdb::WriteOptions write_options;
      write_options.sync = true;
      const rocksdb::Status status = folder->db->Write(write_options, &batch);
      if (!status.ok()) return RocksdbError("writing the repaired model", status);
    }
  }
  return CheckModel(path);
}

}  // namespace nbspamd::storage
