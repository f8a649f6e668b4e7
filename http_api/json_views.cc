#include "http_api/json_views.h"

#include <boost/beast/http/field.hpp>
#include <boost/json/array.hpp>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>
#include <utility>

#include "common/json_text.h"
#include "common/utc_time.h"
#include "common/utf8.h"
#include "model/verdict.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

// One explained token, as /classify and /history/{id} show it (tokens are UTF-8).
json::object TokenJson(std::string_view token, TokenSource source, std::uint32_t count,
                       double weight) {
  // Indexed by TokenSource.
  static constexpr const char* kSources[] = {"body", "header", "url", "meta", "bytes"};
  static_assert(std::size(kSources) == static_cast<std::size_t>(kLastTokenSource) + 1);
  return json::object{{"token", token},
                      {"source", kSources[static_cast<int>(source)]},
                      {"count", count},
                      {"weight", weight}};
}

// A finite double, or null: JSON has no infinities.
json::value Number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

}  // namespace

Response JsonResponse(const json::value& body, unsigned version) {
  Response response(http::status::ok, version);
  response.set(http::field::content_type, "application/json");
  response.body() = WriteJson(body);
  response.body() += '\n';
  response.prepare_payload();
  return response;
}

json::object ClassifyJson(const core::ClassifyOutcome& outcome, std::size_t explain) {
  const model::ClassifyResult& result = outcome.result;
  json::object body;
  body["label"] = result.label();
  body["verdict"] = model::VerdictName(result.verdict);
  body["probability"] = Number(result.SpamProbability());
  body["log_odds"] = Number(result.log_odds);
  body["score"] = Number(result.score);
  body["spam_confidence"] = Number(outcome.spam_confidence);
  json::object probabilities;
  for (const model::ClassScore& c : result.classes) probabilities[c.label] = c.probability;
  body["probabilities"] = std::move(probabilities);
  body["tokens"] = outcome.tokens;
  body["known_tokens"] = result.known_tokens;
  body["scored_tokens"] = result.scored_tokens;
  if (explain > 0) {
    json::array explanations;
    for (const model::TokenExplanation& e : result.explanations) {
      explanations.push_back(TokenJson(e.token, e.source, e.count, e.weight));
    }
    body["explain"] = std::move(explanations);
  }
  if (!outcome.scan_id.empty()) {
    body["scan_id"] = outcome.scan_id;
    body["scan_signature"] = outcome.scan_signature;
  }
  return body;
}

json::value ScanLearnedJson(const std::optional<history::LearnedState>& learned) {
  if (!learned) return nullptr;
  const auto text_or_null = [](const std::string& text) -> json::value {
    if (text.empty()) return nullptr;
    return json::value(ReplaceInvalidUtf8(text));
  };
  const std::int64_t seconds = learned->time_ms >= 0 ? learned->time_ms / 1000 : 0;
  const char* state = learned->forgotten ? "forgotten" : learned->checked ? "checked" : "learned";
  return json::object{{"state", state},
                      {"as", text_or_null(learned->label)},
                      {"at", UtcTimeText(seconds)},
                      {"at_ms", learned->time_ms},
                      {"how", learned->how},
                      {"by", text_or_null(learned->by)},
                      {"changes", learned->changes}};
}

json::object HistoryFactsJson(const history::FactPolicies& facts, std::int64_t clear_facts_ms) {
  const auto name = [](history::FactPolicy policy) {
    return json::value(history::FactPolicyName(policy));
  };
  return json::object{
      {"message_id", name(facts.message_id)}, {"from_domain", name(facts.from_domain)},
      {"subject", name(facts.subject)},       {"client", name(facts.client)},
      {"recipients", name(facts.recipients)}, {"clear_days", clear_facts_ms / 86'400'000}};
}

json::object ScanSummaryJson(const history::ScanSummary& summary) {
  const auto text_or_null = [](const std::string& text) -> json::value {
    if (text.empty()) return nullptr;
    return json::value(ReplaceInvalidUtf8(text));
  };
  const history::ScanFacts& facts = summary.facts;
  return json::object{{"scan_id", summary.scan_id},
                      {"time_ms", summary.time_ms},
                      {"front_end", summary.front_end},
                      {"user", text_or_null(summary.user)},
                      {"message_key", ReplaceInvalidUtf8(summary.message_key)},
                      {"label", summary.label},
                      {"verdict", summary.verdict},
                      {"score", Number(summary.score)},
                      {"spam_confidence", Number(summary.spam_confidence)},
                      {"size", summary.size},
                      {"tokens", summary.tokens},
                      {"facts", json::object{{"message_id", text_or_null(facts.message_id)},
                                             {"from_domain", text_or_null(facts.from_domain)},
                                             {"subject", text_or_null(facts.subject)},
                                             {"client", text_or_null(facts.client)},
                                             {"recipients", text_or_null(facts.recipients)}}},
                      {"learned", ScanLearnedJson(summary.learned)}};
}

