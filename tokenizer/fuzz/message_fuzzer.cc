// Fuzz target: any bytes through the whole tokenizer (mail parsing with GMime, charsets, HTML,
// URLs, ICU words) must give a bag that keeps the contract of tokenizer/tokenizer.h and
// common/token_bag.h:
//   - entries sorted by hash, each hash once, each count >= 1 (exactly 1 with boolean counts);
//   - at most max_tokens token occurrences, byte n-grams aside (they are outside the budget);
//   - with keep_text, texts parallel to entries, each the text its hash was made from (a byte
//     n-gram's readable text reads back to the hashed one, and its bytes are in the message),
//     non-empty valid UTF-8 (texts are sent back in JSON explanations), and the same entries as
//     without;
//   - body words (and each word of a bigram, and the words of subject:, from-name: and mailer:)
//     within min_token_chars..max_token_chars code points;
//   - the bytes past max_message_bytes change nothing.
// The first byte picks the options (0 = the daemon's defaults); the rest is the message.
// Built with libFuzzer when NBSPAMD_FUZZ is on; replay_main.cc runs saved inputs without it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "common/token_hash.h"
#include "tokenizer/byte_ngrams.h"
#include "tokenizer/tokenizer.h"

namespace {

using nbspamd::TokenBag;
using nbspamd::TokenSource;
using nbspamd::tokenizer::Tokenizer;
using nbspamd::tokenizer::TokenizerOptions;

[[noreturn]] void Fail(const char* what, std::uint8_t selector, std::string_view token = {}) {
  std::fprintf(stderr, "tokenizer contract broken (selector 0x%02x): %s [%.*s]\n",
               static_cast<unsigned>(selector), what, static_cast<int>(token.size()), token.data());
  std::abort();
}

// Bit 0: raw counts. Bit 1: no header tokens. Bit 2: word bigrams. Bit 3: a small token budget.
// Bit 4: a small byte budget. Bit 5: narrow word length bounds. Bits 6-7 size the budgets; bit 6
// also turns byte 4-grams on, bit 7 the look-alike fold.
TokenizerOptions OptionsFor(std::uint8_t selector) {
  TokenizerOptions options;
  options.boolean_counts = (selector & 0x01) == 0;
  options.header_tokens = (selector & 0x02) == 0;
  options.word_bigrams = (selector & 0x04) != 0;
  options.byte_ngrams = (selector & 0x40) != 0 ? 4 : 0;
  options.fold_lookalikes = (selector & 0x80) != 0;
  const std::size_t scale = selector >> 6;  // 0..3
  if ((selector & 0x08) != 0) options.max_tokens = 1 + scale * 7;
  if ((selector & 0x10) != 0) options.max_message_bytes = 16 << (2 * scale);
  if ((selector & 0x20) != 0) {
    options.min_token_chars = 2 + scale;
    options.max_token_chars = 3 + 2 * scale;
  }
  return options;
}

// The number of code points of valid UTF-8 `text`, or nothing when it is not valid UTF-8.
bool CountCodePoints(std::string_view text, std::size_t& count) {
  count = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    char32_t code_point = 0;
    if (byte < 0x80) {
      length = 1;
      code_point = byte;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code_point = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code_point = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code_point = byte & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code_point = (code_point << 6) | (next & 0x3F);
    }
    static constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code_point < kMinimum[length] || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return false;
    }
    ++count;
    i += length;
  }
  return true;
}

// A word of `token` (after its prefix) must hold min..max code points.
void CheckWord(std::string_view word, std::string_view token, const TokenizerOptions& options,
               std::uint8_t selector) {
  std::size_t chars = 0;
  if (!CountCodePoints(word, chars)) Fail("word is not valid UTF-8", selector, token);
  const std::size_t min_chars = options.min_token_chars == 0 ? 1 : options.min_token_chars;
  if (chars < min_chars || chars > options.max_token_chars) {
    Fail("word length out of bounds", selector, token);
  }
}

// The words of a token whose prefix is `prefix`: one word, or two with bigrams.
void CheckWords(std::string_view token, std::size_t prefix, const TokenizerOptions& options,
                std::uint8_t selector) {
  const std::string_view words = token.substr(prefix);
  const std::size_t space = words.find(' ');
  if (space == std::string_view::npos) return CheckWord(words, token, options, selector);
  if (!options.word_bigrams) Fail("a word holds a space without bigrams", selector, token);
  CheckWord(words.substr(0, space), token, options, selector);
  CheckWord(words.substr(space + 1), token, options, selector);
}

