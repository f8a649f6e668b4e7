#include "client/command_line.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <exception>
#include <sstream>

namespace nbspamd::client {
namespace po = boost::program_options;
namespace {

constexpr char kUsage[] =
    "usage: nbspamc [FLAGS] COMMAND [FLAGS] [ARGS]\n"
    "  nbspamc classify [--json] [--explain N] FILE|-   exit 0 ham, 1 spam\n"
    "  nbspamc train --label LABEL [--id ID] [--jobs N] PATH...   an archive, counted whole\n"
    "  nbspamc train --label spam PATH... --label ham PATH...   both, in turn\n"
    "  nbspamc train --error-driven --label LABEL PATH...   feedback: counted on or near error\n"
    "  nbspamc train --label LABEL --scan-id SCAN   what that scan classified\n"
    "  nbspamc forget [--jobs N] PATH...  |  nbspamc forget --id ID | --scan-id SCAN\n"
    "  nbspamc stats [--json]\n"
    "  nbspamc report --label LABEL [--user USER] [FILE|-]   a user's verdict on one message\n"
    "  nbspamc history [--verdict V] [--user U] [--front-end F] [--query TEXT] [--since 2h]\n"
    "                  [--limit N] [--json]   the scans the daemon recorded, newest first\n"
    "  nbspamc scan [--json] SCAN   one scan and the tokens that weighed most\n"
    "PATH: a message file, an mbox, a Maildir, or a directory of them (recursive).\n"
    "Exit status: 2 usage, 3 daemon unreachable or no answer in time, 4 the daemon's error\n"
    "or some messages failed. nbspamc COMMAND --help lists the command's flags.\n";

po::options_description CommonFlags(ClientOptions& o) {
  po::options_description flags("Common flags");
  flags.add_options()("help,h", "print this help and exit")("version",
                                                            "print the version and exit")(
      "server", po::value(&o.server)->value_name("HOST:PORT"),
      "the daemon (env NBSPAMC_SERVER; default 127.0.0.1:7830)")(
      "token", po::value(&o.token)->value_name("SECRET"),
      "bearer token (env NBSPAMC_TOKEN, which keeps it out of ps)")(
      "timeout", po::value(&o.timeout_seconds)->value_name("SECONDS"),
      "per request: connect, send and answer (env NBSPAMC_TIMEOUT; default 30)");
  return flags;
}

po::options_description CommandFlags(Command command, ClientOptions& o) {
  po::options_description flags("Command flags");
  switch (command) {
    case Command::kClassify:
      flags.add_options()("json", po::bool_switch(&o.json), "print the daemon's JSON answer")(
          "explain", po::value(&o.explain)->value_name("N"), "show the N tokens that weighed most");
      break;
    case Command::kTrain:
    case Command::kForget:
      if (command == Command::kTrain) {
        flags.add_options()(
            "label", po::value<std::vector<std::string>>()->composing()->value_name("LABEL"),
            "the class to learn: spam, ham or another label (required); several, each before "
            "its PATHs, learn their messages in turn (--label spam DIR --label ham DIR)")(
            "error-driven", po::bool_switch(&o.error_driven),
            "feedback, not an archive: each message under the daemon's training regime (counted "
            "only when scored wrong or within train_margin), passing over the PATHs again while "
            "a pass still counts messages checked before")(
            "passes", po::value(&o.passes)->value_name("N"),
            "with --error-driven: at most N passes in all (default 10)")(
            "count-all", po::bool_switch(&o.count_all_given),
            "count every message whatever the daemon's training regime (the default: an "
            "archive import)");
      }
      flags.add_options()("id", po::value<std::string>()->value_name("ID"),
                          command == Command::kTrain
                              ? "the id to learn the one message under (default: its content hash)"
                              : "forget the message learned under this id (no PATH)")(
          "scan-id", po::value<std::string>()->value_name("SCAN"),
          command == Command::kTrain
              ? "learn the message that scan of the daemon's history classified, from its kept "
                "tokens (no PATH; the scan id is in the daemon's X-Nbspamd or X-Spam-Scan-Id "
                "header, /history and the console)"
              : "forget the message that scan of the daemon's history classified (no PATH)")(
          "jobs,j", po::value(&o.jobs)->value_name("N"), "concurrent requests (default 4)")(
          "max-size", po::value(&o.max_message_bytes)->value_name("BYTES"),
          "messages larger than this fail without being read (default 64 MiB)")(
          "quiet,q", "no progress display");
      break;
    case Command::kStats:
      flags.add_options()("json", po::bool_switch(&o.json), "print the daemon's JSON answer");
      break;
    case Command::kHistory:
      flags.add_options()("verdict", po::value<std::string>()->value_name("V"),
                          "only the scans with this verdict: spam, ham or unsure")(
          "user", po::value<std::string>()->value_name("USER"), "only this user's scans")(
          "front-end", po::value<std::string>()->value_name("F"),
          "only the scans of this front end: http, milter or spamd")(
          "query", po::value<std::string>()->value_name("TEXT"),
          "only the scans whose kept facts hold TEXT (a part of a Message-ID or From domain, the "
          "whole value of a hashed Subject or recipient), or whose message id or scan id it is")(
          "since", po::value<std::string>()->value_name("AGE"),
          "only the scans of the last AGE: a number with s, m, h or d (90m, 2h, 7d)")(
          "limit", po::value(&o.limit)->value_name("N"),
          "show at most N scans (default 20, at most 100000)")(
          "json", po::bool_switch(&o.json), "print the scans as one JSON object");
      break;
    case Command::kScan:
      flags.add_options()("json", po::bool_switch(&o.json), "print the daemon's JSON answer");
      break;
    case Command::kReport:
      flags.add_options()("label", po::value(&o.label)->value_name("LABEL"),
                          "the class the user says the message is: spam or ham (required)")(
          "user", po::value<std::string>()->value_name("USER"),
          "learn in this user's layer (e.g. Dovecot's imap.user); default: the global model")(
          "strict", po::bool_switch(&o.strict),
          "exit 3 or 4 when the message could not be learned (default: log it and exit 0)")(
          "max-size", po::value(&o.max_message_bytes)->value_name("BYTES"),
          "a larger message is not learned (default 64 MiB)");
      break;
  }
  return flags;
}

std::optional<Command> CommandNamed(const std::string& name) {
  if (name == "classify") return Command::kClassify;
  if (name == "train") return Command::kTrain;
  if (name == "forget") return Command::kForget;
  if (name == "stats") return Command::kStats;
  if (name == "report") return Command::kReport;
  if (name == "history") return Command::kHistory;
  if (name == "scan") return Command::kScan;
  return std::nullopt;
}

std::expected<void, Error> ApplyEnvironment(const Environment& environment, ClientOptions& o) {
  if (auto server = environment("NBSPAMC_SERVER")) o.server = *server;
  if (auto token = environment("NBSPAMC_TOKEN")) o.token = *token;
  if (auto timeout = environment("NBSPAMC_TIMEOUT")) {
    try {
      std::size_t used = 0;
      o.timeout_seconds = std::stod(*timeout, &used);
      o.timeout_given = true;
      if (used != timeout->size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "NBSPAMC_TIMEOUT must be a number of seconds, not \"" + *timeout + "\"");
    }
  }
  return {};
}

// "90m" -> 5400: a whole number and a unit, s, m, h or d; at most about 100 years.
std::expected<std::int64_t, Error> AgeSeconds(const std::string& text) {
  const auto bad = [&text] {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "--since must be a number with s, m, h or d (90m, 2h, 7d), not \"" + text + "\"");
  };
  if (text.size() < 2 || text.size() > 12) return bad();
  std::int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    default:
      return bad();
  }
  std::int64_t number = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return bad();
    number = number * 10 + (text[i] - '0');
  }
  if (number == 0 || number * unit > 36500LL * 86400) return bad();
  return number * unit;
}

