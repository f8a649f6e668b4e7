// Settings: everything nbspamd can be configured with, and LoadSettings, which assembles them from
// five sources, lowest precedence first:
//
//   1. built-in defaults (the member initialisers of Settings below);
//   2. a TOML file, named by --config FILE or NBSPAMD_CONFIG (no file by default). The file is
//      flat: top-level keys only, e.g.
//          listen = "0.0.0.0:7830"
//          data_dir = "/var/lib/nbspamd"
//          alpha = 0.5
//          boolean_counts = true
//   3. environment variables NBSPAMD_<KEY in upper case>, e.g. NBSPAMD_DATA_DIR=/srv/nbspamd;
//   4. command-line flags --<key with dashes> VALUE or --<key with dashes>=VALUE, e.g.
//      --data-dir /srv/nbspamd --max-body-bytes=1048576;
//   5. the settings set live (POST /admin/reload with "set"), which the daemon keeps in
//      <data_dir>/live-settings.toml (live_settings.h).
//
// One key table (keys.cc) drives all three textual sources and HelpText(), so every key has
// the same name, validation and help everywhere. The keys and their valid values:
//
//   listen                    HOST:PORT, IPv6 as [::1]:7830; port 0..65535 (0 = any free port)
//   data_dir                  non-empty path (relative paths are relative to the working folder)
//   threads                   0..256 (0 = one per hardware thread)
//   alpha                     finite, > 0
//   spam_threshold            finite
//   ham_threshold             finite, <= spam_threshold
//   verdict_thresholds        fixed or feedback
//   score_min_weight          finite, >= 0
//   score_form                mean or log-odds
//   train_margin              "" (count every message) or finite, >= 0
//   train_warmup              >= 0
//   user_beta                 finite, > 0
//   user_gamma                finite, > 0
//   train_global_from_users   off, on or sources:NAME,NAME...
//   user_token_limit          >= 0 (0 = no limit)
//   user_cache_bytes          >= 0
//   max_body_bytes            1..1 GiB
//   max_header_bytes          1 KiB..1 MiB
//   idle_timeout_seconds      1..86400
//   shutdown_timeout_seconds  0..3600
//   max_message_bytes         >= 1
//   max_tokens                >= 1
//   max_token_chars           1..1000
//   boolean_counts            bool
//   header_tokens             bool
//   word_bigrams              bool
//   byte_ngrams               0 (off) or 3..8
//   char_ngrams               0 (off) or 2..8
//   char_ngram_share          finite, 0 <= x < 1
//   byte_ngram_head           64..65536
//   fold_lookalikes           bool
//   backup_dir                non-empty path
//   auth_tokens               any string; its items are checked by ParseAuthTokens
//   auth_tokens_file          a path or ""
//   auth_classify             bool
//   http_hosts                names separated by commas, or "*"
//   tls_cert_file, tls_key_file  paths or "" (both or neither: HTTPS on `listen`)
//   max_in_flight             1..1000000
//   max_in_flight_bytes       1 MiB..1 TiB
//   train_rate_limit          finite, >= 0
//   log_level                 debug, info, warning or error
//   log_format                logfmt or json
//   cluster_redis             "" or HOST:PORT of Redis (cluster mode)
//   cluster_sentinels         "" or HOST:PORT,HOST:PORT,... of Redis Sentinels (cluster mode;
//                             they name the primary, cluster_redis is then unused)
//   cluster_sentinel_master   non-empty: the primary's name in Sentinel
//   cluster_redis_password_file, cluster_sentinel_password_file  a path or "" (no AUTH)
//   cluster_min_replicas      "" (1 with cluster_sentinels, else 0) or 0..16, as a string
//   cluster_replica_timeout_ms 1..60000
//   cluster_read_from         replica or primary
//   cluster_join_from         "" or http[s]://HOST:PORT,... of daemons to fetch a checkpoint from
//   cluster_join_token_file   a path or "" (no token)
//   cluster_join_ca_file      a path or "" (the system's CAs, for https:// peers)
//   cluster_join_timeout_seconds 10..86400
//   cluster_stream            non-empty Redis key
//   cluster_name              any string ("" = hostname:port)
//   cluster_wait_applied      bool
//   cluster_retention_seconds 60..31536000
//   milter_listen             "" (off), inet:HOST:PORT, HOST:PORT or unix:/PATH (docs/MILTER.md)
//   milter_socket_mode        octal permissions of a Unix milter socket, 0..0777 (default 0660)
//   milter_socket_group       "" or a group name the Unix milter socket is given
//   milter_fail_mode          accept or tempfail
//   milter_reject_score       "" (never) or a finite number
//   milter_reject_text        printable ASCII, 1..400 characters
//   milter_quarantine_score   "" (never) or a finite number
//   milter_flag_header        a header name
//   milter_status_header      a header name
//   milter_read_timeout_seconds 1..86400
//   milter_verdict_timeout_seconds 1..3600
//   milter_user_layers        bool
//   spamd_listen              "" (off) or HOST:PORT / [IPV6]:PORT with a numeric host
//                             (docs/SPAMD.md)
//   spamd_tell                "" (TELL off) or grants: "SOURCE [from ADDR,...] [users USER,...];
//                             ..."
//   spamd_read_timeout_seconds 1..3600
//   spamd_verdict_timeout_seconds 1..3600
//   spamd_user_layers         bool
//   autolearn                 bool
//   autolearn_spam_confidence, autolearn_ham_confidence   finite, in (0, 1), ham < spam
//   autolearn_max_class_ratio finite, >= 1
//   autolearn_queue_limit     1..1000000
//   history                   bool
//   history_dir               a path or "" (= data_dir/history)
//   history_max_scans         1..100000000
//   history_max_age_days      1..3650
//   history_keep_message_id, history_keep_from_domain, history_keep_subject,
//   history_keep_client, history_keep_recipients   keep, hash or off
//   history_clear_facts_days  0..3650 (0: as long as the scan)
//   history_explain           0..100
//
// In TOML, integers are accepted for integer keys, integers or floats for alpha,
// spam_threshold and ham_threshold, booleans for booleans and strings for listen and data_dir.
// In the environment and on the command line, numbers are plain decimal ("1e-3" is fine for
// floating-point keys) and booleans are one of true/false, 1/0, yes/no, on/off (any letter
// case).
//
// Every problem is a start-up error: LoadSettings returns Error{kInvalidArgument, message} with a
// message naming the source and the key, e.g.
//   config file x.toml: unknown key 'foo' (line 3)
//   NBSPAMD_THREADS: invalid value 'abc' for 'threads': expected a whole number from 0 to 256
//   --alpha: invalid value '0' for 'alpha': expected a finite number greater than 0
//   unknown flag '--foo'
//   ham_threshold (1.5) must not be greater than spam_threshold (1.0): ...
// No exception escapes this API.
#ifndef NBSPAMD_CONFIG_SETTINGS_H_
#define NBSPAMD_CONFIG_SETTINGS_H_

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "config/live_settings.h"

