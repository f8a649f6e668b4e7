// The offline commands on a data folder (docs/OPERATIONS.md): `nbspamd check`, `nbspamd dump`
// and `nbspamd restore`. Each reads the settings as the daemon does (so --data-dir, --config and
// NBSPAMD_* name the folder) and returns the process's exit status:
//   check:   0 consistent (or repaired), 1 unreadable, 2 bad command line, 3 inconsistent;
//   dump:    0 written, 1 the model or the output cannot be read or written, 2 bad command line;
//   restore: 0 restored, 1 refused or failed (the folder is then as it was), 2 bad command line.
#ifndef NBSPAMD_SERVER_MODEL_COMMANDS_H_
#define NBSPAMD_SERVER_MODEL_COMMANDS_H_

#include <string>
#include <vector>

#include "config/settings.h"
#include "core/autolearn.h"
#include "core/spam_filter_options.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::server {

// `nbspamd check [--repair] [FLAGS]`. argv[1] is "check".
[[nodiscard]] int CheckCommand(int argc, char** argv);
// `nbspamd dump [--output FILE] [FLAGS]`: the model as a dump (dump/dump_format.h) on standard
// output or into FILE (written beside it, then renamed: never half a file). A daemon may serve
// the folder meanwhile.
[[nodiscard]] int DumpCommand(int argc, char** argv);
// `nbspamd restore [--mode replace|append|subtract] [FLAGS] FILE|-`. REQUIRES: no daemon on the
// folder (refused otherwise).
[[nodiscard]] int RestoreCommand(int argc, char** argv);

// The process's environment as NAME=VALUE strings, for config::LoadSettings.
[[nodiscard]] std::vector<std::string> ProcessEnvironment();

// The tokenizer options the settings ask for (those the daemon tokenizes with).
[[nodiscard]] tokenizer::TokenizerOptions TokenizerOptionsOf(const config::Settings& settings);

// The autolearn options the settings ask for (autolearn, autolearn_*).
[[nodiscard]] core::AutolearnOptions AutolearnOptionsOf(const config::Settings& settings);

// The spam filter's options the settings ask for: its estimate, score, thresholds, training
// regime, user layers, autolearn and tokenizer (those the daemon serves with). Settings already
// read (config::LoadSettings checked train_global_from_users).
[[nodiscard]] core::SpamFilterOptions FilterOptionsOf(const config::Settings& settings);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_MODEL_COMMANDS_H_
