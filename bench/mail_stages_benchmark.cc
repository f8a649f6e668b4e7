// What each way of issue 15 could gain, measured in one binary against the whole tokenizer:
//   - MIME: GMime's parse and teardown of every corpus message, with and without decoding its
//     leaf parts, against one pass that finds every line and boundary candidate without copying
//     (the floor a zero-copy MIME reader cannot go below);
//   - HTML: every HTML part of the corpus reduced to text and links by the tokenizer's libxml2
//     SAX reader, its tree reference, and gumbo (when built with libgumbo-dev);
//   - allocations: malloc calls per message or part (counted by the malloc below), what an
//     arena would have to take over.
// Run (docs/PERFORMANCE.md, "What each remaining way could gain"):
//   export NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus/package/data
//   build/release/bench/mail_stages_benchmark
// Bytes per second are of raw messages for the message benchmarks, of UTF-8 HTML for the HTML
// ones. A benchmark, not a test: nothing here checks what the parsers find.
#include <benchmark/benchmark.h>
#include <gmime/gmime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(NBSPAMD_BENCH_HAVE_GUMBO)
#include <gumbo.h>
#endif

#include "bench/corpus_files.h"
#include "tokenizer/html_text.h"
#include "tokenizer/html_tree_text.h"
#include "tokenizer/tokenizer.h"

// Counts malloc, calloc and realloc calls of this thread, forwarding to glibc's allocator.
// Not with the sanitizers, which bring their own malloc, nor in the build with the daemon's
// allocator (mail_stages_benchmark_jemalloc), which replaces malloc itself.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && !defined(NBSPAMD_JEMALLOC)
#define NBSPAMD_BENCH_COUNT_MALLOC 1
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* pointer, std::size_t size);
}
namespace {
thread_local std::uint64_t malloc_calls = 0;
}
extern "C" void* malloc(std::size_t size) {
  ++malloc_calls;
  return __libc_malloc(size);
}
extern "C" void* calloc(std::size_t count, std::size_t size) {
  ++malloc_calls;
  return __libc_calloc(count, size);
}
extern "C" void* realloc(void* pointer, std::size_t size) {
  ++malloc_calls;
  return __libc_realloc(pointer, size);
}
#endif

