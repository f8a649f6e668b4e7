#include "dump/dump_format.h"

#include <charconv>
#include <cstdlib>
#include <memory>
#include <optional>
#include <vector>

#include "common/json_text.h"
#include "model/user_layer.h"
#include "storage/encoding.h"
#include "tokenizer/byte_ngrams.h"

namespace nbspamd::dump {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

std::string PercentEncode(std::string_view text) {
  std::string out;
  for (const char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < '!' || byte > '~' || byte == '%') {
      out += '%';
      out += kHexDigits[byte >> 4];
      out += kHexDigits[byte & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::optional<int> HexValue(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return std::nullopt;
}

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const auto high = HexValue(text[i + 1]);
    const auto low = HexValue(text[i + 2]);
    if (!high || !low) return std::nullopt;
    out += static_cast<char>(*high * 16 + *low);
    i += 2;
  }
  return out;
}

void AppendNumber(std::string& out, std::uint64_t value) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  out.append(text, end);
}

void AppendHash(std::string& out, TokenHash hash) {
  for (int shift = 60; shift >= 0; shift -= 4) out += kHexDigits[(hash >> shift) & 15];
}

// The space-separated fields of a line.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    fields.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return fields;
}

std::optional<std::uint64_t> ParseNumber(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<TokenHash> ParseHash(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  TokenHash hash = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), hash, 16);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return hash;
}

// Reads lines of a FILE*, counting them.
class LineReader {
 public:
  explicit LineReader(std::FILE* in) : in_(in) {}
  ~LineReader() { std::free(buffer_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // The next line without its newline; nullopt at the end of the input.
  std::optional<std::string_view> Next() {
    const ssize_t length = ::getline(&buffer_, &capacity_, in_);
    if (length < 0) return std::nullopt;
    ++number_;
    std::string_view line(buffer_, static_cast<std::size_t>(length));
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    return line;
  }
  [[nodiscard]] std::uint64_t number() const { return number_; }

 private:
  std::FILE* in_;
  char* buffer_ = nullptr;
  std::size_t capacity_ = 0;
  std::uint64_t number_ = 0;
};

// The options whose values differ between two fingerprints, for the refusal's message.
std::string Differences(std::string_view dump, std::string_view own) {
  std::string out;
  const auto dump_fields = Fields(dump);
  const auto own_fields = Fields(own);
  // The value of `key` among `fields`; "(none)" when it has none.
  const auto value_of = [](const std::vector<std::string_view>& fields, std::string_view key) {
    for (std::string_view field : fields) {
      if (field.substr(0, field.find('=')) == key) return field.substr(field.find('=') + 1);
    }
    return std::string_view("(none)");
  };
  for (std::string_view field : dump_fields) {
    const std::string_view key = field.substr(0, field.find('='));
    const std::string_view mine = value_of(own_fields, key);
    const std::string_view theirs = field.substr(field.find('=') + 1);
    if (theirs != mine) {
      if (!out.empty()) out += ", ";
      out += std::string(key) + " is " + std::string(theirs) + " in the dump and " +
             std::string(mine) + " here";
    }
  }
  // Options only this side has (written only when on, as byte_ngrams).
  for (std::string_view field : own_fields) {
    const std::string_view key = field.substr(0, field.find('='));
    if (value_of(dump_fields, key) == "(none)") {
      if (!out.empty()) out += ", ";
      out += std::string(key) + " is (none) in the dump and " +
             std::string(field.substr(field.find('=') + 1)) + " here";
    }
  }
  return out.empty() ? std::string("the option lists differ") : out;
}

// Whether a model with the tokenizer fingerprint `dump` can be restored into one with `own`: the
// same, or the same but for character n-grams that the dump's model never made
// (word_char_ngrams=0 there): its words hash as here, and the n-grams start unknown and are
// learned from the mail that follows, as after turning char_ngrams on.
bool RestoresInto(std::string_view dump, std::string_view own) {
  if (dump == own) return true;
  constexpr std::string_view kKey = " word_char_ngrams=";
  const std::size_t at_dump = dump.find(kKey);
  const std::size_t at_own = own.find(kKey);
  if (at_dump == std::string_view::npos || at_own == std::string_view::npos) return false;
  const auto value_end = [&](std::string_view text, std::size_t at) {
    const std::size_t end = text.find(' ', at + kKey.size());
    return end == std::string_view::npos ? text.size() : end;
  };
  const std::size_t end_dump = value_end(dump, at_dump);
  const std::size_t end_own = value_end(own, at_own);
  return dump.substr(at_dump + kKey.size(), end_dump - at_dump - kKey.size()) == "0" &&
         dump.substr(0, at_dump) == own.substr(0, at_own) &&
         dump.substr(end_dump) == own.substr(end_own);
}

}  // namespace

std::string TokenizerFingerprint(const tokenizer::TokenizerOptions& options) {
  std::string text = "hash=xxh3-64";
  const auto add = [&](std::string_view key, std::uint64_t value) {
    text += ' ';
    text += key;
    text += '=';
    AppendNumber(text, value);
  };
  add("min_token_chars", std::max<std::size_t>(options.min_token_chars, 1));
  add("max_token_chars", options.max_token_chars);
  add("boolean_counts", options.boolean_counts ? 1 : 0);
  add("header_tokens", options.header_tokens ? 1 : 0);
  add("word_bigrams", options.word_bigrams ? 1 : 0);
  add("sparse_bigram_window", options.sparse_bigram_window);
  add("word_char_ngrams", options.word_char_ngrams);
  // Only when on, so the fingerprints of models without them stay what they were.
  if (const std::size_t n = tokenizer::ByteNgramSize(options); n != 0) {
    add("byte_ngrams", n);
    add("byte_ngram_head", options.byte_ngram_head);
    // Since base64 lines give none; the first byte n-grams took them.
    text += " byte_ngram_lines=no-base64";
  }
  if (options.fold_lookalikes) add("fold_lookalikes", 1);
  return text;
}

DumpWriter::DumpWriter(std::FILE* out, DumpHeader header) : out_(out), header_(std::move(header)) {}

std::expected<void, Error> DumpWriter::Write(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) {
    return MakeError(ErrorCode::kInternal, "cannot write the dump");
  }
  return {};
}

