#include "core/model_knowledge.h"

#include <algorithm>
#include <set>
#include <utility>

#include "common/token_hash.h"
#include "history/scan_query.h"
#include "tokenizer/header_words.h"

namespace nbspamd::core {
namespace {

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::expected<void, Error> CheckLookup(std::string_view text) {
  if (text.empty()) return MakeError(ErrorCode::kInvalidArgument, "the text to look up is empty");
  if (text.size() > ModelKnowledge::kMaxLookupBytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the text to look up is longer than " +
                         std::to_string(ModelKnowledge::kMaxLookupBytes) + " bytes");
  }
  return {};
}

// Prefixes whose words are split as body words are (tokenizer/mail_reader.h's AddText).
constexpr std::string_view kWordPrefixes[] = {"subject:", "from-name:", "mailer:"};
// Prefixes whose words are header words (tokenizer/header_words.h).
constexpr std::string_view kHeaderWordPrefixes[] = {"head:", "to:", "rcvd:"};

}  // namespace

std::expected<TokenLookup, Error> ModelKnowledge::LookUpText(std::string_view text) const {
  if (auto valid = CheckLookup(text); !valid) return std::unexpected(valid.error());
  TokenSource source = TokenSource::kBody;
  if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    const std::string_view prefix = text.substr(0, colon);
    source = prefix == "meta"                            ? TokenSource::kMeta
             : prefix == "url" || prefix == "url-domain" ? TokenSource::kUrl
                                                         : TokenSource::kHeader;
  }
  return LookUp({{std::string(text), source, HashToken(text)}});
}

std::expected<TokenLookup, Error> ModelKnowledge::LookUpWord(std::string_view word) const {
  if (auto valid = CheckLookup(word); !valid) return std::unexpected(valid.error());
  std::vector<Wanted> wanted;
  std::set<std::string, std::less<>> seen;
  const auto add = [&](std::string text, TokenSource source) {
    if (seen.contains(text)) return;
    seen.insert(text);
    const TokenHash hash = HashToken(text);
    wanted.push_back({std::move(text), source, hash});
  };
  // A blank line first, so that a word such as "Subject: x" is read as body text, not a header.
  const TokenBag bag = tokenizer_.Tokenize(std::string("\n") + std::string(word), true);
  std::vector<std::string> words;
  // The words first, then their character n-grams.
  for (const TokenFamily family : {TokenFamily::kWord, TokenFamily::kCharNgram}) {
    for (std::size_t i = 0; i < bag.texts.size(); ++i) {
      if (bag.entries[i].family != family) continue;
      const TokenText text = bag.texts[i];
      if (text.source == TokenSource::kByteNgram) continue;  // The bytes typed, not a word.
      if (text.source == TokenSource::kBody && text.text.find(' ') == std::string_view::npos) {
        words.emplace_back(text.text);
      }
      add(std::string(text.text), text.source);
    }
  }
  if (tokenizer_.options().header_tokens) {
    for (const std::string_view prefix : kWordPrefixes) {
      for (const std::string& w : words) add(std::string(prefix) + w, TokenSource::kHeader);
    }
    std::string header_word;
    std::vector<std::string> header_words;
    tokenizer::ForEachHeaderWord(word, header_word, [&](const std::string& w) {
      header_words.push_back(w);
      return header_words.size() < 64;
    });
    for (const std::string_view prefix : kHeaderWordPrefixes) {
      for (const std::string& w : header_words) add(std::string(prefix) + w, TokenSource::kHeader);
    }
  }
  return LookUp(std::move(wanted));
}

std::expected<TokenLookup, Error> ModelKnowledge::LookUpHash(TokenHash hash) const {
  std::uint64_t scans = 0;
  std::string text;
  TokenSource source = TokenSource::kBody;
  auto texts = HistoryTexts(scans);
  if (const auto it = texts.find(hash); it != texts.end()) {
    text = it->second.first;
    source = it->second.second;
  }
  return LookUp({{std::move(text), source, hash}});
}

