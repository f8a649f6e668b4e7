// The dump format (docs/STORAGE.md "Dump and restore"): a model as versioned, line-based text,
// for backups that outlive a schema, moving a model between machines and merging two sites'.
//
//   nbspamd-dump 1                    format version
//   schema 4                          the data folder's schema when it was dumped
//   alpha 0.1                         the smoothing it was served with (information only)
//   tokenizer hash=xxh3-64 ...        what makes token hashes: must match to restore
//   classes spam ham                  the global classes, in order
//   layer global                      then `layer user <id>` for each user layer
//   documents 120 340                 N_c per class
//   tokens 45678 98765                n_c per class
//   vocabulary 5432                   |V|: the token lines that follow
//   t 00a1b2c3d4e5f607 3 0            token hash (16 hex digits, ascending), count per class
//   end-layer
//   end 2 5440                        layers and token lines: a dump without it is truncated
//
// Fields are separated by one space; labels and user ids are percent-encoded (a byte outside
// '!'..'~', and '%', as %XX). Counts of trailing classes that are 0 may be left out.
#ifndef NBSPAMD_DUMP_DUMP_FORMAT_H_
#define NBSPAMD_DUMP_DUMP_FORMAT_H_

#include <cstdint>
#include <cstdio>
#include <expected>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "common/error.h"
#include "storage/model_transfer.h"
#include "tokenizer/tokenizer.h"

namespace nbspamd::dump {

inline constexpr int kDumpFormatVersion = 1;

// What a dump's header says apart from its classes.
struct DumpHeader {
  double alpha = 0;
  std::string tokenizer;  // TokenizerFingerprint of the options the model was trained with.
};

// The tokenizer options that decide which hash a piece of text gets, as the `tokenizer` line
// writes them: two models are compatible exactly when their fingerprints are equal. Byte n-grams
// (byte_ngrams, byte_ngram_head) and fold_lookalikes appear only when on, so models without them
// keep the fingerprint they had before those options existed.
[[nodiscard]] std::string TokenizerFingerprint(const tokenizer::TokenizerOptions& options);

// How far a dump is read or written.
struct DumpProgress {
  std::uint64_t layers = 0;  // Layers begun.
  std::uint64_t tokens = 0;  // Token lines read or written.
};

// Writes a dump as the model is visited (storage::Store::Export, storage::ExportFolder).
// Thread safety: one thread. Errors: kInternal when writing to the stream fails.
class DumpWriter final : public storage::ModelVisitor {
 public:
  // `out` must stay open until Finish; it is not closed.
  DumpWriter(std::FILE* out, DumpHeader header);

  [[nodiscard]] std::expected<void, Error> BeginLayer(std::string_view user,
                                                      const model::ModelStats& stats) override;
  [[nodiscard]] std::expected<void, Error> Token(TokenHash hash,
                                                 std::span<const std::uint64_t> counts) override;
  [[nodiscard]] std::expected<void, Error> EndLayer() override;
  // Writes the `end` line and flushes. REQUIRES: every layer ended.
  [[nodiscard]] std::expected<void, Error> Finish();

  // Called every `every` token lines written, and by Finish.
  void OnProgress(std::function<void(const DumpProgress&)> progress,
                  std::uint64_t every = 1'000'000) {
    progress_ = std::move(progress);
    progress_every_ = every;
  }

 private:
  [[nodiscard]] std::expected<void, Error> Write(std::string_view text);

  std::FILE* out_;
  DumpHeader header_;
  bool header_written_ = false;
  std::uint64_t layers_ = 0;
  std::uint64_t tokens_ = 0;
  std::string line_;
  std::function<void(const DumpProgress&)> progress_;
  std::uint64_t progress_every_ = 1'000'000;
};

struct ReadDumpOptions {
  // The fingerprint the reader's own model uses; a dump with another is refused
  // (kFailedPrecondition, naming the options that differ) before anything is visited, except
  // one that differs only in making no character n-grams (word_char_ngrams=0): its words are
  // this model's, and its n-grams are learned from then on.
  std::string tokenizer;
  // Called every `progress_every` token lines and at the end; may be empty.
  std::function<void(const DumpProgress&)> progress;
  std::uint64_t progress_every = 1'000'000;
};

// Reads a dump from `in` and gives its layers to `visitor`. Errors: kInvalidArgument for text
// that is not a dump of a version this build reads, or a malformed line (its number in the
// message); kDataLoss for a dump that ends before its `end` line or whose `end` line does not
// count what came before; kFailedPrecondition for other tokenizer options; the visitor's.
[[nodiscard]] std::expected<DumpProgress, Error> ReadDump(std::FILE* in,
                                                          const ReadDumpOptions& options,
                                                          storage::ModelVisitor& visitor);

}  // namespace nbspamd::dump

#endif  // NBSPAMD_DUMP_DUMP_FORMAT_H_
