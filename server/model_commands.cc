#include "server/model_commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dump/dump_format.h"
#include "storage/model_check.h"
#include "storage/model_transfer.h"

extern char** environ;

namespace nbspamd::server {
namespace {

// The command's own options taken out of argv (from argv[2] on); the rest are settings flags.
struct CommandLine {
  std::vector<std::string> options;  // name, value pairs flattened: {"--mode", "append", ...}
  std::vector<std::string> operands;
  std::vector<const char*> settings_args;
};

// Splits argv: `flags` take no value, `valued` take the next argument. Settings flags all take
// a value ("--data-dir DIR") or are "--name=value". Returns nullopt (after a message) for an
// option without its value.
std::optional<CommandLine> Split(std::string_view command, int argc, char** argv,
                                 std::initializer_list<std::string_view> flags,
                                 std::initializer_list<std::string_view> valued) {
  CommandLine line;
  line.settings_args.push_back(argv[0]);
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (std::find(flags.begin(), flags.end(), arg) != flags.end()) {
      line.options.emplace_back(arg);
      line.options.emplace_back();
    } else if (std::find(valued.begin(), valued.end(), arg) != valued.end()) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nbspamd %.*s: %s needs a value\n", static_cast<int>(command.size()),
                     command.data(), argv[i]);
        return std::nullopt;
      }
      line.options.emplace_back(arg);
      line.options.emplace_back(argv[++i]);
    } else if (arg == "-" || !arg.starts_with("-")) {
      line.operands.emplace_back(arg);
    } else {
      line.settings_args.push_back(argv[i]);
      if (arg.find('=') == std::string_view::npos && arg != "--help" && arg != "-h" &&
          arg != "--version" && i + 1 < argc) {
        line.settings_args.push_back(argv[++i]);
      }
    }
  }
  return line;
}

std::optional<std::string> OptionValue(const CommandLine& line, std::string_view name) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i + 1 < line.options.size(); i += 2) {
    if (line.options[i] == name) value = line.options[i + 1];
  }
  return value;
}

// The settings for `line`, or the exit status to return (after a message or the usage).
std::expected<config::Settings, int> Settings(std::string_view command, const CommandLine& line,
                                              const char* usage) {
  const std::vector<std::string> environment = ProcessEnvironment();
  auto loaded = config::LoadSettings(line.settings_args, environment);
  if (!loaded) {
    std::fprintf(stderr, "nbspamd %.*s: %s\n", static_cast<int>(command.size()), command.data(),
                 loaded.error().message.c_str());
    return std::unexpected(2);
  }
  if (loaded->action != config::LoadResult::Action::kRun) {
    std::puts(usage);
    return std::unexpected(0);
  }
  return std::move(loaded->settings);
}

void PrintReport(const storage::CheckReport& report) {
  for (const model::ClassStats& c : report.stats.classes) {
    std::printf("class %s: %llu documents, %llu tokens\n", c.label.c_str(),
                static_cast<unsigned long long>(c.documents),
                static_cast<unsigned long long>(c.tokens));
  }
  std::printf("vocabulary: %llu; token records: %llu; ledger records: %llu; base records: %llu\n",
              static_cast<unsigned long long>(report.stats.vocabulary_size),
              static_cast<unsigned long long>(report.token_records),
              static_cast<unsigned long long>(report.ledger_records),
              static_cast<unsigned long long>(report.base_records));
  for (const std::string& problem : report.problems) std::printf("problem: %s\n", problem.c_str());
}

constexpr char kCheckUsage[] =
    "usage: nbspamd check [--repair] [--data-dir DIR | --config FILE]\n"
    "Checks that the model in the data folder is consistent: token counts, class totals,\n"
    "|V| and document counts agree with the training ledger and the base counts. --repair\n"
    "rebuilds the counts from them (stop the daemon first). Exit status: 0 consistent or\n"
    "repaired, 1 unreadable, 2 bad command line, 3 inconsistent.";

constexpr char kDumpUsage[] =
    "usage: nbspamd dump [--output FILE] [--data-dir DIR | --config FILE]\n"
    "Writes the model in the data folder (the global model and every user layer) as a dump:\n"
    "versioned text, one token a line (docs/STORAGE.md). The daemon may serve the folder\n"
    "meanwhile. Without --output the dump goes to standard output. Exit status: 0 written,\n"
    "1 failed, 2 bad command line.";

