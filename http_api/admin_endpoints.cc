// /admin/backup, /admin/dump, /admin/learned and /admin/rollback: operating on the model as a
// whole.
#include <array>
#include <atomic>
#include <boost/beast/http/field.hpp>
#include <boost/json.hpp>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "common/log.h"
#include "common/utc_time.h"
#include "common/utf8.h"
#include "http_api/endpoint_call.h"
#include "http_api/json_views.h"

namespace nbspamd::http_api {
namespace {

namespace http = boost::beast::http;
namespace json = boost::json;

constexpr std::size_t kMaxAdminLimit = 100000;

// "backups/nbspamd-20261123T104501Z": a new folder name for a backup made now.
std::string BackupPath(const std::string& backup_dir, int attempt) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::string name = "nbspamd-";
  name.append(stamp);
  if (attempt > 0) name.append("-").append(std::to_string(attempt + 1));
  return (std::filesystem::path(backup_dir) / name).string();
}

// The source and time window of /admin/learned and /admin/rollback: ?source= (required; ""
// names training done without a token), ?since= and ?until= in Unix seconds (default: all
// time), ?limit= (1 to kMaxAdminLimit, default `default_limit`).
struct Selection {
  std::string source;
  std::optional<std::string> user;  // ?user=: that user's own ledger.
  std::int64_t since = 0;
  std::int64_t until = std::numeric_limits<std::int64_t>::max();
  std::size_t limit = 0;
};
std::expected<Selection, nbspamd::Error> Select(const Input& input, std::size_t default_limit) {
  Selection selection;
  selection.limit = default_limit;
  const auto source = input.query.find("source");
  if (source == input.query.end()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "give ?source=NAME (the token name; empty for training without a token)");
  }
  selection.source = source->second;
  if (const auto user = input.query.find("user"); user != input.query.end()) {
    selection.user = user->second;
  }
  for (auto [name, value] : {std::pair{"since", &selection.since}, {"until", &selection.until}}) {
    const auto it = input.query.find(name);
    if (it == input.query.end()) continue;
    const auto [end, error] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), *value);
    if (error != std::errc() || end != it->second.data() + it->second.size() || *value < 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string(name) + " must be a Unix time in seconds");
    }
  }
  if (const auto it = input.query.find("limit"); it != input.query.end()) {
    const auto [end, error] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), selection.limit);
    if (error != std::errc() || end != it->second.data() + it->second.size() ||
        selection.limit == 0 || selection.limit > kMaxAdminLimit) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "limit must be a whole number from 1 to " + std::to_string(kMaxAdminLimit));
    }
  }
  return selection;
}

}  // namespace

std::optional<Response> HandleBackup(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  // A second backup in the same second gets the next free name.
  constexpr int kAttempts = 100;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::string path = BackupPath(call.options.backup_dir, attempt);
    auto written = call.filter.Backup(path);
    if (written) {
      LogInfo("model backed up to " + path);
      return JsonResponse(json::object{{"path", path}, {"status", "created"}},
                          call.request.version());
    }
    if (written.error().code != ErrorCode::kInvalidArgument) {
      LogError("backup to " + path + " failed: " + written.error().message);
      return call.Error(written.error());
    }
  }
  return call.Error(http::status::conflict, "failed_precondition",
                    "too many backups in one second; try again");
}

std::optional<Response> HandleDump(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  // One dump at a time: each takes an I/O thread and a file the size of the model.
  static std::atomic<bool> dumping{false};
  if (dumping.exchange(true)) {
    return call.Error(http::status::conflict, "failed_precondition",
                      "a dump is being written; try again when it is done");
  }
  struct Done {
    ~Done() { dumping.store(false); }
  } done;
  std::error_code error;
  std::filesystem::create_directories(call.options.backup_dir, error);
  const std::string name = std::filesystem::path(BackupPath(call.options.backup_dir, 0)).filename();
  static std::atomic<std::uint64_t> serial{0};
  // Sent, then removed, by the connection (kBodyFileField).
  const std::string path = (std::filesystem::path(call.options.backup_dir) /
                            ("." + name + "-" + std::to_string(++serial) + ".dump.partial"))
                               .string();
  std::FILE* out = std::fopen(path.c_str(), "we");
  if (out == nullptr) {
    LogError("cannot write the dump file " + path + ": " + std::strerror(errno));
    return call.Error(nbspamd::Error{ErrorCode::kInternal, "cannot write " + path});
  }
  auto written = call.filter.Dump(out);
  if (std::fclose(out) != 0 && written) {
    written = MakeError(ErrorCode::kInternal, "cannot write " + path);
  }
  if (!written) {
    std::filesystem::remove(path, error);
    LogError("dump failed: " + written.error().message);
    return call.Error(written.error());
  }
  LogInfo("model dumped for source '" + call.source + "'");
  Response response{http::status::ok, call.request.version()};
  response.set(http::field::content_type, "text/plain; charset=utf-8");
  response.set(http::field::content_disposition, "attachment; filename=\"" + name + ".dump\"");
  response.set(http::field::cache_control, "no-store");
  response.set(kBodyFileField, path);
  return response;
}

