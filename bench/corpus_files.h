// CorpusFiles: the raw messages benchmarks run on, read once into memory.
#ifndef NBSPAMD_BENCH_CORPUS_FILES_H_
#define NBSPAMD_BENCH_CORPUS_FILES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace nbspamd::bench {

// Every *.txt file below the folder named by the environment variable NBSPAMD_BENCH_CORPUS
// (default bench/accuracy/corpus), in sorted path order. Exits with a message when there are
// none.
[[nodiscard]] const std::vector<std::string>& CorpusMessages();

// The total size of CorpusMessages() in bytes.
[[nodiscard]] std::size_t CorpusBytes();

}  // namespace nbspamd::bench

#endif  // NBSPAMD_BENCH_CORPUS_FILES_H_
