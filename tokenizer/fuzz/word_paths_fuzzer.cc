// Fuzz target: each fast path of the tokenizer against its reference, for any input.
//   - Words: the ASCII fast word path and the ICU-only path must give identical token bags
//     (hashes, counts and texts). The first byte picks the options and whether the rest is
//     tokenized as it is (plain text or mail) or as the body of a minimal mail message.
//   - HTML: the rest, as it is and made UTF-8, read as HTML (VisibleText: the fast parser, or
//     libxml2's SAX events where it leaves the input to libxml2) must give exactly what the walk
//     of libxml2's tree gives (VisibleTextFromTree): text, links, images, truncation; where the
//     fast parser reads the input itself, its events must be libxml2's SAX events, one for one;
//     bit 0x20 of the first byte adds small budgets (tokenizer/html_text.h).
//   - MIME decoding: the rest read as mail with the reader's shortcuts (header values taken
//     unfolded, part contents decoded in place, a message of one part or of one multipart of
//     leaf parts with plain header blocks read without GMime's parser) must give exactly the bag
//     and the facts of GMime's own reading (MimePath::kGmime), texts included
//     (tokenizer/mail_reader.h); bit 0x40 of the first byte also reads the rest as a part's
//     base64 (bit 0x80) or quoted-printable content, its first line as a header, in a multipart
//     and as a message of that one part.
// Built with libFuzzer when NBSPAMD_FUZZ is on; replay_main.cc runs saved inputs without it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tokenizer/charset.h"
#include "tokenizer/html_text.h"
#include "tokenizer/html_tree_text.h"
#include "tokenizer/tokenizer.h"