constexpr char kRestoreUsage[] =
    "usage: nbspamd restore [--mode replace|append|subtract] [--data-dir DIR | --config FILE]\n"
    "                       FILE|-\n"
    "Writes a dump into the data folder (stop the daemon first): replace (the default) makes\n"
    "the folder hold the dump's model alone; append adds the dump's counts to the folder's\n"
    "(merging two sites' models); subtract takes them away again. The dump must have been made\n"
    "with this daemon's tokenizer settings. All of it is written or nothing. Exit status:\n"
    "0 restored, 1 refused or failed, 2 bad command line.";

}  // namespace

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> environment;
  for (char** variable = environ; *variable != nullptr; ++variable) {
    environment.emplace_back(*variable);
  }
  return environment;
}

core::AutolearnOptions AutolearnOptionsOf(const config::Settings& settings) {
  return {.enabled = settings.autolearn,
          .spam_confidence = settings.autolearn_spam_confidence,
          .ham_confidence = settings.autolearn_ham_confidence,
          .max_class_ratio = settings.autolearn_max_class_ratio,
          .queue_limit = settings.autolearn_queue_limit};
}

tokenizer::TokenizerOptions TokenizerOptionsOf(const config::Settings& settings) {
  tokenizer::TokenizerOptions options;
  options.max_message_bytes = settings.max_message_bytes;
  options.max_tokens = settings.max_tokens;
  options.max_token_chars = settings.max_token_chars;
  options.boolean_counts = settings.boolean_counts;
  options.header_tokens = settings.header_tokens;
  options.word_bigrams = settings.word_bigrams;
  options.byte_ngrams = settings.byte_ngrams;
  options.byte_ngram_head = settings.byte_ngram_head;
  options.word_char_ngrams = settings.char_ngrams;
  options.fold_lookalikes = settings.fold_lookalikes;
  return options;
}

core::SpamFilterOptions FilterOptionsOf(const config::Settings& settings) {
  core::SpamFilterOptions options;
  options.alpha = settings.alpha;
  options.spam_threshold = settings.spam_threshold;
  options.ham_threshold = settings.ham_threshold;
  options.thresholds_from_feedback = settings.verdict_thresholds == "feedback";
  options.score_min_weight = settings.score_min_weight;
  options.score_form = settings.score_form == "log-odds" ? model::ScoreForm::kLogOdds
                                                         : model::ScoreForm::kMeanWeight;
  options.char_ngram_share = settings.char_ngram_share;
  options.training_regime.margin = settings.train_margin;
  options.training_regime.warmup_documents = settings.train_warmup;
  options.user_beta = settings.user_beta;
  options.user_gamma = settings.user_gamma;
  // Checked when the settings were read.
  const auto train_global = config::ParseTrainGlobalFromUsers(settings.train_global_from_users);
  options.train_global_from_users = train_global && train_global->on;
  if (train_global) options.train_global_sources = train_global->sources;
  options.autolearn = AutolearnOptionsOf(settings);
  options.tokenizer = TokenizerOptionsOf(settings);
  return options;
}

int CheckCommand(int argc, char** argv) {
  const auto line = Split("check", argc, argv, {"--repair"}, {});
  if (!line) return 2;
  if (!line->operands.empty()) {
    std::fprintf(stderr, "nbspamd check: unexpected argument '%s'\n",
                 line->operands.front().c_str());
    return 2;
  }
  const bool repair = OptionValue(*line, "--repair").has_value();
  auto settings = Settings("check", *line, kCheckUsage);
  if (!settings) return settings.error();
  const std::string& path = settings->data_dir;
  auto report = repair ? storage::RepairModel(path) : storage::CheckModel(path);
  if (!report) {
    std::fprintf(stderr, "nbspamd check: %s\n", report.error().message.c_str());
    return 1;
  }
  PrintReport(*report);
  if (!report->ok()) {
    std::printf("%s: inconsistent; 'nbspamd check --repair' rebuilds it from the ledger\n",
                path.c_str());
    return 3;
  }
  std::printf("%s: %s\n", path.c_str(), repair ? "consistent (repaired if needed)" : "consistent");
  return 0;
}