std::expected<void, Error> DumpWriter::BeginLayer(std::string_view user,
                                                  const model::ModelStats& stats) {
  line_.clear();
  if (!header_written_) {
    line_ += "nbspamd-dump " + std::to_string(kDumpFormatVersion) + "\n";
    line_ += "schema " + std::to_string(storage::kSchemaVersion) + "\n";
    line_ += "alpha " + JsonNumber(header_.alpha) + "\n";
    line_ += "tokenizer " + header_.tokenizer + "\nclasses";
    for (const model::ClassStats& c : stats.classes) line_ += ' ' + PercentEncode(c.label);
    line_ += '\n';
    header_written_ = true;
  }
  line_ += user.empty() ? std::string("layer global") : "layer user " + PercentEncode(user);
  line_ += "\ndocuments";
  for (const model::ClassStats& c : stats.classes) {
    line_ += ' ';
    AppendNumber(line_, c.documents);
  }
  line_ += "\ntokens";
  for (const model::ClassStats& c : stats.classes) {
    line_ += ' ';
    AppendNumber(line_, c.tokens);
  }
  line_ += "\nvocabulary ";
  AppendNumber(line_, stats.vocabulary_size);
  line_ += '\n';
  ++layers_;
  return Write(line_);
}

std::expected<void, Error> DumpWriter::Token(TokenHash hash,
                                             std::span<const std::uint64_t> counts) {
  line_.assign("t ");
  AppendHash(line_, hash);
  for (const std::uint64_t count : counts) {
    line_ += ' ';
    AppendNumber(line_, count);
  }
  line_ += '\n';
  if (++tokens_ % progress_every_ == 0 && progress_) progress_({layers_, tokens_});
  return Write(line_);
}

std::expected<void, Error> DumpWriter::EndLayer() { return Write("end-layer\n"); }

std::expected<void, Error> DumpWriter::Finish() {
  line_.assign("end ");
  AppendNumber(line_, layers_);
  line_ += ' ';
  AppendNumber(line_, tokens_);
  line_ += '\n';
  if (auto written = Write(line_); !written) return written;
  if (std::fflush(out_) != 0) return MakeError(ErrorCode::kInternal, "cannot write the dump");
  if (progress_) progress_({layers_, tokens_});
  return {};
}