std::expected<void, Error> Check(const ClientOptions& o) {
  auto fail = [](std::string message) { return MakeError(ErrorCode::kInvalidArgument, message); };
  if (!(o.timeout_seconds > 0) || o.timeout_seconds > 86400) {
    return fail("--timeout must be more than 0 and at most 86400 seconds");
  }
  switch (o.command) {
    case Command::kClassify:
      if (o.paths.size() != 1) return fail("classify needs exactly one FILE, or - for stdin");
      if (o.explain < 0 || o.explain > 1000) return fail("--explain must be 0-1000");
      break;
    case Command::kTrain:
    case Command::kForget:
      if (o.command == Command::kTrain && o.label.empty()) return fail("train needs --label");
      if (o.groups.size() > 1) {
        if (o.id || o.scan_id)
          return fail("--id and --scan-id learn one message: give one --label");
        for (const LabelledPaths& group : o.groups) {
          if (group.label.empty()) return fail("--label must not be empty");
          if (group.paths.empty()) return fail("--label " + group.label + " needs a PATH after it");
        }
      }
      if (o.jobs < 1 || o.jobs > 256) return fail("--jobs must be 1-256");
      if (o.passes < 1 || o.passes > 1000) return fail("--passes must be 1-1000");
      if (o.passes_given && !o.error_driven) {
        return fail(
            "--passes is for --error-driven: an archive import counts every message in "
            "one pass");
      }
      if (o.count_all_given && o.error_driven) {
        return fail("--count-all and --error-driven contradict each other: give one");
      }
      if (o.max_message_bytes == 0) return fail("--max-size must be more than 0");
      if (o.scan_id) {
        if (o.id) return fail("--scan-id learns under the scan's own id: leave --id out");
        if (!o.paths.empty()) return fail("--scan-id names a scan: give no PATH");
        if (o.scan_id->empty()) return fail("--scan-id must not be empty");
        break;
      }
      if (o.command == Command::kForget && o.id) {
        if (!o.paths.empty()) return fail("forget takes --id or PATHs, not both");
        if (o.id->empty()) return fail("--id must not be empty");
        break;
      }
      if (o.paths.empty()) return fail("give at least one PATH");
      if (o.id && o.paths.size() != 1) return fail("--id names one message: give one PATH");
      break;
    case Command::kStats:
      if (!o.paths.empty()) return fail("stats takes no arguments");
      break;
    case Command::kHistory:
      if (!o.paths.empty()) return fail("history takes no arguments: filter with its flags");
      if (o.verdict && *o.verdict != "spam" && *o.verdict != "ham" && *o.verdict != "unsure") {
        return fail("--verdict must be spam, ham or unsure");
      }
      if (o.front_end && *o.front_end != "http" && *o.front_end != "milter" &&
          *o.front_end != "spamd") {
        return fail("--front-end must be http, milter or spamd");
      }
      if (o.user && o.user->empty()) return fail("--user must not be empty");
      if (o.query && o.query->empty()) return fail("--query must not be empty");
      if (o.limit < 1 || o.limit > kMaxHistoryLimit) return fail("--limit must be 1-100000");
      break;
    case Command::kScan:
      if (o.paths.size() != 1 || o.paths.front().empty()) return fail("scan needs one SCAN id");
      break;
    case Command::kReport:
      if (o.label.empty()) return fail("report needs --label");
      if (o.user && o.user->empty()) return fail("--user must not be empty");
      if (o.paths.size() > 1) return fail("report takes one FILE, or - (the default) for stdin");
      if (o.max_message_bytes == 0) return fail("--max-size must be more than 0");
      break;
  }
  return {};
}