namespace nbspamd::config {

// The default of ham_threshold, chosen with spam_threshold's on every corpus (docs/ACCURACY.md):
// at most 2% of spam called ham and at most 5% of mail unsure on held-out mail.
inline constexpr double kDefaultHamThreshold = -0.6;

// The effective configuration of the daemon. The defaults are the built-in values.
struct Settings {
  // Address to listen on. listen_host holds an IPv6 address without its brackets ("::1").
  std::string listen_host = "127.0.0.1";
  std::uint16_t listen_port = 7830;  // 0 = ephemeral
  // The RocksDB folder.
  std::string data_dir = "data";
  // Worker threads. 0 means std::thread::hardware_concurrency(); LoadSettings resolves 0 (to at
  // least 1), so the settings it returns always have threads >= 1.
  unsigned threads = 0;
  // Laplace smoothing; > 0 and finite. 0.1 was best over every corpus measured
  // (docs/ACCURACY.md): it trusts tokens seen in few messages more than add-one does.
  double alpha = 0.1;
  // Verdict threshold on the score: spam when score > spam_threshold. The default was chosen on
  // every corpus (docs/ACCURACY.md) to call at most 0.1% of held-out ham spam and leave at most 5%
  // of the mail unsure, with the character n-grams' share in the score.
  double spam_threshold = 0.9;
  // The three-way verdict is ham when score <= ham_threshold, unsure between the thresholds
  // (model/verdict.h). Must not be greater than spam_threshold; when it is not set anywhere it
  // is kDefaultHamThreshold, or spam_threshold when that is lower (so a spam_threshold set below
  // the default alone keeps the two-way decision instead of failing). LoadSettings resolves it.
  double ham_threshold = kDefaultHamThreshold;
  // "fixed": the two thresholds hold as set; "feedback": they are the widest the unsure band
  // gets, and the held-out scores of the mail fed back most recently narrow it
  // (model/feedback_thresholds.h, core::SpamFilterOptions::thresholds_from_feedback).
  std::string verdict_thresholds = "fixed";
  // Tokens whose weight |log P(t|spam) − log P(t|ham)| is at most this leave the score out
  // (model::ClassifyOptions::score_min_weight); >= 0.
  double score_min_weight = 1.0;
  // The training regime (core::TrainingRegime, docs/API.md "Training regime"): nullopt counts
  // every fed-back message; a margin counts one only when the model scored it wrong or within
  // the margin of 0, and only checks the others (an archive import, count=all, counts whole).
  // Every daemon of a cluster must have the same. Margin 4 was measured (docs/ACCURACY.md).
  std::optional<double> train_margin = 4.0;
  // What the score is (model::ScoreForm): "mean", the mean weight of the strong tokens, or
  // "log-odds", the textbook ln P(spam|x) / P(ham|x). Measured in docs/ACCURACY.md.
  std::string score_form = "mean";
  // With train_margin: every message of a class is counted while the class holds fewer than this
  // many documents (core::TrainingRegime::warmup_documents); 0: none.
  std::uint64_t train_warmup = 0;
  // User layers (model/layered.h, docs/ACCURACY.md "Per-user layers"): β, the token
  // pseudo-counts of the global prior of a user's word distribution, and γ, the document
  // pseudo-counts of its class prior; > 0 and finite. The defaults were measured (cold start).
  double user_beta = 1000;
  double user_gamma = 1;
  // "on": a train or forget with a user also trains the global model; "off": only the user's
  // layer; "sources:NAME,NAME...": only when it comes through one of these sources (token names,
  // spamd TELL grants), e.g. a trusted feedback loop (core::SpamFilterOptions says what is
  // measured of each). ParseTrainGlobalFromUsers reads it.
  std::string train_global_from_users = "off";
  // The most distinct tokens a user's layer may have (0 = no limit); a learn past it gets 413.
  std::uint64_t user_token_limit = 100'000;
  // A user's layer that the user has not taught for this many days (no learn or relearn in
  // their own ledger) is dropped, as DELETE /users/{id} would (core/idle_users.h), by a sweep
  // once an hour; 0 = never (the default).
  unsigned user_idle_days = 0;
  // The ledger retention (docs/STORAGE.md "Ledger retention"): a ledger record, global or of a
  // user's layer, learned more than this many days ago is retired by a pass once an hour
  // (core/model_expiry.h): its counts move to the base counts (that user's, for a user's record)
  // and its message can no longer be forgotten from that layer (410). 0 = keep every record (the
  // default).
  unsigned ledger_retention_days = 0;
  // The token expiry (docs/STORAGE.md "Token expiry"), in the same hourly pass: a token no live
  // ledger record holds, last seen more than token_expiry_days ago (0 = never by age), counted
  // at most token_expiry_max_count times and weighing less than token_keep_weight (0 = any
  // weight) is dropped. Over token_cap distinct tokens (0 = no cap), the least recently seen of
  // those weighing less than token_keep_weight go first, whatever their count. The age rule also
  // drops user layers' tokens, judged by each user's own ledger and counts; the cap is the global
  // model's only. Both need ledger_retention_days. The age rule's "ago" is also counted in
  // messages: a token goes only once the model has learned token_expiry_min_messages documents
  // since it was last seen (0 = days alone), so that a site learning little keeps its rare words.
  unsigned token_expiry_days = 0;
  std::uint64_t token_expiry_max_count = 1;
  std::uint64_t token_expiry_min_messages = 20'000;
  double token_keep_weight = 0;
  // Keep every token counted in ham at all, by age and by the cap: only words seen in spam alone
  // may go (docs/ACCURACY.md "The model expiry over a year of mail": dropping rare ham words
  // costs the most at a low false-positive rate).
  bool token_keep_ham = true;
  std::uint64_t token_cap = 0;
  // The memory the cached user layers of the RocksDB store may take.
  std::size_t user_cache_bytes = std::size_t{256} << 20;
  // HTTP body limit; a larger body gets 413.
  std::size_t max_body_bytes = 10 << 20;
  // HTTP header limit.
  std::size_t max_header_bytes = 16 << 10;
  // Keep-alive idle timeout, >= 1.
  unsigned idle_timeout_seconds = 60;
  // How long SIGTERM waits for in-flight requests.
  unsigned shutdown_timeout_seconds = 30;
  // Tokenizer budget: bytes of a message looked at.
  std::size_t max_message_bytes = 4 << 20;
  // Tokenizer budget: tokens per message.
  std::size_t max_tokens = 20000;
  // Longer words are dropped.
  std::size_t max_token_chars = 40;
  // Count each token once per message.
  bool boolean_counts = true;
  // Produce "subject:" tokens from headers.
  bool header_tokens = true;
  // Also make a token of each pair of consecutive words.
  bool word_bigrams = false;
  // Also make a token of each run of this many raw bytes of a message's head
  // (tokenizer::TokenizerOptions::byte_ngrams); 0 = off, else 3..8.
  std::size_t byte_ngrams = 0;
  // The bytes of a message's head byte n-grams are taken from; 64..65536.
  std::size_t byte_ngram_head = 2500;
  // Also make a token of each run of this many characters of a word
  // (tokenizer::TokenizerOptions::word_char_ngrams); 0 = off, else 2..8. 4 and a share of 0.3
  // passed the accuracy rule of issue 59 on every corpus (docs/ACCURACY.md).
  std::size_t char_ngrams = 4;
  // The share of those n-grams in the score (model::ClassifyOptions::char_ngram_share); 0 <= x < 1.
  double char_ngram_share = 0.3;
  // Fold words disguised with look-alike letters to the ASCII word they imitate
  // (tokenizer::TokenizerOptions::fold_lookalikes).
  bool fold_lookalikes = false;
  // Where POST /admin/backup writes its checkpoints (created when needed).
  std::string backup_dir = "backups";
  // Bearer tokens, "NAME:SECRET" items separated by commas (config/auth_tokens.h). With any
  // token configured, here or in auth_tokens_file, /train, /forget and /admin/* need one.
  std::string auth_tokens;
  // A file of bearer tokens, one "NAME:SECRET" a line ("" = none).
  std::string auth_tokens_file;
  // Also require a token for /classify.
  bool auth_classify = false;
  // Names the HTTP Host header may give besides IP addresses, localhost, the machine's host name
  // and listen's host (http_api/browser_guard.h), separated by commas; "*": any Host.
  std::string http_hosts;
  // HTTPS on `listen` with this PEM certificate chain and its PEM private key; both "" (the
  // default): plain HTTP. One without the other is a start-up error.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Requests being handled at once beyond which new ones get 503 at once.
  unsigned max_in_flight = 512;
  // The bytes of the messages each front end holds at once (HTTP: request bodies from their
  // header to their response; milter and spamd: waiting for or in a worker); over it, or over
  // max_in_flight messages, a message is refused at once (common/admission.h).
  std::uint64_t max_in_flight_bytes = std::uint64_t{256} << 20;
  // /train and /forget requests a second per source (token name); beyond it 429. 0 = no limit.
  double train_rate_limit = 0;
  // Log events of this level and above: "debug" (adds a line per request), "info", "warning",
  // "error".
  std::string log_level = "info";
  // "logfmt" or "json".
  std::string log_format = "logfmt";
  // Cluster mode (replication/cluster.h, docs/SCALING.md): "" runs standalone; HOST:PORT of a Redis
  // server makes training go through the Redis Stream `cluster_stream`, shared by every daemon.
  std::string cluster_redis;
  std::string cluster_redis_host;  // Parsed from cluster_redis.
  std::uint16_t cluster_redis_port = 0;
  std::string cluster_stream = "nbspamd:training";
  // This daemon's name among the others; "" = the host name and the listening port.
  std::string cluster_name;
  // Answer /train and /forget once this daemon has applied the change (else once Redis has it).
  bool cluster_wait_applied = false;
  // Stream entries are kept at least this long (a checkpoint younger than this can join).
  unsigned cluster_retention_seconds = 24 * 3600;
  // Cluster mode through Redis Sentinel: "HOST:PORT,HOST:PORT,..." of the sentinels, which name
  // the primary (cluster_redis is then unused); "" = not.
  std::string cluster_sentinels;
  std::string cluster_sentinel_master = "nbspamd";  // The name the sentinels know the primary by.
  // Files holding the password of Redis (primary and replicas) and of the sentinels (one line;
  // "" = no AUTH). Read at start-up; the passwords are never logged.
  std::string cluster_redis_password_file;
  std::string cluster_sentinel_password_file;
  // A train is acknowledged once its event is on this many replicas (WAIT); nullopt = 1 with
  // cluster_sentinels (a promoted replica has every acknowledged train), else 0.
  std::optional<unsigned> cluster_min_replicas;
  unsigned cluster_replica_timeout_ms = 1000;  // How long WAIT waits for them.
  // Where the stream is read: "replica" (one of the primary's, the primary when it has none) or
  // "primary". Writes always go to the primary.
  std::string cluster_read_from = "replica";
  // Joining (server/cluster_join.h, docs/SCALING.md "Joining a cluster"): daemons to fetch a
  // checkpoint from when this one starts with no model, or with one the stream was trimmed past
  // ("" = never: such a daemon refuses to start, as before); the file holding the bearer token
  // they accept for /admin/* (never logged; "" = send none); and how long joining may take.
  std::string cluster_join_from;
  std::string cluster_join_token_file;
  std::string cluster_join_ca_file;  // PEM CAs that sign https:// peers' certificates.
  unsigned cluster_join_timeout_seconds = 600;
  // The milter front end (docs/MILTER.md): where it listens, "" = off. Checked in full by the
  // milter's own parser at start-up (server/main.cc), so a bad value names the key there.
  std::string milter_listen;
  unsigned milter_socket_mode = 0660;  // Permissions of a Unix-domain milter socket.
  std::string milter_socket_group;     // Its group ("" = the daemon's); Postfix's must connect.
  std::string milter_fail_mode = "accept";  // When the model cannot answer: accept or tempfail.
  // Spam scoring at least this is rejected (550 5.7.1 milter_reject_text); nullopt = never.
  std::optional<double> milter_reject_score;
  std::string milter_reject_text = "Message rejected as spam";
  // Spam scoring at least this (and not rejected) goes to the MTA's quarantine; nullopt = never.
  std::optional<double> milter_quarantine_score;
  std::string milter_flag_header = "X-Spam-Flag";  // "<name>: YES" on spam.
  std::string milter_status_header = "X-Nbspamd";  // "<name>: <verdict> <confidence> score=<s>".
  unsigned milter_read_timeout_seconds = 600;      // A silent MTA connection is closed after it.
  // A message waiting this long for its verdict is answered by milter_fail_mode.
  unsigned milter_verdict_timeout_seconds = 60;
  // A message with exactly one envelope recipient is scored with that recipient's user layer
  // (the address, lowercased, is the user id, as in /classify?user=); off: the global model.
  bool milter_user_layers = false;
  // The spamd-protocol front end (docs/SPAMD.md): "HOST:PORT" it listens on, "" = off; the host
  // is split off into spamd_listen_host (numeric, checked at start-up, naming the key).
  std::string spamd_listen;
  std::string spamd_listen_host;
  std::uint16_t spamd_listen_port = 0;
  // Who may train through TELL (spamd::ParseTellPolicy, checked at start-up); "" = nobody.
  std::string spamd_tell;
  unsigned spamd_read_timeout_seconds = 30;  // A client must send its whole request in this.
  // A request the core has not answered this long gets EX_TEMPFAIL (the client tries later).
  unsigned spamd_verdict_timeout_seconds = 60;
  // The request's User header names the user layer CHECK and the rest score with and TELL
  // trains; off: the global model, and User only selects a TELL grant.
  bool spamd_user_layers = false;
  // Guarded autolearn (core/autolearn.h, docs/ACCURACY.md "Autolearn"): a classify whose
  // calibrated spam_confidence is at least autolearn_spam_confidence (and whose verdict is spam)
  // learns the message as spam, at most autolearn_ham_confidence (verdict ham) as ham, with source
  // "autolearn"; not while the class has more than autolearn_max_class_ratio × the other's
  // documents; dropped beyond autolearn_queue_limit learns queued. Off by default: it did not win
  // on every corpus measured.
  bool autolearn = false;
  double autolearn_spam_confidence = 0.99;
  double autolearn_ham_confidence = 0.01;
  double autolearn_max_class_ratio = 3.0;
  std::size_t autolearn_queue_limit = 1000;
  // The scan history (docs/API.md, "Scan history"): what the daemon classified, for GET /history
  // and training by scan id. Its RocksDB folder ("" = "history" in data_dir), its bounds, and how
  // it keeps each fact that helps find a message: keep, hash or off. Kept in clear, the subject,
  // sender and recipients are hashed once a scan is older than history_clear_facts_days (0:
  // never before the scan leaves the history): a word finds a recent scan, and an older one is
  // found by the whole value. The history_keep_* keys and history_clear_facts_days reload live.
  bool history = true;
  std::string history_dir;
  std::uint64_t history_max_scans = 100'000;
  unsigned history_max_age_days = 30;
  std::string history_keep_message_id = "keep";
  std::string history_keep_from_domain = "keep";
  std::string history_keep_subject = "keep";
  std::string history_keep_client = "keep";
  std::string history_keep_recipients = "keep";
  unsigned history_clear_facts_days = 7;
  // Explaining tokens kept with each scan, shown on its page (0: none). Keeping them costs each
  // classify the tokens' texts and their weighing (docs/PERFORMANCE.md, "Which part of the
  // history costs what").
  unsigned history_explain = 20;