std::expected<DumpProgress, Error> ReadDump(std::FILE* in, const ReadDumpOptions& options,
                                            storage::ModelVisitor& visitor) {
  LineReader reader(in);
  DumpProgress progress;
  const auto malformed = [&](std::string_view what) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "dump line " + std::to_string(reader.number()) + ": " + std::string(what));
  };
  const auto expect = [&](std::string_view keyword) -> std::expected<std::string_view, Error> {
    auto line = reader.Next();
    if (!line) {
      return MakeError(
          ErrorCode::kDataLoss,
          "the dump ends early (line " + std::to_string(reader.number()) + "): it is truncated");
    }
    if (line->substr(0, keyword.size()) != keyword ||
        (line->size() > keyword.size() && (*line)[keyword.size()] != ' ')) {
      return malformed("expected '" + std::string(keyword) + "'");
    }
    return line->size() > keyword.size() ? line->substr(keyword.size() + 1) : std::string_view();
  };

  auto version = expect("nbspamd-dump");
  if (!version) {
    if (reader.number() <= 1) {
      return MakeError(ErrorCode::kInvalidArgument, "this is not an nbspamd dump");
    }
    return std::unexpected(version.error());
  }
  if (ParseNumber(*version) != static_cast<std::uint64_t>(kDumpFormatVersion)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "dump format version " + std::string(*version) + " is not " +
                         std::to_string(kDumpFormatVersion) + ", the one this nbspamd reads");
  }
  for (std::string_view keyword : {"schema", "alpha"}) {
    if (auto line = expect(keyword); !line) return std::unexpected(line.error());
  }
  auto tokenizer = expect("tokenizer");
  if (!tokenizer) return std::unexpected(tokenizer.error());
  if (!RestoresInto(*tokenizer, options.tokenizer)) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the dump's tokenizer options are not this daemon's (" +
                         Differences(*tokenizer, options.tokenizer) +
                         "): its token hashes would count other words. Restore it with the "
                         "settings it was made with.");
  }
  auto classes_line = expect("classes");
  if (!classes_line) return std::unexpected(classes_line.error());
  model::ModelStats stats;
  for (std::string_view field : Fields(*classes_line)) {
    auto label = PercentDecode(field);
    if (!label || label->empty()) return malformed("a class label is not percent-encoded");
    stats.classes.push_back({std::move(*label), 0, 0});
  }
  if (stats.classes.empty()) return malformed("no classes");
  const std::size_t class_count = stats.classes.size();
  std::vector<std::uint64_t> counts;
  counts.reserve(class_count);
  const auto read_counts = [&](std::string_view keyword, auto store) -> std::expected<void, Error> {
    auto line = expect(keyword);
    if (!line) return std::unexpected(line.error());
    const auto fields = Fields(*line);
    if (fields.size() != class_count) return malformed("expected a count per class");
    for (std::size_t c = 0; c < class_count; ++c) {
      const auto value = ParseNumber(fields[c]);
      if (!value) return malformed("a count is not a number");
      store(c, *value);
    }
    return {};
  };

  for (;;) {
    auto line = reader.Next();
    if (!line) {
      return MakeError(ErrorCode::kDataLoss,
                       "the dump ends before its 'end' line: it is truncated");
    }
    const auto fields = Fields(*line);
    if (fields.empty()) return malformed("an empty line");
    if (fields[0] == "end") {
      if (fields.size() != 3) return malformed("expected 'end LAYERS TOKENS'");
      if (ParseNumber(fields[1]) != progress.layers || ParseNumber(fields[2]) != progress.tokens) {
        return MakeError(ErrorCode::kDataLoss,
                         "the dump is damaged: its end line counts other layers or tokens than "
                         "it holds");
      }
      if (reader.Next()) return malformed("text after the end line");
      break;
    }
    if (fields[0] != "layer" || fields.size() < 2) return malformed("expected 'layer'");
    std::string user;
    if (fields[1] == "user" && fields.size() == 3) {
      auto decoded = PercentDecode(fields[2]);
      if (!decoded || decoded->empty()) return malformed("a user id is not percent-encoded");
      if (auto valid = model::CheckUserId(*decoded); !valid)
        return malformed(valid.error().message);
      user = std::move(*decoded);
    } else if (fields[1] != "global" || fields.size() != 2) {
      return malformed("expected 'layer global' or 'layer user ID'");
    }
    if (auto read = read_counts(
            "documents", [&](std::size_t c, std::uint64_t v) { stats.classes[c].documents = v; });
        !read) {
      return std::unexpected(read.error());
    }
    if (auto read = read_counts(
            "tokens", [&](std::size_t c, std::uint64_t v) { stats.classes[c].tokens = v; });
        !read) {
      return std::unexpected(read.error());
    }
    auto vocabulary_line = expect("vocabulary");
    if (!vocabulary_line) return std::unexpected(vocabulary_line.error());
    const auto vocabulary = ParseNumber(*vocabulary_line);
    if (!vocabulary) return malformed("|V| is not a number");
    stats.vocabulary_size = *vocabulary;
    ++progress.layers;
    if (auto begun = visitor.BeginLayer(user, stats); !begun) return std::unexpected(begun.error());
    for (;;) {
      auto token_line = reader.Next();
      if (!token_line) {
        return MakeError(ErrorCode::kDataLoss, "the dump ends inside a layer: it is truncated");
      }
      if (*token_line == "end-layer") break;
      const auto token_fields = Fields(*token_line);
      if (token_fields.size() < 2 || token_fields[0] != "t" ||
          token_fields.size() > class_count + 2) {
        return malformed("expected 't HASH COUNT...' or 'end-layer'");
      }
      const auto hash = ParseHash(token_fields[1]);
      if (!hash) return malformed("a token hash is not 16 hexadecimal digits");
      counts.clear();
      bool any = false;
      for (std::size_t i = 2; i < token_fields.size(); ++i) {
        const auto value = ParseNumber(token_fields[i]);
        if (!value) return malformed("a count is not a number");
        counts.push_back(*value);
        any = any || *value != 0;
      }
      if (!any) return malformed("a token with no count");
      if (auto visited = visitor.Token(*hash, counts); !visited) {
        return std::unexpected(visited.error());
      }
      if (++progress.tokens % options.progress_every == 0 && options.progress) {
        options.progress(progress);
      }
    }
    if (auto ended = visitor.EndLayer(); !ended) return std::unexpected(ended.error());
  }
  if (options.progress) options.progress(progress);
  return progress;
}

}  // namespace nbspamd::dump
