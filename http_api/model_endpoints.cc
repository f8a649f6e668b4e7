// GET /model/token (what the model knows of a token or a typed word), GET /model/strongest (the
// strongest tokens of spam or ham) and GET /model/thresholds (what a pair of verdict thresholds
// would have done to the held-out feedback): the console's Model page (docs/API.md "The model").
// Each reads memory (the counts, the published held-out scores); /model/token also the layers of
// a bounded number of users and /model/strongest a bounded number of scans
// (core/model_knowledge.h).
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>

#include "common/hex.h"
#include "common/utf8.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"
#include "model/calibration.h"
#include "model/feedback_thresholds.h"
#include "model/threshold_outcomes.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr const char* kSources[] = {"body", "header", "url", "meta", "bytes"};
static_assert(std::size(kSources) == static_cast<std::size_t>(kLastTokenSource) + 1);

// The threshold curve's points: every 0.1 over the calibration's score range.
constexpr double kCurveStep = 0.1;

std::string HashHex(TokenHash hash) {
  std::string text;
  AppendHex(text, hash, 16);
  return text;
}

json::value Number(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return nullptr;
  return *value;
}

// {label: value} over the model's classes.
template <typename Value>
json::object ByClass(const model::ModelStats& stats, std::span<const Value> values) {
  json::object out;
  for (std::size_t c = 0; c < stats.classes.size(); ++c) {
    out[stats.classes[c].label] = c < values.size() ? json::value(values[c]) : json::value(0);
  }
  return out;
}

json::object ClassesJson(const model::ModelStats& stats) {
  json::object classes;
  for (const model::ClassStats& c : stats.classes) {
    classes[c.label] = json::object{{"documents", c.documents}, {"tokens", c.tokens}};
  }
  return classes;
}

std::expected<std::uint64_t, std::string> WholeNumber(const Input& input, std::string_view key,
                                                      std::uint64_t fallback, std::uint64_t low,
                                                      std::uint64_t high) {
  const auto it = input.query.find(key);
  if (it == input.query.end()) return fallback;
  std::uint64_t value = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    return std::unexpected(std::string(key) + " must be a whole number from " +
                           std::to_string(low) + " to " + std::to_string(high));
  }
  return value;
}

std::expected<std::optional<double>, std::string> Threshold(const Input& input,
                                                            std::string_view key) {
  const auto it = input.query.find(key);
  if (it == input.query.end()) return std::nullopt;
  double value = 0;
  const std::string& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::unexpected(std::string(key) + " must be a finite number");
  }
  return value;
}

json::object VerdictCountsJson(const model::VerdictCounts& counts) {
  return json::object{{"total", counts.total},
                      {"spam", counts.spam},
                      {"unsure", counts.unsure},
                      {"ham", counts.ham},
                      {"spam_rate", Number(counts.Rate(counts.spam))},
                      {"unsure_rate", Number(counts.Rate(counts.unsure))},
                      {"ham_rate", Number(counts.Rate(counts.ham))}};
}

json::object OutcomeJson(const model::ThresholdOutcome& outcome) {
  return json::object{{"spam_threshold", outcome.thresholds.spam},
                      {"ham_threshold", outcome.thresholds.ham},
                      {"hams", VerdictCountsJson(outcome.ham)},
                      {"spams", VerdictCountsJson(outcome.spam)},
                      {"ham_called_spam", Number(outcome.ham.Rate(outcome.ham.spam))},
                      {"spam_missed", Number(outcome.spam.Rate(outcome.spam.ham))},
                      {"ham_unsure", Number(outcome.ham.Rate(outcome.ham.unsure))},
                      {"spam_unsure", Number(outcome.spam.Rate(outcome.spam.unsure))}};
}

}  // namespace

std::optional<Response> HandleModelToken(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"text", "word", "hash"}, {})) return *rejected;
  const auto text = input.query.find("text");
  const auto word = input.query.find("word");
  const auto hash = input.query.find("hash");
  const int given =
      (text != input.query.end()) + (word != input.query.end()) + (hash != input.query.end());
  if (given != 1) {
    return call.Error(http::status::bad_request, "invalid_argument",
                      "give exactly one of text= (a token's full text), word= (a word as typed) "
                      "and hash= (16 hex digits)");
  }
  std::expected<core::TokenLookup, Error> lookup;
  const core::ModelKnowledge& knowledge = call.filter.Knowledge();
  if (text != input.query.end()) {
    lookup = knowledge.LookUpText(text->second);
  } else if (word != input.query.end()) {
    lookup = knowledge.LookUpWord(word->second);
  } else {
    const std::string& hex = hash->second;
    TokenHash value = 0;
    const auto [end, error] = std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
    if (hex.size() != 16 || error != std::errc() || end != hex.data() + hex.size()) {
      return call.Error(http::status::bad_request, "invalid_argument",
                        "hash must be 16 hexadecimal digits");
    }
    lookup = knowledge.LookUpHash(value);
  }
  if (!lookup) return call.Error(lookup.error());
  const model::ModelStats& stats = *lookup->stats;
  json::array tokens;
  for (const core::KnownToken& token : lookup->tokens) {
    json::array users;
    for (const core::UserTokenCounts& user : token.users) {
      users.emplace_back(json::object{{"user", ReplaceInvalidUtf8(user.user)},
                                      {"counts", ByClass<std::uint64_t>(stats, user.counts)}});
    }
    tokens.emplace_back(
        json::object{{"token", token.text.empty() ? json::value(nullptr)
                                                  : json::value(ReplaceInvalidUtf8(token.text))},
                     {"source", kSources[static_cast<int>(token.source)]},
                     {"hash", HashHex(token.hash)},
                     {"known", token.known()},
                     {"counts", ByClass<std::uint64_t>(stats, token.counts)},
                     {"probabilities", ByClass<double>(stats, token.figures.probabilities)},
                     {"weight", Number(token.figures.weight)},
                     {"users", std::move(users)},
                     {"more_users", token.more_users}});
  }
  return JsonResponse(json::object{{"tokens", std::move(tokens)},
                                   {"classes", ClassesJson(stats)},
                                   {"vocabulary", stats.vocabulary_size},
                                   {"alpha", call.filter.options().alpha},
                                   {"score_min_weight", call.filter.options().score_min_weight},
                                   {"users_examined", lookup->users_examined},
                                   {"users_truncated", lookup->users_truncated}},
                      call.request.version());
}