  friend bool operator==(const Settings&, const Settings&) = default;
};

// Whether `settings` run cluster mode (cluster_redis or cluster_sentinels set).
[[nodiscard]] inline bool InClusterMode(const Settings& settings) {
  return !settings.cluster_redis.empty() || !settings.cluster_sentinels.empty();
}

// cluster_min_replicas as it applies: its value, or by default 1 with sentinels, else 0.
[[nodiscard]] inline unsigned ClusterMinReplicas(const Settings& settings) {
  return settings.cluster_min_replicas.value_or(settings.cluster_sentinels.empty() ? 0 : 1);
}

// What the command line asked for, with the settings to run with.
struct LoadResult {
  enum class Action {
    kRun,      // Serve with `settings`.
    kHelp,     // --help: print `help_text` and exit 0. `settings` are the (resolved) defaults.
    kVersion,  // --version: print the version and exit 0. `settings` are the (resolved) defaults.
  };
  Action action = Action::kRun;
  Settings settings;
  // HelpText() when action is kHelp, empty otherwise.
  std::string help_text;
  // What was set live (live_settings.h) and is in `settings`.
  LiveSettings live;
};

// Assembles the settings from defaults, the TOML file, the environment and the command line
// (see the top of this file), or says why it cannot.
//
// `argv` is main's argv: argv[0] (the program name) is skipped; an empty span is fine.
// `environment` holds "NAME=VALUE" strings (main passes environ); entries without '=' are ignored.
// Only variables starting with NBSPAMD_ are looked at: each must be NBSPAMD_CONFIG or
// NBSPAMD_<KEY>, any other NBSPAMD_* variable is an error (it is most likely a typo).
//
// Special flags: --config FILE (overrides NBSPAMD_CONFIG; the named file must exist), --help and
// --version (which win over everything else and skip reading the file and the environment; --help
// wins over --version). Flags must be spelt out in full, a value may follow as the next argument
// or after '=', and a flag given twice takes its last value. A separate value cannot begin with
// "--" (so that "--listen --threads 4" is reported as a missing value); write --key=--value.
// Positional arguments are an error.
//
// Errors (all kInvalidArgument, message naming the source and the key): unknown flag, flag
// without its value, positional argument, unknown NBSPAMD_* variable, missing or unreadable or
// malformed TOML file, unknown TOML key (a [section] is an unknown key too), wrong TOML type, and
// any invalid value.
//
// Last, the settings set live (live_settings.h): `live_text` when given (a reload checking a
// change before it writes it), else the file <data_dir>/live-settings.toml when there is one.
[[nodiscard]] std::expected<LoadResult, Error> LoadSettings(
    std::span<const char* const> argv, std::span<const std::string> environment,
    const std::optional<std::string>& live_text = std::nullopt);

// The --help text: usage, the precedence of the sources, and for every key its TOML name, flag,
// environment variable, default and meaning. Ends with a newline.
[[nodiscard]] std::string HelpText();

// train_global_from_users read: whether a user's feedback trains the global model too, and, when
// only some sources' does, which (empty: every source's). Errors: a message saying what is valid.
struct TrainGlobalFromUsers {
  bool on = false;
  std::vector<std::string> sources;
};
[[nodiscard]] std::expected<TrainGlobalFromUsers, std::string> ParseTrainGlobalFromUsers(
    std::string_view value);

// Renders `settings` as a flat TOML document that LoadSettings reads back to the same settings
// (one `key = value` line per key, in the order of the key table). Useful to log the effective
// configuration.
[[nodiscard]] std::string FormatSettingsAsToml(const Settings& settings);

}  // namespace nbspamd::config

#endif  // NBSPAMD_CONFIG_SETTINGS_H_