// train: each --label with the PATHs that follow it; PATHs before the first --label are its.
void GroupByLabel(const po::parsed_options& in_order, ClientOptions& o) {
  std::vector<std::string> before_any;
  for (const po::option& option : in_order.options) {
    if (option.value.empty()) continue;
    if (option.string_key == "label") {
      o.groups.push_back({option.value.front(), {}});
    } else if (option.string_key == "path") {
      (o.groups.empty() ? before_any : o.groups.back().paths).push_back(option.value.front());
    }
  }
  if (o.groups.empty()) return;
  std::vector<std::string>& first = o.groups.front().paths;
  first.insert(first.begin(), before_any.begin(), before_any.end());
  o.label = o.groups.front().label;
}

}  // namespace

std::string UsageText() { return kUsage; }

std::expected<ParsedCommandLine, Error> ParseCommandLine(const std::vector<std::string>& args,
                                                         const Environment& environment) {
  ParsedCommandLine parsed;
  ClientOptions& o = parsed.options;
  if (auto applied = ApplyEnvironment(environment, o); !applied) {
    return std::unexpected(applied.error());
  }
  // The command is the first argument that is not a flag or a common flag's value.
  std::optional<Command> command;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (!command && !arg.starts_with('-')) {
      command = CommandNamed(arg);
      if (!command)
        return MakeError(ErrorCode::kInvalidArgument, "unknown command \"" + arg + "\"");
      continue;
    }
    rest.push_back(arg);
    if (!command && (arg == "--server" || arg == "--token" || arg == "--timeout") &&
        i + 1 < args.size()) {
      rest.push_back(args[++i]);
    }
  }
  po::options_description flags = CommonFlags(o);
  if (command) {
    o.command = *command;
    flags.add(CommandFlags(*command, o));
  }
  po::options_description hidden;
  hidden.add_options()("path", po::value(&o.paths));
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description positional;
  positional.add("path", -1);
  po::variables_map vm;
  try {
    const po::parsed_options in_order =
        po::command_line_parser(rest)
            .options(all)
            .positional(positional)
            .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
            .run();
    po::store(in_order, vm);
    po::notify(vm);
    if (o.command == Command::kTrain) GroupByLabel(in_order, o);
  } catch (const po::error& e) {
    return MakeError(ErrorCode::kInvalidArgument, e.what());
  }
  if (vm.count("help")) {
    std::ostringstream help;
    help << kUsage << "\n" << flags;
    parsed.action = ParsedCommandLine::Action::kHelp;
    parsed.help = help.str();
    if (!parsed.help.ends_with('\n')) parsed.help += '\n';
    return parsed;
  }
  if (vm.count("version")) {
    parsed.action = ParsedCommandLine::Action::kVersion;
    return parsed;
  }
  if (!command) return MakeError(ErrorCode::kInvalidArgument, "give a command");
  if (vm.count("id")) o.id = vm["id"].as<std::string>();
  if (vm.count("scan-id")) o.scan_id = vm["scan-id"].as<std::string>();
  if (vm.count("quiet")) o.progress = false;
  if (vm.count("user")) o.user = vm["user"].as<std::string>();
  if (vm.count("verdict")) o.verdict = vm["verdict"].as<std::string>();
  if (vm.count("front-end")) o.front_end = vm["front-end"].as<std::string>();
  if (vm.count("query")) o.query = vm["query"].as<std::string>();
  if (vm.count("since")) {
    auto since = AgeSeconds(vm["since"].as<std::string>());
    if (!since) return std::unexpected(since.error());
    o.since_seconds = *since;
  }
  if (vm.count("timeout")) o.timeout_given = true;
  if (vm.count("passes")) o.passes_given = true;
  // A report runs while a user's IMAP move waits for it: a short deadline unless one is given.
  if (o.command == Command::kReport && !o.timeout_given) o.timeout_seconds = kReportTimeoutSeconds;
  if (o.command == Command::kReport && o.paths.empty()) o.paths.push_back("-");
  if (auto checked = Check(o); !checked) return std::unexpected(checked.error());
  return parsed;
}

}  // namespace nbspamd::client
