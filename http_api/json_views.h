// JsonViews: the core's answers as the JSON bodies the HTTP API sends (README.md and
// docs/API.md describe each field). Pure functions of plain values, thread-safe; the only place
// that decides how a verdict, a training outcome or the model's figures look in JSON.
//
//   return JsonResponse(ClassifyJson(*outcome, explain), request.version());
#ifndef NBSPAMD_HTTP_API_JSON_VIEWS_H_
#define NBSPAMD_HTTP_API_JSON_VIEWS_H_

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <span>

#include "core/spam_filter.h"
#include "history/scan_history.h"
#include "history/scan_record.h"
#include "http_api/http_errors.h"
#include "model/model_stats.h"
#include "storage/store.h"

namespace nbspamd::http_api {

// A 200 response with `body` as JSON text (numbers as people write them) and a newline.
[[nodiscard]] Response JsonResponse(const boost::json::value& body, unsigned version);

// POST /classify: label, verdict, probability, log_odds, score, spam_confidence, probabilities,
// token counts, and with `explain` > 0 the explained tokens.
[[nodiscard]] boost::json::object ClassifyJson(const core::ClassifyOutcome& outcome,
                                               std::size_t explain);
// POST /train: id, label, status ("queued" before this daemon applied it), tokens, stream_id.
[[nodiscard]] boost::json::object TrainJson(const core::TrainOutcome& outcome);
// POST /forget: id, status ("forgotten" or "queued"), stream_id.
[[nodiscard]] boost::json::object ForgetJson(const core::ForgetOutcome& outcome);
// GET /stats: the classes' counts, |V|, and the options that shape verdicts and tokens, with the
// configured thresholds (as a reload left them).
[[nodiscard]] boost::json::object StatsJson(const model::ModelStats& stats,
                                            const core::SpamFilterOptions& options,
                                            model::VerdictThresholds configured);
// GET /users/{id}/stats: the user's id, its layer's classes (documents and tokens, in the global
// classes' order), its documents and its distinct tokens ("vocabulary").
[[nodiscard]] boost::json::object UserStatsJson(std::string_view user,
                                                const model::ModelStats& stats);
// GET /history: a page of scans (each as ScanSummaryJson) and the next page's cursor ("next",
// null on the last page).
[[nodiscard]] boost::json::object ScanPageJson(const history::ScanPage& page);
// One scan of the history: scan_id, time_ms, front_end, user (null for the global model),
// message_key, label, verdict, score, spam_confidence, size, tokens, the kept facts (a hashed
// one as "#" and 16 hex digits, one not kept as null) and "learned" (ScanLearnedJson).
[[nodiscard]] boost::json::object ScanSummaryJson(const history::ScanSummary& summary);
// A scan's learned state (history/learned_state.h): null when never learned or forgotten, else
// {"state": "learned"|"forgotten", "as": the class (null when forgotten), "at": UTC time,
// "at_ms", "how", "by" (null: no source), "changes"}.
[[nodiscard]] boost::json::value ScanLearnedJson(
    const std::optional<history::LearnedState>& learned);
// How the history keeps each fact ("keep", "hash" or "off") and "clear_days", the days after
// which clear subjects, senders and recipients are hashed (0: never).
[[nodiscard]] boost::json::object HistoryFactsJson(const history::FactPolicies& facts,
                                                   std::int64_t clear_facts_ms);
// GET /history/{id}: the summary, the explaining tokens ("explain", as /classify's) and the
// number of distinct tokens a retrain learns ("bag_tokens").
[[nodiscard]] boost::json::object ScanJson(const history::ScanRecord& record);
// GET /admin/learned: the messages and their count.
[[nodiscard]] boost::json::object LearnedJson(std::span<const storage::LearnedMessage> messages);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_JSON_VIEWS_H_
