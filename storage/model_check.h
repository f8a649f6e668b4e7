// Model check and repair: verifies offline that the records of a RocksDB data folder agree with
// each other, and rebuilds the derived records from the training ledger when they do not.
//
//   auto report = CheckModel("data");           // read-only; the daemon may be stopped or not
//   if (report && !report->ok()) RepairModel("data");  // REQUIRES: no daemon on the folder
//
// The invariants (docs/RELIABILITY.md):
//   1. every token record's count in class c equals its base count in c (schema 4: the counts no
//      ledger record accounts for, put there by a restore or merge of a dump, docs/STORAGE.md
//      "Base counts") plus the sum of that token's counts over the ledger records learned as c
//      (so forgetting every message leaves the base counts and nothing else behind);
//   2. each class's token total n_c equals the sum of its token counts;
//   3. |V| equals the number of token records, and no record is all zeros;
//   4. each class's document count N_c equals its base documents plus the number of ledger
//      records learned as c;
//   5. every ledger record decodes and names an existing class;
//   6. the source index holds exactly one entry per ledger record, for its origin;
//   A retired ledger record (schema 5, docs/STORAGE.md "Ledger retention") has moved its counts
//   and its document to the base counts: 1, 4 and 6 leave it out, 5 and 7 count it.
//   7. the calibration record counts exactly the held-out scores of the ledger records
//      (model::FeedbackCellOf). A record of another layout is not a problem: the daemon rebuilds
//      it from the ledger when it opens the folder.
//   8. for each user layer (docs/STORAGE.md): its token records are what its own ledger records
//      and its own base counts added (1), its stats record's token totals and |V_u| agree with them
//      (2, 3) and its document counts with its ledger (4), its ledger records name global classes
//      (5), its source index matches its ledger (6); its stats name the global classes, in order; a
//      user with any record has a stats record. A retired user record counts as a retired global
//      one: its counts and document are in the user's base counts, it has no index entry.
// The ledger and the base counts are the source of truth: the ledger holds exactly what each
// learned message added, the base counts what came from elsewhere.
#ifndef NBSPAMD_STORAGE_MODEL_CHECK_H_
#define NBSPAMD_STORAGE_MODEL_CHECK_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/model_stats.h"

namespace nbspamd::storage {

struct CheckReport {
  model::ModelStats stats;            // The stored stats record.
  std::uint64_t token_records = 0;    // Records in the tokens family.
  std::uint64_t ledger_records = 0;   // Records in the ledger.
  std::uint64_t base_records = 0;     // Records in the base family.
  std::uint64_t user_layers = 0;      // Users with a stats record.
  std::uint64_t user_records = 0;     // Records in the users family.
  std::vector<std::string> problems;  // One sentence each; at most kMaxProblems, then a summary.

  [[nodiscard]] bool ok() const { return problems.empty(); }
};

// How many problems a report lists one by one before it only counts them.
inline constexpr std::size_t kMaxProblems = 20;

// Checks the folder `path` (opened read-only) against the invariants above.
// Errors: kNotFound when there is no model in `path`, kDataLoss when the schema version or the
// stats record is unreadable, kInternal when RocksDB cannot open it.
[[nodiscard]] std::expected<CheckReport, Error> CheckModel(const std::string& path);

// Rewrites the token records, the stats and the calibration record of `path` from its ledger
// and base counts (base records that cannot be decoded are deleted),
// and each user layer that fails invariant 8 from that user's ledger (its token records, stats
// and source index; its ledger records that cannot be decoded or name no class are deleted),
// in one synced write, so that every invariant holds; ledger records that cannot be
// decoded are deleted (they could never be forgotten). Classes keep their order; a ledger label of
// no class becomes a new class. Returns the check of the repaired folder. REQUIRES: no daemon has
// the folder open (RocksDB's lock refuses it otherwise: kInternal).
[[nodiscard]] std::expected<CheckReport, Error> RepairModel(const std::string& path);

}  // namespace nbspamd::storage

#endif  // NBSPAMD_STORAGE_MODEL_CHECK_H_
