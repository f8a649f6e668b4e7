// ScanRecord: what the daemon keeps of one classification in its scan history (scan_history.h):
// a small summary that lists and filters read, and the detail one scan's page and a retrain
// read (the explaining tokens and the message's token bag). Plain values.
#ifndef NBSPAMD_HISTORY_SCAN_RECORD_H_
#define NBSPAMD_HISTORY_SCAN_RECORD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/token_bag.h"

namespace nbspamd::history {

// The facts of a message that help find it again, as kept under their FactPolicy
// (fact_policy.h): the text, "#" and 16 hex digits of its hash, or "" (not kept or absent).
struct ScanFacts {
  std::string message_id = {};   // The Message-ID header, without <>.
  std::string from_domain = {};  // The domain of the From address.
  std::string subject = {};      // The Subject, decoded.
  std::string client = {};       // The SMTP client's address (milter).
  std::string recipients = {};   // The envelope recipients (milter, spamd's user), comma-separated.

  friend bool operator==(const ScanFacts&, const ScanFacts&) = default;
};

// Whether a scan's message was learned, relearned or forgotten through the daemon since it was
// classified: the last change, and how many there were (learned_state.h).
struct LearnedState {
  std::string label = {};  // The class it is learned as now; "" when forgotten.
  bool forgotten = false;  // The last change was a forget.
  // Error-driven training (train_margin): the last train was only checked: recorded in the
  // ledger as `label`, not counted, because the model already scored it so beyond the margin.
  bool checked = false;
  std::int64_t time_ms = 0;   // Unix time of the last change (once durable), in milliseconds.
  std::string how = {};       // How it was learned or forgotten (learned_state.h, kLearnedBy*).
  std::string by = {};        // Who: the source (a bearer token's name, "autolearn"); "": none.
  std::uint32_t changes = 0;  // Changes of state: 1 for a first learn, +1 a relearn or forget.

  friend bool operator==(const LearnedState&, const LearnedState&) = default;
};

struct ScanSummary {
  std::string scan_id = {};    // scan_id.h.
  std::int64_t time_ms = 0;    // Unix time of the classification, in milliseconds.
  std::string front_end = {};  // "http", "milter" or "spamd".
  std::string user = {};       // The user whose layer scored it; "" for the global model.
  // The id the message is learned under when this scan is trained (the classify's message id:
  // the one its client gave, else its content id).
  std::string message_key = {};
  std::string label = {};    // The most probable class.
  std::string verdict = {};  // "spam", "ham" or "unsure".
  std::optional<double> score = {};
  std::optional<double> spam_confidence = {};
  std::uint64_t size = 0;    // Bytes of the message.
  std::uint64_t tokens = 0;  // Token occurrences found in it.
  ScanFacts facts = {};
  // Not part of the summary's encoding: kept under keys of their own (scan_history.h), set by
  // ScanHistory::Find and List; none when never learned or forgotten through the daemon.
  std::optional<LearnedState> learned = {};

  friend bool operator==(const ScanSummary&, const ScanSummary&) = default;
};

// One token of the explanation: weight = count · (log P(t|spam) − log P(t|ham)).
struct ScanToken {
  std::string text = {};
  TokenSource source = TokenSource::kBody;
  std::uint32_t count = 0;
  double weight = 0;

  friend bool operator==(const ScanToken&, const ScanToken&) = default;
};

struct ScanDetail {
  std::vector<ScanToken> top = {};  // Largest |weight| first.
  std::vector<BagEntry> bag = {};   // The message's bag, sorted by hash: what a retrain learns.
  // The digest of the message's body (body_digest.h): a reported copy is learned as this scan
  // only when its body has the same. "" for scans recorded before it was kept.
  std::string body_digest = {};

  friend bool operator==(const ScanDetail&, const ScanDetail&) = default;
};

struct ScanRecord {
  ScanSummary summary = {};
  ScanDetail detail = {};

  friend bool operator==(const ScanRecord&, const ScanRecord&) = default;
};

}  // namespace nbspamd::history

#endif  // NBSPAMD_HISTORY_SCAN_RECORD_H_