namespace {

using nbspamd::TokenBag;
using nbspamd::tokenizer::MessageFacts;
using nbspamd::tokenizer::Tokenizer;
using nbspamd::tokenizer::TokenizerOptions;
using nbspamd::tokenizer::WordPath;

TokenizerOptions OptionsFor(std::uint8_t selector, WordPath path) {
  TokenizerOptions options;
  options.boolean_counts = (selector & 0x01) == 0;
  options.word_bigrams = (selector & 0x02) != 0;
  if ((selector & 0x04) != 0) {
    options.min_token_chars = 1 + (selector >> 5);
    options.max_token_chars = 2 + (selector >> 4);
  }
  if ((selector & 0x08) != 0) options.max_tokens = 1 + (selector >> 3);
  options.word_path = path;
  return options;
}

// Aborts, saying where, unless a fast path's options and its reference's give the same bag for
// `message`: hashes, counts and texts, and the same facts (MessageFacts).
void CheckSameBags(std::string_view message, std::uint8_t selector, const char* paths,
                   const TokenizerOptions& fast_options, const char* fast_name,
                   const TokenizerOptions& reference_options, const char* reference_name) {
  MessageFacts fast_facts;
  MessageFacts reference_facts;
  const TokenBag fast = Tokenizer(fast_options).Tokenize(message, /*keep_text=*/true, &fast_facts);
  const TokenBag reference =
      Tokenizer(reference_options).Tokenize(message, /*keep_text=*/true, &reference_facts);
  const bool same_facts = fast_facts.message_id == reference_facts.message_id &&
                          fast_facts.from_domain == reference_facts.from_domain &&
                          fast_facts.subject == reference_facts.subject;
  if (fast.entries == reference.entries && fast.texts == reference.texts && same_facts) return;
  if (!same_facts) {
    std::fprintf(stderr, "%s: the facts differ: %s [%s|%s|%s] %s [%s|%s|%s]\n", paths, fast_name,
                 fast_facts.message_id.c_str(), fast_facts.from_domain.c_str(),
                 fast_facts.subject.c_str(), reference_name, reference_facts.message_id.c_str(),
                 reference_facts.from_domain.c_str(), reference_facts.subject.c_str());
  }
  std::fprintf(stderr, "%s differ (selector %u): %zu %s vs %zu %s entries\n", paths,
               static_cast<unsigned>(selector), fast.entries.size(), fast_name,
               reference.entries.size(), reference_name);
  for (std::size_t i = 0; i < fast.texts.size() || i < reference.texts.size(); ++i) {
    const std::string fast_text(i < fast.texts.size() ? fast.texts[i].text : "-");
    const std::string reference_text(i < reference.texts.size() ? reference.texts[i].text : "-");
    if (fast_text != reference_text) {
      std::fprintf(stderr, "  first difference at %zu: %s [%s] %s [%s]\n", i, fast_name,
                   fast_text.c_str(), reference_name, reference_text.c_str());
      break;
    }
  }
  std::abort();
}

void CheckSame(std::string_view message, std::uint8_t selector) {
  CheckSameBags(message, selector, "word paths", OptionsFor(selector, WordPath::kAsciiFast), "fast",
                OptionsFor(selector, WordPath::kIcuOnly), "ICU");
}

void CheckSameMimeDecoding(std::string_view message, std::uint8_t selector) {
  const TokenizerOptions in_place = OptionsFor(selector, WordPath::kAsciiFast);
  TokenizerOptions gmime = in_place;
  gmime.mime_path = nbspamd::tokenizer::MimePath::kGmime;
  CheckSameBags(message, selector, "MIME decoding paths", in_place, "in place", gmime, "GMime");
}

void CheckSameHtml(std::string_view html, std::uint8_t selector) {
  nbspamd::tokenizer::HtmlLimits limits;
  if ((selector & 0x20) != 0) {
    limits.max_tags = 1 + (selector >> 6) * 5;
    limits.max_attributes = 2 + (selector >> 6) * 3;
    limits.max_tag_attributes = 1 + (selector >> 6);
  }
  // The fast parser's events are libxml2's wherever it reads the input itself.
  bool fast_parsed = false;
  const std::string fast_events =
      HtmlEventTrace(html, nbspamd::tokenizer::HtmlParser::kFast, &fast_parsed);
  if (fast_parsed) {
    const std::string libxml2_events =
        HtmlEventTrace(html, nbspamd::tokenizer::HtmlParser::kLibxml2);
    if (fast_events != libxml2_events) {
      std::fprintf(stderr, "HTML parsers differ: fast %s\nlibxml2 %s\n", fast_events.c_str(),
                   libxml2_events.c_str());
      std::abort();
    }
  }
  const nbspamd::tokenizer::HtmlContent events = nbspamd::tokenizer::VisibleText(html, limits);
  const nbspamd::tokenizer::HtmlContent tree =
      nbspamd::tokenizer::VisibleTextFromTree(html, limits);
  if (events == tree) return;
  std::fprintf(stderr,
               "HTML paths differ (selector %u): events [%s] %zu links %zu images %d, tree [%s] "
               "%zu links %zu images %d\n",
               static_cast<unsigned>(selector), events.text.c_str(), events.links.size(),
               events.images, events.truncated ? 1 : 0, tree.text.c_str(), tree.links.size(),
               tree.images, tree.truncated ? 1 : 0);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t selector = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((selector & 0x10) != 0) {
    CheckSame("Subject: fuzz\nContent-Type: text/plain; charset=utf-8\n\n" + std::string(rest),
              selector);
  } else {
    CheckSame(rest, selector);
  }
  CheckSameHtml(rest, selector);
  // The same bytes made UTF-8 as the reader makes a part's text, which the fast HTML parser reads
  // itself (it leaves other input to libxml2).
  CheckSameHtml(nbspamd::tokenizer::ToUtf8(rest, "utf-8").text, selector);
  CheckSameMimeDecoding(rest, selector);
  if ((selector & 0x40) != 0) {
    // The rest as the content of a part in a transfer encoding (bit 0x80: base64, else
    // quoted-printable), its first line also a header field's value: both decoders and the
    // header value's shortcut on mail-shaped input.
    const std::string_view first_line = rest.substr(0, rest.find('\n'));
    const char* encoding = (selector & 0x80) != 0 ? "base64" : "quoted-printable";
    CheckSameMimeDecoding("Subject: fuzz\nX-Fuzz: " + std::string(first_line) +
                              "\nMIME-Version: 1.0\nContent-Type: multipart/mixed; "
                              "boundary=b\n\n--b\nContent-Type: text/plain; charset=utf-8\n"
                              "Content-Transfer-Encoding: " +
                              encoding + "\n\n" + std::string(rest) + "\n--b--\n",
                          selector);
    // The same as a message of that one part: the reader's plain-message shortcut when the
    // first line keeps the header block plain (tokenizer/plain_message.h), GMime's parser when
    // not.
    CheckSameMimeDecoding("Subject: fuzz\nX-Fuzz: " + std::string(first_line) +
                              "\nContent-Type: text/plain; charset=utf-8\n"
                              "Content-Transfer-Encoding: " +
                              encoding + "\n\n" + std::string(rest),
                          selector);
  }
  return 0;
}