int DumpCommand(int argc, char** argv) {
  const auto line = Split("dump", argc, argv, {}, {"--output", "-o"});
  if (!line) return 2;
  if (!line->operands.empty()) {
    std::fprintf(stderr, "nbspamd dump: unexpected argument '%s'\n",
                 line->operands.front().c_str());
    return 2;
  }
  auto settings = Settings("dump", *line, kDumpUsage);
  if (!settings) return settings.error();
  std::optional<std::string> output = OptionValue(*line, "--output");
  if (!output) output = OptionValue(*line, "-o");
  const std::string partial = output ? *output + ".partial" : "";
  std::FILE* out = output ? std::fopen(partial.c_str(), "we") : stdout;
  if (out == nullptr) {
    std::fprintf(stderr, "nbspamd dump: cannot write %s: %s\n", partial.c_str(),
                 std::strerror(errno));
    return 1;
  }
  dump::DumpWriter writer(
      out, {settings->alpha, dump::TokenizerFingerprint(TokenizerOptionsOf(*settings))});
  writer.OnProgress([](const dump::DumpProgress& progress) {
    std::fprintf(stderr, "nbspamd dump: %llu layers, %llu tokens written\n",
                 static_cast<unsigned long long>(progress.layers),
                 static_cast<unsigned long long>(progress.tokens));
  });
  auto exported = storage::ExportFolder(settings->data_dir, writer);
  std::expected<void, Error> finished = exported ? writer.Finish() : exported;
  if (output) {
    const bool closed = std::fclose(out) == 0;
    if (finished && !closed) finished = MakeError(ErrorCode::kInternal, "cannot write the dump");
    std::error_code error;
    if (finished) {
      std::filesystem::rename(partial, *output, error);
      if (error) finished = MakeError(ErrorCode::kInternal, "cannot write " + *output);
    }
    if (!finished) std::filesystem::remove(partial, error);
  }
  if (!finished) {
    std::fprintf(stderr, "nbspamd dump: %s\n", finished.error().message.c_str());
    return 1;
  }
  return 0;
}

int RestoreCommand(int argc, char** argv) {
  const auto line = Split("restore", argc, argv, {}, {"--mode"});
  if (!line) return 2;
  auto settings = Settings("restore", *line, kRestoreUsage);
  if (!settings) return settings.error();
  if (line->operands.size() != 1) {
    std::fprintf(stderr, "nbspamd restore: name one dump file, or - for standard input\n%s\n",
                 kRestoreUsage);
    return 2;
  }
  storage::ImportMode mode = storage::ImportMode::kReplace;
  if (const auto name = OptionValue(*line, "--mode")) {
    if (*name == "append") {
      mode = storage::ImportMode::kAppend;
    } else if (*name == "subtract") {
      mode = storage::ImportMode::kSubtract;
    } else if (*name != "replace") {
      std::fprintf(stderr, "nbspamd restore: --mode is replace, append or subtract, not '%s'\n",
                   name->c_str());
      return 2;
    }
  }
  const std::string& file = line->operands.front();
  std::FILE* in = file == "-" ? stdin : std::fopen(file.c_str(), "re");
  if (in == nullptr) {
    std::fprintf(stderr, "nbspamd restore: cannot read %s: %s\n", file.c_str(),
                 std::strerror(errno));
    return 1;
  }
  const std::string& path = settings->data_dir;
  auto import = storage::ModelImport::Begin(path, mode);
  std::expected<storage::ImportSummary, Error> summary =
      import ? std::expected<storage::ImportSummary, Error>() : std::unexpected(import.error());
  if (import) {
    dump::ReadDumpOptions options;
    options.tokenizer = dump::TokenizerFingerprint(TokenizerOptionsOf(*settings));
    options.progress = [](const dump::DumpProgress& progress) {
      std::fprintf(stderr, "nbspamd restore: %llu layers, %llu tokens read\n",
                   static_cast<unsigned long long>(progress.layers),
                   static_cast<unsigned long long>(progress.tokens));
    };
    auto read = dump::ReadDump(in, options, **import);
    if (!read) {
      summary = std::unexpected(read.error());
    } else {
      summary = (*import)->Commit();
      if (!summary) {  // The message says where each model is.
        std::fprintf(stderr, "nbspamd restore: %s\n", summary.error().message.c_str());
        return 1;
      }
    }
  }
  if (in != stdin) std::fclose(in);
  if (!summary) {
    std::fprintf(stderr, "nbspamd restore: %s; %s is unchanged\n", summary.error().message.c_str(),
                 path.c_str());
    return 1;
  }
  std::printf("%s: restored (%s): %llu layers, %llu tokens", path.c_str(),
              std::string(storage::ImportModeName(mode)).c_str(),
              static_cast<unsigned long long>(summary->layers),
              static_cast<unsigned long long>(summary->tokens));
  if (mode == storage::ImportMode::kSubtract) {
    std::printf("; %llu counts were not subtracted (the folder's own training: forget those)",
                static_cast<unsigned long long>(summary->not_subtracted));
  }
  std::printf("\n");
  return 0;
}

}  // namespace nbspamd::server
