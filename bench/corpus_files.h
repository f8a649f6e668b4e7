// CorpusFiles: the raw messages benchmarks run on, read once into memory.
#ifndef NBSPAMD_BENCH_CORPUS_FILES_H_
#define NBSPAMD_BENCH_CORPUS_FILES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace nbspamd::bench {

// Every message file below the folders named by the environment variable NBSPAMD_BENCH_CORPUS
// (one folder, or several separated by ':'; default bench/accuracy/corpus), in sorted path
// order: *.txt (the SpamAssassin corpus as npm ships it), *.eml (csdmc2010) and inmail.N
// (trec07p). Exits with a message when there are none.
[[nodiscard]] const std::vector<std::string>& CorpusMessages();

// The total size of CorpusMessages() in bytes.
[[nodiscard]] std::size_t CorpusBytes();

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_CORPUS_FILES_H_
