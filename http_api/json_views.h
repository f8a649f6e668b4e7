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
// GET /stats: the classes' counts, |V|, and the options that shape verdicts and tokens.
[[nodiscard]] boost::json::object StatsJson(const model::ModelStats& stats,
                                            const core::SpamFilterOptions& options);
// GET /users/{id}/stats: the user's id, its layer's classes (documents and tokens, in the global
// classes' order), its documents and its distinct tokens ("vocabulary").
[[nodiscard]] boost::json::object UserStatsJson(std::string_view user,
                                                const model::ModelStats& stats);
// GET /admin/learned: the messages and their count.
[[nodiscard]] boost::json::object LearnedJson(std::span<const storage::LearnedMessage> messages);

}  // namespace nbspamd::http_api

#endif  // NBSPAMD_HTTP_API_JSON_VIEWS_H_