// Newest first; `count` is this page's, `total` the window's, `next` the cursor of the older page
// (?before=), absent on the last.
std::optional<Response> HandleLearned(Call& call, const Input& input) {
  if (auto rejected =
          call.RejectUnknown(input, {"source", "since", "until", "limit", "user", "before"}, {}))
    return *rejected;
  auto selection = Select(input, /*default_limit=*/1000);
  if (!selection) return call.Error(selection.error());
  const auto before = input.query.find("before");
  auto page = call.filter.Rollback().ListLearnedPage(
      selection->source, selection->since, selection->until, selection->limit,
      before == input.query.end() ? std::string_view() : std::string_view(before->second),
      selection->user);
  if (!page) return call.Error(page.error());
  json::object answer = LearnedJson(page->messages);
  answer["total"] = page->total;
  if (!page->next.empty()) answer["next"] = page->next;
  return JsonResponse(std::move(answer), call.request.version());
}

std::optional<Response> HandleRollback(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"source", "since", "until", "limit", "user"}, {}))
    return *rejected;
  auto selection = Select(input, /*default_limit=*/10000);
  if (!selection) return call.Error(selection.error());
  LogInfo("rolling back what source '" + selection->source + "' trained from " +
          std::to_string(selection->since) + " to " + std::to_string(selection->until) +
          (selection->user ? " in a user's layer" : ""));
  call.filter.Rollback().RollbackAsync(
      selection->source, selection->since, selection->until, selection->limit,
      [version = call.request.version(), source = selection->source, user = selection->user,
       respond =
           call.TakeRespond()](std::expected<std::uint64_t, nbspamd::Error> forgotten) mutable {
        Deliver(respond, version, [&] {
          if (!forgotten) return ErrorResponse(forgotten.error(), version);
          json::object answer{{"source", source}, {"forgotten", *forgotten}};
          if (user) answer["user"] = ReplaceInvalidUtf8(*user);
          return JsonResponse(std::move(answer), version);
        });
      },
      selection->user);
  return std::nullopt;
}

namespace {

// The horizon of a retire or expire request: ?older_than_days=DAYS (on the daemon's clock) or
// ?before=UNIX_SECONDS, exactly one of them. `what` says what happens before it.
std::expected<std::int64_t, nbspamd::Error> HorizonOf(const Call& call, const Input& input,
                                                      std::string_view what) {
  const auto days = input.query.find("older_than_days");
  const auto before = input.query.find("before");
  if ((days == input.query.end()) == (before == input.query.end())) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "give one of ?older_than_days=DAYS and ?before=UNIX_SECONDS: " + std::string(what));
  }
  const std::string& text = (days != input.query.end() ? days : before)->second;
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::int64_t max = days != input.query.end() ? 36500 : std::int64_t{1} << 40;
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > max) {
    return MakeError(ErrorCode::kInvalidArgument,
                     days != input.query.end()
                         ? "older_than_days must be a whole number from 0 to 36500"
                         : "before must be a Unix time in seconds");
  }
  return days != input.query.end() ? call.filter.options().clock() - value * 86400 : value;
}

}  // namespace

std::optional<Response> HandleRetire(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"older_than_days", "before"}, {}))
    return *rejected;
  const auto learned_before =
      HorizonOf(call, input, "the ledger records learned before then are retired");
  if (!learned_before) return call.Error(learned_before.error());
  call.filter.Upkeep().RetireLedgerAsync(
      *learned_before, [version = call.request.version(), learned_before = *learned_before,
                        cluster = call.filter.Cluster().has_value(), respond = call.TakeRespond()](
                           std::expected<std::uint64_t, nbspamd::Error> retired) mutable {
        Deliver(respond, version, [&] {
          if (!retired) return ErrorResponse(retired.error(), version);
          json::object answer{{"learned_before", UtcTimeText(learned_before)}};
          // In cluster mode the pass is in the training stream: every daemon applies it.
          if (cluster) {
            answer["queued"] = true;
          } else {
            answer["retired"] = *retired;
          }
          return JsonResponse(std::move(answer), version);
        });
      });
  return std::nullopt;
}