std::expected<TokenLookup, Error> ModelKnowledge::LookUp(std::vector<Wanted> wanted) const {
  std::vector<BagEntry> entries;
  entries.reserve(wanted.size());
  for (const Wanted& w : wanted) entries.push_back({.hash = w.hash, .count = 1});
  const model::Snapshot global = store_.Read(entries);
  TokenLookup lookup;
  lookup.stats = global.stats;
  const std::size_t classes = global.stats->classes.size();
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    KnownToken token;
    token.text = std::move(wanted[i].text);
    token.source = wanted[i].source;
    token.hash = wanted[i].hash;
    const auto counts = global.CountsOf(i);
    token.counts.assign(counts.begin(), counts.end());
    token.figures = model::FiguresOf(counts, *global.stats, alpha_);
    lookup.tokens.push_back(std::move(token));
  }
  if (wanted.empty()) return lookup;

  // The user layers: the first kUsersExamined users, each layer read once for all the tokens.
  auto users = store_.ListUsers("", kUsersExamined + 1);
  if (!users) {
    if (users.error().code == ErrorCode::kFailedPrecondition) return lookup;  // No layers here.
    return std::unexpected(std::move(users.error()));
  }
  lookup.users_truncated = users->size() > kUsersExamined;
  if (lookup.users_truncated) users->resize(kUsersExamined);
  lookup.users_examined = users->size();
  for (const storage::UserSummary& user : *users) {
    auto layer = store_.ReadUser(user.user, *global.stats, entries);
    if (!layer) return std::unexpected(std::move(layer.error()));
    if (!*layer) continue;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto counts = (*layer)->CountsOf(i);
      if (std::ranges::all_of(counts, [](std::uint64_t n) { return n == 0; })) continue;
      KnownToken& token = lookup.tokens[i];
      if (token.users.size() == kUsersListed) {
        token.more_users = true;
        continue;
      }
      std::vector<std::uint64_t> aligned(classes, 0);
      std::copy_n(counts.begin(), std::min(classes, counts.size()), aligned.begin());
      token.users.push_back({user.user, std::move(aligned)});
    }
  }
  return lookup;
}

std::unordered_map<TokenHash, std::pair<std::string, TokenSource>> ModelKnowledge::HistoryTexts(
    std::uint64_t& scans) const {
  std::unordered_map<TokenHash, std::pair<std::string, TokenSource>> texts;
  scans = 0;
  const history::ScanHistory* history = history_.load(std::memory_order_acquire);
  if (history == nullptr) return texts;
  history::ScanQuery query;
  query.limit = kScansForTexts;
  auto page = history->List(query);
  if (!page) return texts;  // Texts are a help, never needed: a failed read names none.
  for (const history::ScanSummary& summary : page->scans) {
    auto scan = history->Find(summary.scan_id);
    if (!scan) continue;
    ++scans;
    for (const history::ScanToken& token : scan->detail.top) {
      // A byte n-gram's text is a readable form, and a token kept as a hash is no text: neither
      // hashes to the token, so the check leaves them out.
      const TokenHash hash = HashToken(token.text);
      texts.try_emplace(hash, token.text, token.source);
    }
  }
  return texts;
}

std::expected<StrongestLists, Error> ModelKnowledge::Strongest(
    model::StrongestOptions options) const {
  if (options.limit == 0 || options.limit > kMaxStrongest) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "limit must be a whole number from 1 to " + std::to_string(kMaxStrongest));
  }
  if (options.min_count == 0) options.min_count = 1;
  std::shared_ptr<const StrongestLists> lists;
  {
    std::lock_guard lock(strongest_mutex_);
    const auto now = std::chrono::steady_clock::now();
    const std::shared_ptr<const model::ModelStats> stats = store_.Stats();
    if (cached_ && cached_->options.min_count == options.min_count &&
        (cached_->stats == stats || now - cached_at_ < kStrongestReuse)) {
      lists = cached_;
    } else {
      const auto spam = stats->FindClass("spam");
      const auto ham = stats->FindClass("ham");
      if (!spam || !ham || stats->classes[*spam].documents == 0 ||
          stats->classes[*ham].documents == 0) {
        return MakeError(ErrorCode::kFailedPrecondition,
                         "no token has a weight until spam and ham both have documents");
      }
      StrongestLists computed;
      computed.stats = stats;
      computed.options = {.limit = kMaxStrongest, .min_count = options.min_count};
      model::StrongestTokens strongest(*stats, alpha_, computed.options);
      std::uint64_t visited = 0;
      auto visit = store_.VisitTokens([&](TokenHash hash, std::span<const std::uint64_t> counts) {
        ++visited;
        strongest.Offer(hash, counts);
      });
      if (!visit) return std::unexpected(std::move(visit.error()));
      const auto texts = HistoryTexts(computed.scans_read);
      computed.texts_known = texts.size();
      const auto named = [&](const std::vector<model::StrongToken>& tokens) {
        std::vector<StrongTokenText> out;
        out.reserve(tokens.size());
        for (const model::StrongToken& token : tokens) {
          StrongTokenText entry;
          entry.token = token;
          if (const auto it = texts.find(token.hash); it != texts.end()) {
            entry.text = it->second.first;
            entry.source = it->second.second;
          }
          out.push_back(std::move(entry));
        }
        return out;
      };
      computed.spam = named(strongest.Spam());
      computed.ham = named(strongest.Ham());
      computed.tokens_visited = visited;
      computed.eligible = strongest.eligible();
      computed.computed_at_ms = NowMs();
      computed.compute_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - now).count();
      cached_ = std::make_shared<const StrongestLists>(std::move(computed));
      cached_at_ = now;
      lists = cached_;
    }
  }
  StrongestLists out = *lists;
  out.options.limit = options.limit;
  if (out.spam.size() > options.limit) out.spam.resize(options.limit);
  if (out.ham.size() > options.limit) out.ham.resize(options.limit);
  return out;
}

}  // namespace nbspamd::core
