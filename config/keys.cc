#include "config/keys.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/key_kinds.h"

namespace nbspamd::config {
namespace {

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;

constexpr std::string_view kLogLevels[] = {"debug", "info", "warning", "error"};
constexpr std::string_view kLogFormats[] = {"logfmt", "json"};
constexpr std::string_view kFailModes[] = {"accept", "tempfail"};
constexpr std::string_view kFactPolicies[] = {"keep", "hash", "off"};
constexpr std::string_view kScoreForms[] = {"mean", "log-odds"};
constexpr std::string_view kVerdictThresholds[] = {"fixed", "feedback"};
constexpr std::string_view kClusterReadFrom[] = {"replica", "primary"};

constexpr std::array kKeys = {
    Key{.name = "listen",
        .metavar = "HOST:PORT",
        .help = "Address to listen on; port 0 picks a free port.",
        .kind = Kind::kString,
        .valid = "HOST:PORT with a port from 0 to 65535, an IPv6 host in brackets as in [::1]:7830",
        .set = &SetListen,
        .format = [](const Settings& s) { return QuoteToml(FormatListen(s)); }},
    Key{.name = "data_dir",
        .metavar = "DIR",
        .help = "Folder of the RocksDB model database (created if missing).",
        .kind = Kind::kString,
        .valid = "a non-empty path",
        .set =
            [](Settings& s, const Value& v) {
              if (std::get<std::string>(v).empty()) return false;
              s.data_dir = std::get<std::string>(v);
              return true;
            },
        .format = [](const Settings& s) { return QuoteToml(s.data_dir); }},
    UnsignedKey<&Settings::threads, 0, 256>("threads", "N",
                                            "Worker threads; 0 means one per hardware thread."),
    DoubleKey<&Settings::alpha, DoubleRange::kPositive>(
        "alpha", "Laplace smoothing of the token probabilities.", "a finite number greater than 0"),
    DoubleKey<&Settings::spam_threshold, DoubleRange::kAny>(
        "spam_threshold", "A message is spam when its score is greater than this.",
        "a finite number"),
    DoubleKey<&Settings::ham_threshold, DoubleRange::kAny>(
        "ham_threshold",
        "A message is ham when its score is at most this, unsure between this and "
        "spam_threshold; unset, it is -0.6 or spam_threshold when that is lower.",
        "a finite number, not greater than spam_threshold"),
    ChoiceKey<&Settings::verdict_thresholds, kVerdictThresholds>(
        "verdict_thresholds", "MODE", "fixed or feedback",
        "fixed: spam_threshold and ham_threshold hold as set; feedback: the held-out scores of "
        "the newest 1,000 hams and spams fed back narrow them (docs/ACCURACY.md, rule R)."),
    DoubleKey<&Settings::score_min_weight, DoubleRange::kNonNegative>(
        "score_min_weight",
        "Tokens whose weight (log-likelihood ratio) is at most this in absolute value do not "
        "count in the score.",
        "a finite number of at least 0"),
    ChoiceKey<&Settings::score_form, kScoreForms>(
        "score_form", "FORM", "mean or log-odds",
        "The score: mean (the mean weight of the tokens stronger than score_min_weight) or "
        "log-odds (the textbook ln P(spam|x) / P(ham|x)); thresholds and train_margin apply to "
        "it."),
    Key{.name = "train_margin",
        .metavar = "MARGIN",
        .help = "Train on or near error: a fed-back message is counted only when the model "
                "scored it wrong or within this of 0, else only checked; \"\" = count every "
                "message.",
        .kind = Kind::kString,
        .valid = "\"\" (count every message) or a finite number of at least 0, as a string",
        .set = &SetTrainMargin,
        .format = &FormatOptionalScore<&Settings::train_margin>},
    UnsignedKey<&Settings::train_warmup, 0, std::numeric_limits<std::uint32_t>::max()>(
        "train_warmup", "N",
        "With train_margin: every message of a class is counted while the class holds fewer than "
        "N documents."),
    DoubleKey<&Settings::user_beta, DoubleRange::kPositive>(
        "user_beta",
        "User layers: tokens of a user's own evidence that weigh as much as the global model's "
        "word distribution (β).",
        "a finite number greater than 0"),
    DoubleKey<&Settings::user_gamma, DoubleRange::kPositive>(
        "user_gamma",
        "User layers: documents of a user's own evidence that weigh as much as the global class "
        "prior (γ).",
        "a finite number greater than 0"),
    Key{.name = "train_global_from_users",
        .metavar = "off|on|sources:NAME,...",
        .help = "on: training with a user also trains the global model; off: only the user's "
                "layer; sources:NAME,...: only what comes through these sources.",
        .kind = Kind::kString,
        .valid = "off, on or sources: and token names separated by commas",
        .set =
            [](Settings& s, const Value& v) {
              const std::string& text = std::get<std::string>(v);
              if (!ParseTrainGlobalFromUsers(text)) return false;
              s.train_global_from_users = text;
              return true;
            },
        .format = [](const Settings& s) { return QuoteToml(s.train_global_from_users); }},
    UnsignedKey<&Settings::user_token_limit, 0, std::numeric_limits<std::uint64_t>::max()>(
        "user_token_limit", "N",
        "Most distinct tokens a user's layer may have; a learn past it is refused. 0 = no limit."),
    UnsignedKey<&Settings::user_idle_days, 0, 36500>(
        "user_idle_days", "DAYS",
        "Drop a user's layer the user has not taught for this many days. 0 = never."),
    UnsignedKey<&Settings::ledger_retention_days, 0, 36500>(
        "ledger_retention_days", "DAYS",
        "Keep what each learned message added, for an exact forget, this many days; older "
        "records move to the base counts. 0 = forever."),
    UnsignedKey<&Settings::token_expiry_days, 0, 36500>(
        "token_expiry_days", "DAYS",
        "Drop a token no live ledger record holds, last seen this many days ago and counted at "
        "most token_expiry_max_count times. 0 = never."),
    UnsignedKey<&Settings::token_expiry_max_count, 1, std::numeric_limits<std::uint64_t>::max()>(
        "token_expiry_max_count", "N", "The most times an expiring token may be counted."),
    UnsignedKey<&Settings::token_expiry_min_messages, 0, std::numeric_limits<std::uint64_t>::max()>(
        "token_expiry_min_messages", "N",
        "A token expires by age only once this many messages have been learned since it was "
        "last seen. 0 = days alone."),
    DoubleKey<&Settings::token_keep_weight, DoubleRange::kNonNegative>(
        "token_keep_weight",
        "Keep every token whose |log P(w|spam) - log P(w|ham)| is at least this, whatever its "
        "age. 0 = keep none for its weight.",
        "a finite number of at least 0"),
    BoolKey<&Settings::token_keep_ham>(
        "token_keep_ham",
        "Keep every token counted in ham at all, whatever its age: only words seen in spam alone "
        "expire."),
    UnsignedKey<&Settings::token_cap, 0, std::numeric_limits<std::uint64_t>::max()>(
        "token_cap", "N",
        "Most distinct tokens: above it the least recently seen droppable tokens go. 0 = none."),
    UnsignedKey<&Settings::user_cache_bytes, 0, kSizeMax>(
        "user_cache_bytes", "BYTES", "Memory the cached user layers may take."),
    UnsignedKey<&Settings::max_body_bytes, 1, kGiB>(
        "max_body_bytes", "BYTES", "Largest HTTP request body; a larger one gets 413."),
    UnsignedKey<&Settings::max_header_bytes, kKiB, kMiB>("max_header_bytes", "BYTES",
                                                         "Largest HTTP request header."),
    UnsignedKey<&Settings::idle_timeout_seconds, 1, 86400>(
        "idle_timeout_seconds", "SECONDS", "How long an idle keep-alive connection stays open."),
    UnsignedKey<&Settings::shutdown_timeout_seconds, 0, 3600>(
        "shutdown_timeout_seconds", "SECONDS",
        "How long SIGTERM waits for requests in flight before closing them."),
    UnsignedKey<&Settings::max_message_bytes, 1, kSizeMax>(
        "max_message_bytes", "BYTES", "Bytes of a message the tokenizer looks at."),
    UnsignedKey<&Settings::max_tokens, 1, kSizeMax>("max_tokens", "N",
                                                    "Tokens the tokenizer takes from a message."),
    UnsignedKey<&Settings::max_token_chars, 1, 1000>("max_token_chars", "N",
                                                     "Longer words (in code points) are dropped."),
    BoolKey<&Settings::boolean_counts>("boolean_counts", "Count each token once per message."),
    BoolKey<&Settings::header_tokens>(
        "header_tokens", "Make tokens from mail headers (subject:, from-domain:, received: ...)."),
    BoolKey<&Settings::word_bigrams>("word_bigrams",
                                     "Also make a token of each pair of consecutive words."),
    Key{.name = "byte_ngrams",
        .metavar = "N",
        .help = "Also make a token of each run of N raw bytes of a message's head (headers "
                "included, before decoding); 0 = off.",
        .kind = Kind::kUnsigned,
        .valid = "0 (off) or a whole number from 3 to 8",
        .set = &SetByteNgrams,
        .format = &FormatUnsigned<&Settings::byte_ngrams>},
    UnsignedKey<&Settings::byte_ngram_head, 64, 65536>(
        "byte_ngram_head", "BYTES", "Bytes of a message's head that byte_ngrams reads."),
    Key{.name = "char_ngrams",
        .metavar = "N",
        .help = "Also make a token of each run of N characters of a word longer than N; 0 = off.",
        .kind = Kind::kUnsigned,
        .valid = "0 (off) or a whole number from 2 to 8",
        .set = &SetCharNgrams,
        .format = &FormatUnsigned<&Settings::char_ngrams>},
    DoubleKey<&Settings::char_ngram_share, DoubleRange::kUnitFromZero>(
        "char_ngram_share",
        "With score_form mean: the share of the words' character n-grams in the score, each "
        "family the mean of its own strong weights; 0 = one mean over every token.",
        "a finite number from 0 up to, not including, 1"),
    BoolKey<&Settings::fold_lookalikes>(
        "fold_lookalikes",
        "Read a word disguised with look-alike letters (Cyrillic a, accents) as the ASCII word."),
    StringKey<&Settings::backup_dir, false>(
        "backup_dir", "DIR", "Folder where POST /admin/backup writes model checkpoints."),
    StringKey<&Settings::auth_tokens, true>(
        "auth_tokens", "NAME:SECRET,...",
        "Bearer tokens; with any, /train, /forget and /admin/* need one."),
    StringKey<&Settings::auth_tokens_file, true>("auth_tokens_file", "FILE",
                                                 "File of bearer tokens, one NAME:SECRET a line."),
    BoolKey<&Settings::auth_classify>("auth_classify",
                                      "Also require a bearer token for /classify."),
    StringKey<&Settings::http_hosts, true>(
        "http_hosts", "NAME,...",
        "Names the HTTP Host header may give besides IP addresses, localhost and this machine's "
        "name (a browser reaching the daemon by any other name is refused); * for any."),
    StringKey<&Settings::tls_cert_file, true>(
        "tls_cert_file", "FILE", "PEM certificate chain: HTTPS on listen (with tls_key_file)."),
    StringKey<&Settings::tls_key_file, true>("tls_key_file", "FILE",
                                             "PEM private key of tls_cert_file's certificate."),
    UnsignedKey<&Settings::max_in_flight, 1, 1000000>(
        "max_in_flight", "N",
        "Requests handled at once (HTTP), or messages queued for a worker (milter, spamd); more "
        "are refused at once."),
    UnsignedKey<&Settings::max_in_flight_bytes, std::uint64_t{1} << 20, std::uint64_t{1} << 40>(
        "max_in_flight_bytes", "BYTES",
        "Bytes of messages each front end holds at once (HTTP bodies being read or handled, "
        "milter and spamd messages queued for a worker); more are refused at once."),
    Key{.name = "train_rate_limit",
        .metavar = "PER_SECOND",
        .help = "Training requests a second per token (a burst of one second's worth); 0 = none.",
        .kind = Kind::kDouble,
        .valid = "a finite number of at least 0",
        .set =
            [](Settings& s, const Value& v) {
              const double x = std::get<double>(v);
              if (!std::isfinite(x) || x < 0) return false;
              s.train_rate_limit = x;
              return true;
            },
        .format = [](const Settings& s) { return FormatDouble(s.train_rate_limit); }},
    ChoiceKey<&Settings::log_level, kLogLevels>(
        "log_level", "LEVEL", "debug, info, warning or error",
        "Log events of this level and above; debug adds a line per request."),
    ChoiceKey<&Settings::log_format, kLogFormats>("log_format", "FORMAT", "logfmt or json",
                                                  "Log lines as logfmt or as JSON objects."),
    Key{.name = "cluster_redis",
        .metavar = "HOST:PORT",
        .help = "Redis of cluster mode: training goes through its stream; \"\" = standalone.",
        .kind = Kind::kString,
        .valid = "\"\" or HOST:PORT with a port from 1 to 65535",
        .set = &SetClusterRedis,
        .format = [](const Settings& s) { return QuoteToml(s.cluster_redis); }},
    StringKey<&Settings::cluster_stream, false>(
        "cluster_stream", "KEY", "Redis key of the training stream shared by the daemons."),
    StringKey<&Settings::cluster_name, true>(
        "cluster_name", "NAME", "This daemon's name in the cluster; \"\" = hostname:port."),
    BoolKey<&Settings::cluster_wait_applied>(
        "cluster_wait_applied",
        "Answer /train and /forget once applied here, not as soon as Redis has them."),
    UnsignedKey<&Settings::cluster_retention_seconds, 60, 31536000>(
        "cluster_retention_seconds", "SECONDS",
        "Stream entries are kept at least this long; a checkpoint younger than this can join."),
    Key{.name = "cluster_sentinels",
        .metavar = "HOST:PORT,...",
        .help = "Redis Sentinels that name the primary (cluster_redis unused); \"\" = none.",
        .kind = Kind::kString,
        .valid = "\"\" or HOST:PORT items separated by commas",
        .set = &SetClusterSentinels,
        .format = [](const Settings& s) { return QuoteToml(s.cluster_sentinels); }},
    StringKey<&Settings::cluster_sentinel_master, false>(
        "cluster_sentinel_master", "NAME", "The name the sentinels monitor the primary under."),
    StringKey<&Settings::cluster_redis_password_file, true>(
        "cluster_redis_password_file", "FILE",
        "File holding the Redis password (AUTH; never logged); \"\" = none."),
    StringKey<&Settings::cluster_sentinel_password_file, true>(
        "cluster_sentinel_password_file", "FILE",
        "File holding the sentinels' password (AUTH; never logged); \"\" = none."),
    Key{.name = "cluster_min_replicas",
        .metavar = "N",
        .help =
            "A train is acknowledged once on N replicas (WAIT); \"\" = 1 with sentinels, else 0.",
        .kind = Kind::kString,
        .valid = "\"\" or a number from 0 to 16, as a string",
        .set = &SetClusterMinReplicas,
        .format = &FormatClusterMinReplicas},
    UnsignedKey<&Settings::cluster_replica_timeout_ms, 1, 60000>(
        "cluster_replica_timeout_ms", "MS",
        "How long a train waits for cluster_min_replicas replicas before a 503."),
    ChoiceKey<&Settings::cluster_read_from, kClusterReadFrom>(
        "cluster_read_from", "FROM", "replica or primary",
        "Read the stream from a replica of the primary (the primary when it has none) or it."),
    Key{.name = "cluster_join_from",
        .metavar = "URL,...",
        .help = "Daemons (http[s]://HOST:PORT) to fetch a checkpoint from when this one has no "
                "model or is behind the trimmed stream; \"\" = none.",
        .kind = Kind::kString,
        .valid = "\"\" or http://HOST:PORT or https://HOST:PORT items separated by commas",
        .set = &SetClusterJoinFrom,
        .format = [](const Settings& s) { return QuoteToml(s.cluster_join_from); }},
    StringKey<&Settings::cluster_join_token_file, true>(
        "cluster_join_token_file", "FILE",
        "File holding the bearer token cluster_join_from's daemons accept (never logged)."),
    StringKey<&Settings::cluster_join_ca_file, true>(
        "cluster_join_ca_file", "FILE",
        "PEM CA certificates that sign https:// peers' certificates; \"\" = the system's."),
    UnsignedKey<&Settings::cluster_join_timeout_seconds, 10, 86400>(
        "cluster_join_timeout_seconds", "SECONDS",
        "How long fetching a checkpoint may take at start-up before the daemon gives up."),
    StringKey<&Settings::milter_listen, true>(
        "milter_listen", "ADDRESS",
        "Milter listener (docs/MILTER.md): inet:HOST:PORT, HOST:PORT or unix:/PATH; \"\" = off."),
    Key{.name = "milter_socket_mode",
        .metavar = "MODE",
        .help = "Octal permissions of a Unix milter socket (the MTA's user must connect).",
        .kind = Kind::kString,
        .valid = "octal permissions from 0 to 0777, as a string",
        .set = &SetSocketMode,
        .format = &FormatSocketMode},
    StringKey<&Settings::milter_socket_group, true>(
        "milter_socket_group", "GROUP", "Group of a Unix milter socket; \"\" = the daemon's."),
    ChoiceKey<&Settings::milter_fail_mode, kFailModes>(
        "milter_fail_mode", "MODE", "accept or tempfail",
        "When the model cannot answer (nothing learned, store degraded): accept or tempfail."),
    OptionalScoreKey<&Settings::milter_reject_score>(
        "milter_reject_score",
        "Spam scoring at least this is rejected at SMTP time (550 5.7.1); \"\" = never."),
    StringKey<&Settings::milter_reject_text, false>("milter_reject_text", "TEXT",
                                                    "The text of the milter's 550 5.7.1 reply."),
    OptionalScoreKey<&Settings::milter_quarantine_score>(
        "milter_quarantine_score",
        "Spam scoring at least this (not rejected) goes to the MTA's quarantine; \"\" = never."),
    StringKey<&Settings::milter_flag_header, false>(
        "milter_flag_header", "NAME", "Header the milter adds to spam as \"NAME: YES\"."),
    StringKey<&Settings::milter_status_header, false>(
        "milter_status_header", "NAME",
        "Header the milter adds to every classified message: verdict, confidence, score."),
    UnsignedKey<&Settings::milter_read_timeout_seconds, 1, 86400>(
        "milter_read_timeout_seconds", "SECONDS",
        "A milter connection silent this long (the MTA's SMTP session included) is closed."),
    UnsignedKey<&Settings::milter_verdict_timeout_seconds, 1, 3600>(
        "milter_verdict_timeout_seconds", "SECONDS",
        "A message without a verdict this long is answered by milter_fail_mode."),
    BoolKey<&Settings::milter_user_layers>(
        "milter_user_layers",
        "Score a message with one envelope recipient with that recipient's user layer."),
    Key{.name = "spamd_listen",
        .metavar = "ADDRESS",
        .help = "spamd-protocol listener (docs/SPAMD.md): HOST:PORT, numeric host; \"\" = off.",
        .kind = Kind::kString,
        .valid = "\"\" or HOST:PORT ([IPV6]:PORT)",
        .set = &SetSpamdListen,
        .format = [](const Settings& s) { return QuoteToml(s.spamd_listen); }},
    StringKey<&Settings::spamd_tell, true>(
        "spamd_tell", "GRANTS",
        "Who may train through spamd TELL: \"SOURCE [from ADDR,...] [users USER,...]; ...\"; "
        "\"\" = nobody."),
    UnsignedKey<&Settings::spamd_read_timeout_seconds, 1, 3600>(
        "spamd_read_timeout_seconds", "SECONDS",
        "A spamd client must send its whole request within this."),
    UnsignedKey<&Settings::spamd_verdict_timeout_seconds, 1, 3600>(
        "spamd_verdict_timeout_seconds", "SECONDS",
        "A spamd request without an answer this long gets EX_TEMPFAIL."),
    BoolKey<&Settings::spamd_user_layers>(
        "spamd_user_layers",
        "spamd requests use the User header's user layer (CHECK scores with it, TELL trains it)."),
    BoolKey<&Settings::autolearn>(
        "autolearn",
        "Learn confidently classified messages by themselves, with source autolearn (guarded)."),
    DoubleKey<&Settings::autolearn_spam_confidence, DoubleRange::kOpenUnit>(
        "autolearn_spam_confidence",
        "Autolearn as spam a message of spam verdict whose spam_confidence is at least this.",
        "a number greater than 0 and less than 1, greater than autolearn_ham_confidence"),
    DoubleKey<&Settings::autolearn_ham_confidence, DoubleRange::kOpenUnit>(
        "autolearn_ham_confidence",
        "Autolearn as ham a message of ham verdict whose spam_confidence is at most this.",
        "a number greater than 0 and less than 1, less than autolearn_spam_confidence"),
    DoubleKey<&Settings::autolearn_max_class_ratio, DoubleRange::kAtLeastOne>(
        "autolearn_max_class_ratio",
        "Autolearn no message of a class that has more than this times the other class's "
        "documents.",
        "a finite number of at least 1"),
    UnsignedKey<&Settings::autolearn_queue_limit, 1, 1'000'000>(
        "autolearn_queue_limit", "N",
        "Autolearns waiting for the training writer beyond which more are dropped (counted)."),
    BoolKey<&Settings::history>(
        "history", "Keep a scan history of what was classified (GET /history, train by scan id)."),
    StringKey<&Settings::history_dir, true>(
        "history_dir", "DIR", "Folder of the scan history's database; \"\" = data_dir/history."),
    UnsignedKey<&Settings::history_max_scans, 1, 100'000'000>(
        "history_max_scans", "N", "Scans the history keeps; the oldest go first."),
    UnsignedKey<&Settings::history_max_age_days, 1, 3650>(
        "history_max_age_days", "DAYS", "Scans older than this leave the history."),
    ChoiceKey<&Settings::history_keep_message_id, kFactPolicies>(
        "history_keep_message_id", "POLICY", "keep, hash or off",
        "How the history keeps a message's Message-ID."),
    ChoiceKey<&Settings::history_keep_from_domain, kFactPolicies>(
        "history_keep_from_domain", "POLICY", "keep, hash or off",
        "How the history keeps the domain of the From address."),
    ChoiceKey<&Settings::history_keep_subject, kFactPolicies>(
        "history_keep_subject", "POLICY", "keep, hash or off",
        "How the history keeps the Subject (hash: found when typed whole, never shown)."),
    ChoiceKey<&Settings::history_keep_client, kFactPolicies>(
        "history_keep_client", "POLICY", "keep, hash or off",
        "How the history keeps the SMTP client's address (milter)."),
    ChoiceKey<&Settings::history_keep_recipients, kFactPolicies>(
        "history_keep_recipients", "POLICY", "keep, hash or off",
        "How the history keeps the envelope recipients."),
    UnsignedKey<&Settings::history_clear_facts_days, 0, 3650>(
        "history_clear_facts_days", "DAYS",
        "Days a scan's subject, sender and recipients stay in clear; then hashed (0: as long as "
        "the scan)."),
    UnsignedKey<&Settings::history_explain, 0, 100>(
        "history_explain", "N",
        "Explaining tokens kept with each scan (0: none; each classify then skips weighing them)."),
};

}  // namespace

std::string FlagName(std::string_view name) {
  std::string flag(name);
  std::ranges::replace(flag, '_', '-');
  return "--" + flag;
}

std::string EnvName(std::string_view name) {
  std::string env(kEnvPrefix);
  for (const char c : name) env += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return env;
}

std::span<const Key> Keys() { return kKeys; }

const Key* FindKey(std::string_view name) {
  const auto it = std::ranges::find(kKeys, name, &Key::name);
  return it == kKeys.end() ? nullptr : &*it;
}

}  // namespace nbspamd::config