std::optional<Response> HandleModelStrongest(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"class", "limit", "min_count"}, {})) {
    return *rejected;
  }
  const auto label = input.query.find("class");
  if (label == input.query.end() || (label->second != "spam" && label->second != "ham")) {
    return call.Error(http::status::bad_request, "invalid_argument",
                      "class must be spam or ham (weights contrast the two)");
  }
  const auto limit = WholeNumber(input, "limit", 50, 1, core::ModelKnowledge::kMaxStrongest);
  if (!limit) return call.Error(http::status::bad_request, "invalid_argument", limit.error());
  const auto min_count = WholeNumber(input, "min_count", 5, 1, 1'000'000'000);
  if (!min_count) {
    return call.Error(http::status::bad_request, "invalid_argument", min_count.error());
  }
  auto lists = call.filter.Knowledge().Strongest(
      {.limit = static_cast<std::size_t>(*limit), .min_count = *min_count});
  if (!lists) return call.Error(lists.error());
  const bool spam = label->second == "spam";
  json::array tokens;
  for (const core::StrongTokenText& entry : spam ? lists->spam : lists->ham) {
    tokens.emplace_back(json::object{
        {"token",
         entry.text.empty() ? json::value(nullptr) : json::value(ReplaceInvalidUtf8(entry.text))},
        {"source", entry.text.empty() ? json::value(nullptr)
                                      : json::value(kSources[static_cast<int>(entry.source)])},
        {"hash", HashHex(entry.token.hash)},
        {"spam", entry.token.spam},
        {"ham", entry.token.ham},
        {"weight", entry.token.weight}});
  }
  return JsonResponse(
      json::object{
          {"class", label->second},
          {"limit", *limit},
          {"min_count", *min_count},
          {"rule", spam ? "the tokens counted at least min_count times in spam and ham together, "
                          "largest weight first (weight > 0), ties by hash"
                        : "the tokens counted at least min_count times in spam and ham together, "
                          "smallest weight first (weight < 0), ties by hash"},
          {"tokens", std::move(tokens)},
          {"classes", ClassesJson(*lists->stats)},
          {"vocabulary", lists->stats->vocabulary_size},
          {"tokens_visited", lists->tokens_visited},
          {"eligible", lists->eligible},
          {"texts_known", lists->texts_known},
          {"scans_read", lists->scans_read},
          {"computed_at_ms", lists->computed_at_ms},
          {"compute_ms", lists->compute_ms}},
      call.request.version());
}

std::optional<Response> HandleModelThresholds(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"spam", "ham"}, {})) return *rejected;
  const auto spam = Threshold(input, "spam");
  if (!spam) return call.Error(http::status::bad_request, "invalid_argument", spam.error());
  const auto ham = Threshold(input, "ham");
  if (!ham) return call.Error(http::status::bad_request, "invalid_argument", ham.error());
  const model::VerdictThresholds current = call.filter.Thresholds();
  const model::VerdictThresholds asked{.spam = spam->value_or(current.spam),
                                       .ham = ham->value_or(current.ham)};
  if (asked.ham > asked.spam) {
    return call.Error(http::status::bad_request, "invalid_argument",
                      "ham must be at most spam (the ham threshold is the lower one)");
  }
  const model::SortedHeldOut held_out(*call.filter.HeldOutFeedback());
  json::array curve;
  for (const model::ThresholdPoint& point :
       held_out.Curve(model::kCalibrationLow, model::kCalibrationHigh, kCurveStep)) {
    curve.emplace_back(json::object{{"threshold", std::round(point.threshold * 10) / 10},
                                    {"hams_above", point.hams_above},
                                    {"spams_at_or_below", point.spams_at_or_below}});
  }
  const model::VerdictThresholds configured = call.filter.ConfiguredThresholds();
  return JsonResponse(json::object{{"hams", held_out.hams()},
                                   {"spams", held_out.spams()},
                                   {"window", model::kFeedbackWindow},
                                   {"current", OutcomeJson(held_out.OutcomeOf(current))},
                                   {"configured", json::object{{"spam_threshold", configured.spam},
                                                               {"ham_threshold", configured.ham}}},
                                   {"pair", OutcomeJson(held_out.OutcomeOf(asked))},
                                   {"curve", std::move(curve)}},
                      call.request.version());
}

}  // namespace nbspamd::http_api
