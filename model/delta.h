// Delta: one training event (learn, relearn or forget) as the changes storage applies atomically.
#ifndef NBSPAMD_MODEL_DELTA_H_
#define NBSPAMD_MODEL_DELTA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::model {

// Who had a message learned, and when: kept with its ledger record, so that an administrator
// can list, and roll back, what one source trained in a time window.
struct LearnOrigin {
  std::string source;           // The bearer token's name; "" when training needs no token.
  std::int64_t learned_at = 0;  // Unix time, seconds.

  friend bool operator==(const LearnOrigin&, const LearnOrigin&) = default;
};

// The source of the messages the daemon learned by itself from its own confident verdicts
// (core/autolearn.h). Do not change: stored in ledger records and the source index. A learn
// through it never changes an existing record, a learn through any other source takes over a
// record of it (PlanLearn), and its records calibrate nothing (FeedbackCellOf).
inline constexpr std::string_view kAutolearnSource = "autolearn";

// The score (ClassifyResult::score) the model gave a message just before it was first learned:
// a held-out score, as in an online evaluation. With the message's true label it is one piece of
// the feedback that calibrates spam_confidence (model/calibration.h).
struct HeldOutScore {
  // The definition of the score it was taken with (kScoreScale when it was recorded): a score
  // of another definition no longer calibrates anything.
  std::uint32_t scale = 0;
  double score = 0;

  friend bool operator==(const HeldOutScore&, const HeldOutScore&) = default;
};

// What the training ledger holds for one learned message: its class and exactly the token
// counts that were added, so that forgetting it removes exactly those; its origin; and its
// held-out score, when the model could give one (spam and ham both had documents).
struct LedgerEntry {
  std::string label;
  std::vector<BagEntry> tokens;  // Sorted by hash, each once.
  LearnOrigin origin;
  // Taken when the id was first learned and kept when it is relearned as another class (the
  // score was held out then; the label is corrected). nullopt for records without one.
  std::optional<HeldOutScore> held_out;
  // Retired by the ledger retention (docs/STORAGE.md "Ledger retention"): the record's counts
  // were moved to the base counts, `tokens` is empty, and the message can no longer be
  // forgotten or relearned as another class. Label, origin and held-out score stay: the record
  // still answers what was learned, and still calibrates.
  bool retired = false;
  // Checked only (error-driven training, core/training_writer.h "Training regime"): the message
  // was fed back, scored, and the model was right beyond the margin, so nothing of it was
  // counted: `tokens` is empty and it adds no document. Label, origin and held-out score stay:
  // the record says the message was seen, calibrates spam_confidence, is forgotten like any
  // record, and a later learn of it (a correction, or a pass that finds it near the boundary)
  // counts it then.
  bool checked = false;

  friend bool operator==(const LedgerEntry&, const LedgerEntry&) = default;
};

// n_wc changes by `change` for token `hash` in class `class_index`.
struct TokenCountChange {
  TokenHash hash = 0;
  std::uint32_t class_index = 0;
  std::int64_t change = 0;

  friend bool operator==(const TokenCountChange&, const TokenCountChange&) = default;
};

// N_c changes by `change` for class `class_index`.
struct DocumentCountChange {
  std::uint32_t class_index = 0;
  std::int64_t change = 0;

  friend bool operator==(const DocumentCountChange&, const DocumentCountChange&) = default;
};

// The calibration histogram's count of held-out scores in bin `bin` whose true class is spam
// (else ham) changes by `change` (model/calibration.h).
struct FeedbackChange {
  std::uint32_t bin = 0;
  bool spam = false;
  std::int64_t change = 0;

  friend bool operator==(const FeedbackChange&, const FeedbackChange&) = default;
};

// The changes of one training event to one user's layer (docs/STORAGE.md): the user's
// token counts n_wcu and documents N_cu, and the user's own ledger record. Class indices are the
// global ones (those of the Delta that carries it, after its new_classes): a layer has the
// global classes. Storage derives the user's n_cu and distinct tokens from the token changes.
struct UserLayerChange {
  std::string user;  // Whose layer: model::CheckUserId holds.
  std::vector<TokenCountChange> token_changes;
  std::vector<DocumentCountChange> document_changes;
  std::string ledger_id;                    // The message id whose user record changes.
  std::optional<LedgerEntry> ledger_entry;  // The user's new record, or nullopt to erase it.
  // The origin of the user record that ledger_entry replaces or erases; nullopt for a new id.
  std::optional<LearnOrigin> replaced_origin;

  friend bool operator==(const UserLayerChange&, const UserLayerChange&) = default;
};

// All the changes of one training event. Storage applies them together or not at all; from the
// token changes it also derives each class's token total n_c and |V|, so those stay exact.
//
// Class indices refer to the class list after `new_classes` has been appended to it.
struct Delta {
  std::vector<std::string> new_classes;
  std::vector<TokenCountChange> token_changes;
  std::vector<DocumentCountChange> document_changes;
  std::string ledger_id;                    // The message id whose ledger record changes.
  std::optional<LedgerEntry> ledger_entry;  // The new record, or nullopt to erase it.
  // The origin of the record that ledger_entry replaces or erases; nullopt for a new id.
  std::optional<LearnOrigin> replaced_origin;
  std::string stream_position;  // Replication position stored with it; "" for none.
  // The calibration cells of the records that ledger_entry adds and replaces or erases.
  std::vector<FeedbackChange> feedback_changes;
  // The change to a user's layer, applied with the global changes above in one atomic write, or
  // neither; nullopt when the event trains no user. The global part may then be empty (a user's
  // feedback that does not train the global model).
  std::optional<UserLayerChange> user;

  friend bool operator==(const Delta&, const Delta&) = default;
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_DELTA_H_