namespace nbspamd::bench {
namespace {

std::uint64_t MallocCalls() {
#if defined(NBSPAMD_BENCH_COUNT_MALLOC)
  return malloc_calls;
#else
  return 0;
#endif
}

// Releases a GObject at the end of a scope.
template <typename T>
struct Unref {
  T* object;
  ~Unref() {
    if (object != nullptr) g_object_unref(object);
  }
};

GMimeMessage* Parse(const std::string& message) {
  Unref<GMimeStream> stream{g_mime_stream_mem_new_with_buffer(message.data(), message.size())};
  Unref<GMimeParser> parser{g_mime_parser_new_with_stream(stream.object)};
  return g_mime_parser_construct_message(parser.object, nullptr);
}

void InitializeGMime() {
  static const bool initialized = [] {
    g_mime_init();
    tokenizer::InitializeHtmlParser();
    return true;
  }();
  (void)initialized;
}

void ReportPerMessage(benchmark::State& state, std::size_t bytes, std::size_t messages,
                      std::uint64_t mallocs) {
  const auto iterations = static_cast<std::int64_t>(state.iterations());
  state.SetBytesProcessed(iterations * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(iterations * static_cast<std::int64_t>(messages));
#if defined(NBSPAMD_BENCH_COUNT_MALLOC)
  state.counters["mallocs_per_item"] =
      static_cast<double>(mallocs) / static_cast<double>(iterations * messages);
#else
  (void)mallocs;
#endif
}

// The whole tokenizer with its default options: the baseline of every ratio.
void BM_Tokenize(benchmark::State& state) {
  const auto& messages = CorpusMessages();
  const tokenizer::Tokenizer tokenizer{tokenizer::TokenizerOptions{}};
  const std::uint64_t before = MallocCalls();
  for (auto _ : state) {
    for (const std::string& message : messages) {
      const TokenBag bag = tokenizer.Tokenize(message);
      benchmark::DoNotOptimize(bag.entries.data());
    }
  }
  ReportPerMessage(state, CorpusBytes(), messages.size(), MallocCalls() - before);
}
BENCHMARK(BM_Tokenize)->Unit(benchmark::kMillisecond);

// GMime's object tree built and freed, nothing read from it.
void BM_GMimeParse(benchmark::State& state) {
  InitializeGMime();
  const auto& messages = CorpusMessages();
  const std::uint64_t before = MallocCalls();
  for (auto _ : state) {
    for (const std::string& message : messages) {
      Unref<GMimeMessage> mail{Parse(message)};
      benchmark::DoNotOptimize(mail.object);
    }
  }
  ReportPerMessage(state, CorpusBytes(), messages.size(), MallocCalls() - before);
}
BENCHMARK(BM_GMimeParse)->Unit(benchmark::kMillisecond);

// As BM_GMimeParse, and every leaf part's transfer encoding undone into a string, as the
// tokenizer's mail reader does for its text parts.
void DecodeLeaf(GMimeObject* /*parent*/, GMimeObject* part, gpointer total) {
  if (!GMIME_IS_PART(part)) return;
  GMimeDataWrapper* wrapper = g_mime_part_get_content(GMIME_PART(part));
  if (wrapper == nullptr) return;
  Unref<GMimeStream> out{g_mime_stream_mem_new()};
  if (g_mime_data_wrapper_write_to_stream(wrapper, out.object) < 0) return;
  GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out.object));
  const std::string copy(reinterpret_cast<const char*>(bytes->data), bytes->len);
  *static_cast<std::size_t*>(total) += copy.size();
}

void BM_GMimeParseAndDecode(benchmark::State& state) {
  InitializeGMime();
  const auto& messages = CorpusMessages();
  std::size_t decoded = 0;
  const std::uint64_t before = MallocCalls();
  for (auto _ : state) {
    for (const std::string& message : messages) {
      Unref<GMimeMessage> mail{Parse(message)};
      if (mail.object != nullptr) g_mime_message_foreach(mail.object, DecodeLeaf, &decoded);
    }
  }
  benchmark::DoNotOptimize(decoded);
  ReportPerMessage(state, CorpusBytes(), messages.size(), MallocCalls() - before);
}
BENCHMARK(BM_GMimeParseAndDecode)->Unit(benchmark::kMillisecond);

// The floor of a zero-copy MIME reader: every line found with memchr, every line that could be
// a boundary ("--" first) or the end of a header block (empty) noted, nothing copied.
void BM_LineScan(benchmark::State& state) {
  const auto& messages = CorpusMessages();
  std::size_t marks = 0;
  for (auto _ : state) {
    for (const std::string& message : messages) {
      const char* at = message.data();
      const char* const end = at + message.size();
      while (at < end) {
        const void* found = std::memchr(at, '\n', static_cast<std::size_t>(end - at));
        const char* line_end = found != nullptr ? static_cast<const char*>(found) : end;
        const std::size_t length = static_cast<std::size_t>(line_end - at);
        if ((length >= 2 && at[0] == '-' && at[1] == '-') || length == 0 ||
            (length == 1 && at[0] == '\r')) {
          ++marks;
        }
        at = line_end + 1;
      }
    }
  }
  benchmark::DoNotOptimize(marks);
  ReportPerMessage(state, CorpusBytes(), messages.size(), 0);
}
BENCHMARK(BM_LineScan)->Unit(benchmark::kMillisecond);

// Every text/html part of the corpus, converted to UTF-8 by GMime.
void CollectHtml(GMimeObject* /*parent*/, GMimeObject* part, gpointer parts) {
  if (!GMIME_IS_TEXT_PART(part)) return;
  GMimeContentType* type = g_mime_object_get_content_type(part);
  if (type == nullptr || !g_mime_content_type_is_type(type, "text", "html")) return;
  char* text = g_mime_text_part_get_text(GMIME_TEXT_PART(part));
  if (text == nullptr) return;
  static_cast<std::vector<std::string>*>(parts)->emplace_back(text);
  g_free(text);
}

const std::vector<std::string>& HtmlParts() {
  static const std::vector<std::string> parts = [] {
    InitializeGMime();
    std::vector<std::string> found;
    for (const std::string& message : CorpusMessages()) {
      Unref<GMimeMessage> mail{Parse(message)};
      if (mail.object != nullptr) g_mime_message_foreach(mail.object, CollectHtml, &found);
    }
    return found;
  }();
  return parts;
}

std::size_t HtmlBytes() {
  std::size_t bytes = 0;
  for (const std::string& part : HtmlParts()) bytes += part.size();
  return bytes;
}

template <tokenizer::HtmlContent (*Reader)(std::string_view, const tokenizer::HtmlLimits&)>
void BM_HtmlLibxml2(benchmark::State& state) {
  const auto& parts = HtmlParts();
  const std::uint64_t before = MallocCalls();
  for (auto _ : state) {
    for (const std::string& part : parts) {
      const tokenizer::HtmlContent content = Reader(part, tokenizer::HtmlLimits{});
      benchmark::DoNotOptimize(content.text.data());
    }
  }
  ReportPerMessage(state, HtmlBytes(), parts.size(), MallocCalls() - before);
}
tokenizer::HtmlContent FastText(std::string_view html, const tokenizer::HtmlLimits& limits) {
  return tokenizer::VisibleText(html, limits, tokenizer::HtmlParser::kFast);
}
tokenizer::HtmlContent Libxml2Text(std::string_view html, const tokenizer::HtmlLimits& limits) {
  return tokenizer::VisibleText(html, limits, tokenizer::HtmlParser::kLibxml2);
}
BENCHMARK(BM_HtmlLibxml2<FastText>)->Name("BM_HtmlFast")->Unit(benchmark::kMillisecond);

// A hostile part: 49,000 distinct unknown element names (under the 50,000-tag budget), by the
// fast parser (range 0) and by libxml2 (range 1). Needs no corpus.
void BM_HtmlUnknownNames(benchmark::State& state) {
  std::string html;
  for (int i = 0; i < 49000; ++i) html += "<x" + std::to_string(i) + "/>";
  const auto parser =
      state.range(0) == 0 ? tokenizer::HtmlParser::kFast : tokenizer::HtmlParser::kLibxml2;
  for (auto _ : state) {
    const tokenizer::HtmlContent content = tokenizer::VisibleText(html, {}, parser);
    benchmark::DoNotOptimize(content.text.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * html.size()));
}
BENCHMARK(BM_HtmlUnknownNames)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HtmlLibxml2<Libxml2Text>)->Name("BM_HtmlLibxml2Sax")->Unit(benchmark::kMillisecond);
BENCHMARK(BM_HtmlLibxml2<tokenizer::VisibleTextFromTree>)
    ->Name("BM_HtmlLibxml2Tree")
    ->Unit(benchmark::kMillisecond);