// A byte n-gram's readable `text` must read back to the text its `hash` was made from, n bytes
// of `message`.
void CheckByteNgram(std::string_view text, nbspamd::TokenHash hash, std::string_view message,
                    std::uint8_t selector) {
  const std::optional<std::string> hashed = nbspamd::tokenizer::ByteNgramHashedText(text);
  if (!hashed) Fail("a byte n-gram's text does not read back", selector, text);
  if (nbspamd::HashToken(*hashed) != hash) {
    Fail("a byte n-gram's hash is not the hash of its bytes", selector, text);
  }
  if (message.find(std::string_view(*hashed).substr(3)) == std::string_view::npos) {
    Fail("a byte n-gram's bytes are not in the message", selector, text);
  }
}

void CheckBag(const TokenBag& bag, const TokenizerOptions& options, std::string_view message,
              bool keep_text, std::uint8_t selector) {
  for (std::size_t i = 0; i < bag.entries.size(); ++i) {
    if (bag.entries[i].count == 0) Fail("an entry with count 0", selector);
    if (options.boolean_counts && bag.entries[i].count != 1) {
      Fail("a count above 1 with boolean counts", selector);
    }
    if (i > 0 && bag.entries[i - 1].hash >= bag.entries[i].hash) {
      Fail("entries not sorted by hash, or a hash twice", selector);
    }
  }
  // Byte n-grams are told apart by their texts; without, the entries are those of the bag with.
  if (keep_text || options.byte_ngrams == 0) {
    std::uint64_t budgeted = 0;
    for (std::size_t i = 0; i < bag.entries.size(); ++i) {
      const bool ngram =
          keep_text && i < bag.texts.size() && bag.texts[i].source == TokenSource::kByteNgram;
      if (!ngram) budgeted += bag.entries[i].count;
    }
    if (budgeted > options.max_tokens) Fail("more tokens than max_tokens", selector);
  }
  if (!keep_text) {
    if (!bag.texts.empty()) Fail("texts without keep_text", selector);
    return;
  }
  if (bag.texts.size() != bag.entries.size()) Fail("texts not parallel to entries", selector);
  for (std::size_t i = 0; i < bag.texts.size(); ++i) {
    const std::string_view text = bag.texts[i].text;
    std::size_t chars = 0;
    if (text.empty()) Fail("an empty token", selector);
    if (!CountCodePoints(text, chars)) Fail("a token is not valid UTF-8", selector, text);
    if (bag.texts[i].source == TokenSource::kByteNgram) {
      if (options.byte_ngrams == 0) Fail("a byte n-gram while they are off", selector, text);
      CheckByteNgram(text, bag.entries[i].hash, message, selector);
    } else if (nbspamd::HashToken(text) != bag.entries[i].hash) {
      Fail("a token's hash is not the hash of its text", selector, text);
    }
    if (bag.texts[i].source == TokenSource::kBody) {
      CheckWords(text, 0, options, selector);
    } else if (bag.texts[i].source == TokenSource::kHeader) {
      for (const std::string_view prefix : {"subject:", "from-name:", "mailer:"}) {
        if (std::string_view(text).starts_with(prefix)) {
          CheckWords(text, prefix.size(), options, selector);
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);
  const TokenizerOptions options = OptionsFor(selector);
  const Tokenizer tokenizer(options);

  const TokenBag with_text = tokenizer.Tokenize(message, /*keep_text=*/true);
  CheckBag(with_text, options, message, /*keep_text=*/true, selector);
  const TokenBag bag = tokenizer.Tokenize(message);
  CheckBag(bag, options, message, /*keep_text=*/false, selector);
  if (bag.entries != with_text.entries) Fail("keep_text changed the entries", selector);

  if (message.size() > options.max_message_bytes) {
    const TokenBag cut = tokenizer.Tokenize(message.substr(0, options.max_message_bytes));
    if (cut.entries != bag.entries) Fail("bytes past max_message_bytes changed the bag", selector);
  }
  return 0;
}