json::object ScanPageJson(const history::ScanPage& page) {
  json::array scans;
  for (const history::ScanSummary& summary : page.scans) scans.push_back(ScanSummaryJson(summary));
  json::object body{{"scans", std::move(scans)}};
  body["next"] = page.next.empty() ? json::value(nullptr) : json::value(page.next);
  return body;
}

json::object ScanJson(const history::ScanRecord& record) {
  json::object body = ScanSummaryJson(record.summary);
  json::array explanations;
  for (const history::ScanToken& token : record.detail.top) {
    explanations.push_back(TokenJson(token.text, token.source, token.count, token.weight));
  }
  body["explain"] = std::move(explanations);
  body["bag_tokens"] = record.detail.bag.size();
  return body;
}

json::object TrainJson(const core::TrainOutcome& outcome) {
  json::object body{{"id", outcome.id},
                    {"label", outcome.label},
                    {"status", outcome.queued ? std::string_view("queued")
                                              : model::LearnStatusName(outcome.status)},
                    {"tokens", outcome.tokens}};
  if (!outcome.stream_id.empty()) body["stream_id"] = outcome.stream_id;
  if (!outcome.scan_header.empty()) body["scan_header"] = outcome.scan_header;
  return body;
}

json::object ForgetJson(const core::ForgetOutcome& outcome) {
  json::object body{{"id", outcome.id}, {"status", outcome.queued ? "queued" : "forgotten"}};
  if (!outcome.stream_id.empty()) body["stream_id"] = outcome.stream_id;
  return body;
}

json::object StatsJson(const model::ModelStats& stats, const core::SpamFilterOptions& options,
                       model::VerdictThresholds configured) {
  json::array classes;
  for (const model::ClassStats& c : stats.classes) {
    classes.push_back(
        json::object{{"label", c.label}, {"documents", c.documents}, {"tokens", c.tokens}});
  }
  json::object tokenizer{{"boolean_counts", options.tokenizer.boolean_counts},
                         {"header_tokens", options.tokenizer.header_tokens},
                         {"word_bigrams", options.tokenizer.word_bigrams},
                         {"byte_ngrams", options.tokenizer.byte_ngrams},
                         {"byte_ngram_head", options.tokenizer.byte_ngram_head},
                         {"char_ngrams", options.tokenizer.word_char_ngrams},
                         {"fold_lookalikes", options.tokenizer.fold_lookalikes},
                         {"max_message_bytes", options.tokenizer.max_message_bytes},
                         {"max_tokens", options.tokenizer.max_tokens},
                         {"max_token_chars", options.tokenizer.max_token_chars}};
  return json::object{
      {"classes", std::move(classes)},
      {"documents", stats.TotalDocuments()},
      {"vocabulary", stats.vocabulary_size},
      {"alpha", options.alpha},
      {"spam_threshold", configured.spam},
      {"ham_threshold", configured.ham},
      {"score_min_weight", options.score_min_weight},
      {"score_form", options.score_form == model::ScoreForm::kLogOdds ? "log-odds" : "mean"},
      {"char_ngram_share", options.char_ngram_share},
      // null: every fed-back message is counted (docs/API.md "Training regime").
      {"train_margin", options.training_regime.margin ? json::value(*options.training_regime.margin)
                                                      : json::value(nullptr)},
      {"options", std::move(tokenizer)}};
}

json::object UserStatsJson(std::string_view user, const model::ModelStats& stats) {
  json::array classes;
  for (const model::ClassStats& c : stats.classes) {
    classes.push_back(
        json::object{{"label", c.label}, {"documents", c.documents}, {"tokens", c.tokens}});
  }
  return json::object{{"user", ReplaceInvalidUtf8(user)},
                      {"classes", std::move(classes)},
                      {"documents", stats.TotalDocuments()},
                      {"vocabulary", stats.vocabulary_size}};
}

json::object LearnedJson(std::span<const storage::LearnedMessage> messages) {
  json::array listed;
  for (const storage::LearnedMessage& message : messages) {
    listed.push_back(json::object{{"id", message.id},
                                  {"label", message.label},
                                  {"source", message.origin.source},
                                  {"learned_at", message.origin.learned_at},
                                  {"counted", !message.checked}});
  }
  const std::size_t count = listed.size();
  return json::object{{"messages", std::move(listed)}, {"count", count}};
}

}  // namespace nbspamd::http_api