std::optional<Response> HandleExpire(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {"older_than_days", "before", "max_count"}, {}))
    return *rejected;
  const auto seen_before =
      HorizonOf(call, input, "the tokens last seen before then may be dropped");
  if (!seen_before) return call.Error(seen_before.error());
  storage::TokenExpiryRule rule{.seen_before = *seen_before,
                                .max_count = call.options.expiry.token_max_count,
                                .keep_weight = call.options.expiry.keep_weight,
                                .alpha = call.options.expiry.alpha,
                                .keep_ham = call.options.expiry.keep_ham};
  if (const auto it = input.query.find("max_count"); it != input.query.end()) {
    const auto [end, error] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), rule.max_count);
    if (error != std::errc() || end != it->second.data() + it->second.size()) {
      return call.Error(
          MakeError(ErrorCode::kInvalidArgument, "max_count must be a whole number (0: any count)")
              .error());
    }
  }
  // The global model's tokens, then the user layers' by the same rule.
  call.filter.Upkeep().ExpireTokensAsync(
      rule, [&filter = call.filter, version = call.request.version(), rule,
             cluster = call.filter.Cluster().has_value(), respond = call.TakeRespond()](
                std::expected<std::uint64_t, nbspamd::Error> dropped) mutable {
        if (!dropped) {
          return Deliver(respond, version, [&] { return ErrorResponse(dropped.error(), version); });
        }
        filter.Upkeep().ExpireUserTokensAsync(
            rule, [version, rule, cluster, global = *dropped, respond = std::move(respond)](
                      std::expected<std::uint64_t, nbspamd::Error> from_users) mutable {
              Deliver(respond, version, [&] {
                if (!from_users) return ErrorResponse(from_users.error(), version);
                json::object answer{{"seen_before", UtcTimeText(rule.seen_before)},
                                    {"max_count", rule.max_count}};
                if (cluster) {
                  answer["queued"] = true;
                } else {
                  answer["dropped"] = global;
                  answer["dropped_from_users"] = *from_users;
                }
                return JsonResponse(std::move(answer), version);
              });
            });
      });
  return std::nullopt;
}

namespace {

// A JSON value of "set" as the text a flag takes ("0.9", "true", "debug").
std::expected<std::string, Error> SettingText(std::string_view key, const json::value& value) {
  if (value.is_string()) return std::string(value.as_string());
  if (value.is_bool()) return std::string(value.as_bool() ? "true" : "false");
  if (value.is_int64()) return std::to_string(value.as_int64());
  if (value.is_uint64()) return std::to_string(value.as_uint64());
  if (value.is_double()) {
    std::array<char, 64> text{};
    const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), value.as_double());
    if (ec == std::errc()) return std::string(text.data(), end);
  }
  return MakeError(ErrorCode::kInvalidArgument, "\"set\": the value of '" + std::string(key) +
                                                    "' must be a number, a boolean or a string");
}

// The LiveChange of POST /admin/reload's body: {"set": {KEY: VALUE, ...}, "unset": [KEY, ...]},
// or none for an empty body. Errors: kInvalidArgument naming what is wrong.
std::expected<config::LiveChange, Error> LiveChangeOf(const Request& request) {
  config::LiveChange change;
  if (request.body().empty()) return change;
  const auto invalid = [](std::string message) {
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };
  boost::system::error_code ec;
  const json::value body = json::parse(request.body(), ec);
  if (ec || !body.is_object()) {
    return invalid(
        "the body must be a JSON object {\"set\": {KEY: VALUE}, \"unset\": [KEY]}, or empty");
  }
  for (const auto& field : body.as_object()) {
    if (field.key() == "set") {
      if (!field.value().is_object()) return invalid("\"set\" must be an object of settings");
      for (const auto& setting : field.value().as_object()) {
        auto text = SettingText(setting.key(), setting.value());
        if (!text) return std::unexpected(std::move(text.error()));
        change.set.emplace_back(std::string(setting.key()), std::move(*text));
      }
    } else if (field.key() == "unset") {
      if (!field.value().is_array()) return invalid("\"unset\" must be an array of names");
      for (const json::value& key : field.value().as_array()) {
        if (!key.is_string()) return invalid("\"unset\" must be an array of names");
        change.unset.emplace_back(key.as_string());
      }
    } else {
      return invalid("unknown JSON field '" + std::string(field.key()) + "'");
    }
  }
  return change;
}

}  // namespace

std::optional<Response> HandleReload(Call& call, const Input& input) {
  if (auto rejected = call.RejectUnknown(input, {}, {})) return *rejected;
  if (!call.options.reload) {
    return call.Error(http::status::conflict, "failed_precondition",
                      "this daemon has no settings to reload");
  }
  auto change = LiveChangeOf(call.request);
  if (!change) return call.Error(change.error());
  auto reloaded = call.options.reload(*change);
  if (!reloaded) return call.Error(reloaded.error());
  const auto names = [](const std::vector<std::string>& keys) {
    json::array array;
    for (const std::string& key : keys) array.emplace_back(key);
    return array;
  };
  json::object live;
  for (const auto& [key, value] : reloaded->live) live[key] = value;
  return JsonResponse(json::object{{"applied", names(reloaded->applied)},
                                   {"restart_needed", names(reloaded->restart_needed)},
                                   {"live", std::move(live)}},
                      call.request.version());
}

}  // namespace nbspamd::http_api
