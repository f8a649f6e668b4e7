// ModelKnowledge: what the model knows, as the console's Model page asks it: one token's (or one
// typed word's) counts, probabilities, weight and user layers, and the strongest tokens of spam
// and of ham (model/token_knowledge.h has the maths and the rule).
//
//   auto looked_up = filter.Knowledge().LookUpWord("Viagra");  // viagra, subject:viagra, ...
//   auto strongest = filter.Knowledge().Strongest({.limit = 50, .min_count = 5});
//
// The model keeps tokens as 64-bit hashes only (common/token_hash.h). A lookup by text hashes
// the text; a lookup by word tokenizes it with the daemon's own tokenizer and options (the body
// words it gives) and adds the variants those words take in headers (`subject:`, `from-name:`,
// `mailer:` with the same words; `head:`, `to:`, `rcvd:` with the header words of
// tokenizer/header_words.h) when header_tokens is on. The strongest lists name a token's text
// when the daemon knows it: from the explaining tokens of the newest kScansForTexts scans of the
// scan history (each text checked: its HashToken is the token's hash); else only the hash.
//
// Costs: a lookup reads the in-memory counts (never the database) for the global model, and the
// layers of at most kUsersExamined users (Store::ReadUser: from the layer cache, or one scan of a
// user's records); a lookup by hash also reads at most kScansForTexts scans of the history for its
// text. Strongest visits the in-memory counts once (Store::VisitTokens: O(|V|), 27 to 100 ns a
// token) and reads at most kScansForTexts scans of the history; its answer is kept
// and reused for kStrongestReuse after it was computed even when the model has changed since (and
// for as long as it has not), so a client asking again and again costs at most one visit each
// kStrongestReuse. Nothing here is on the classify path, and classification never waits for it.
//
// Thread safety: every method may be called from any thread at once; Strongest's computations
// are one at a time (a second caller waits for the first's, and takes its answer when it asks for
// the same min_count).
// Errors: as each method says.
#ifndef NBSPAMD_CORE_MODEL_KNOWLEDGE_H_
#define NBSPAMD_CORE_MODEL_KNOWLEDGE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "common/token_bag.h"
#include "history/scan_history.h"
#include "model/model_stats.h"
#include "model/token_knowledge.h"
#include "storage/store.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::core {

// One user layer's counts of a token, aligned to the global classes.
struct UserTokenCounts {
  std::string user;
  std::vector<std::uint64_t> counts;
};

// One token as a lookup reports it.
struct KnownToken {
  std::string text;  // As looked up or made from the word; "" for a lookup by hash.
  TokenSource source = TokenSource::kBody;
  TokenHash hash = 0;
  std::vector<std::uint64_t> counts;  // n_wc, in the model's class order (all 0: unknown).
  model::TokenFigures figures;
  // The users examined whose layer counts the token (at most kUsersListed), in id order.
  std::vector<UserTokenCounts> users;
  bool more_users = false;  // More examined users than listed count it.

  [[nodiscard]] bool known() const {
    for (const std::uint64_t n : counts) {
      if (n != 0) return true;
    }
    return false;
  }
};

struct TokenLookup {
  std::shared_ptr<const model::ModelStats> stats;  // The global model the counts are of.
  std::vector<KnownToken> tokens;
  std::size_t users_examined = 0;  // The first users with a layer, in id order.
  bool users_truncated = false;    // There are more users than were examined.
};

// One token of a strongest list.
struct StrongTokenText {
  model::StrongToken token;
  std::string text;  // "" when the daemon knows no text of it.
  TokenSource source = TokenSource::kBody;
};

struct StrongestLists {
  std::shared_ptr<const model::ModelStats> stats;  // The model they were computed from.
  model::StrongestOptions options;
  std::vector<StrongTokenText> spam;  // Largest weight first.
  std::vector<StrongTokenText> ham;   // Smallest weight first.
  std::uint64_t tokens_visited = 0;
  std::uint64_t eligible = 0;       // Tokens that passed min_count.
  std::uint64_t texts_known = 0;    // Distinct texts gathered from the history.
  std::uint64_t scans_read = 0;     // Scans of the history they came from.
  std::int64_t computed_at_ms = 0;  // Unix time of the computation.
  double compute_ms = 0;            // How long it took.
};

class ModelKnowledge {
 public:
  static constexpr std::size_t kUsersExamined = 100;
  static constexpr std::size_t kUsersListed = 20;
  static constexpr std::size_t kScansForTexts = 200;
  static constexpr std::size_t kMaxStrongest = 500;  // Most tokens a list may ask for.
  static constexpr std::size_t kMaxLookupBytes = 1024;
  static constexpr std::chrono::milliseconds kStrongestReuse{2000};

  // `history` is read at each call (it may open late). All must outlive this.
  ModelKnowledge(const storage::Store& store, const tokenizer::Tokenizer& tokenizer, double alpha,
                 const std::atomic<history::ScanHistory*>& history)
      : store_(store), tokenizer_(tokenizer), alpha_(alpha), history_(history) {}
  ModelKnowledge(const ModelKnowledge&) = delete;
  ModelKnowledge& operator=(const ModelKnowledge&) = delete;

  // The token whose full text (prefix included, e.g. "subject:free") is `text`.
  // Errors: kInvalidArgument for an empty text or one over kMaxLookupBytes; user layers' read
  // errors (kDataLoss, kInternal).
  [[nodiscard]] std::expected<TokenLookup, Error> LookUpText(std::string_view text) const;
  // The tokens the daemon would make of `word` as a user types it (see above), each once, body
  // tokens first. A word that gives no token gives an empty list. Errors: as LookUpText.
  [[nodiscard]] std::expected<TokenLookup, Error> LookUpWord(std::string_view word) const;
  // The token of hash `hash` (its text named when the daemon knows it, as Strongest does).
  // Errors: as LookUpText but for the text's.
  [[nodiscard]] std::expected<TokenLookup, Error> LookUpHash(TokenHash hash) const;

  // The strongest tokens of spam and of ham (model::StrongestTokens), each list at most
  // options.limit long. Errors: kInvalidArgument for a limit of 0 or over kMaxStrongest;
  // kFailedPrecondition until spam and ham both have documents; the store's (VisitTokens).
  [[nodiscard]] std::expected<StrongestLists, Error> Strongest(
      model::StrongestOptions options) const;

 private:
  struct Wanted {
    std::string text;
    TokenSource source;
    TokenHash hash;
  };
  [[nodiscard]] std::expected<TokenLookup, Error> LookUp(std::vector<Wanted> wanted) const;
  // Texts of tokens, by hash, from the newest scans of the history; `scans` is set to how many
  // were read.
  [[nodiscard]] std::unordered_map<TokenHash, std::pair<std::string, TokenSource>> HistoryTexts(
      std::uint64_t& scans) const;

  const storage::Store& store_;
  const tokenizer::Tokenizer& tokenizer_;
  const double alpha_;
  const std::atomic<history::ScanHistory*>& history_;
  mutable std::mutex strongest_mutex_;                    // Guards cached_ and cached_at_.
  mutable std::shared_ptr<const StrongestLists> cached_;  // Computed with min_count and kMax.
  mutable std::chrono::steady_clock::time_point cached_at_;
};

}  // namespace nbspamd::core

#endif  // NBSPAMD_CORE_MODEL_KNOWLEDGE_H_