#if defined(NBSPAMD_BENCH_HAVE_GUMBO)
// The same job with gumbo (HTML5 parsing): text outside script and style, href and src values.
void GumboWalk(const GumboNode* node, std::string& text, std::vector<std::string>& links) {
  switch (node->type) {
    case GUMBO_NODE_TEXT:
    case GUMBO_NODE_CDATA:
    case GUMBO_NODE_WHITESPACE:
      text += node->v.text.text;
      return;
    case GUMBO_NODE_ELEMENT:
    case GUMBO_NODE_TEMPLATE: {
      const GumboElement& element = node->v.element;
      if (element.tag == GUMBO_TAG_SCRIPT || element.tag == GUMBO_TAG_STYLE) return;
      for (const char* name : {"href", "src"}) {
        if (const GumboAttribute* attribute = gumbo_get_attribute(&element.attributes, name)) {
          links.emplace_back(attribute->value);
        }
      }
      for (unsigned i = 0; i < element.children.length; ++i) {
        GumboWalk(static_cast<const GumboNode*>(element.children.data[i]), text, links);
      }
      text += ' ';
      return;
    }
    case GUMBO_NODE_DOCUMENT:
      for (unsigned i = 0; i < node->v.document.children.length; ++i) {
        GumboWalk(static_cast<const GumboNode*>(node->v.document.children.data[i]), text, links);
      }
      return;
    case GUMBO_NODE_COMMENT:
      return;
  }
}

void BM_HtmlGumbo(benchmark::State& state) {
  const auto& parts = HtmlParts();
  const std::uint64_t before = MallocCalls();
  for (auto _ : state) {
    for (const std::string& part : parts) {
      GumboOutput* output =
          gumbo_parse_with_options(&kGumboDefaultOptions, part.data(), part.size());
      std::string text;
      std::vector<std::string> links;
      GumboWalk(output->document, text, links);
      benchmark::DoNotOptimize(text.data());
      gumbo_destroy_output(&kGumboDefaultOptions, output);
    }
  }
  ReportPerMessage(state, HtmlBytes(), parts.size(), MallocCalls() - before);
}
BENCHMARK(BM_HtmlGumbo)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
}  // namespace nbspamd::bench

BENCHMARK_MAIN();
