#include "tokenizer/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <string_view>

#include "tokenizer/html_fast_parser.h"
#include "tokenizer/html_parse.h"
#include "tokenizer/html_text_collector.h"

namespace nbspamd::tokenizer {
namespace {

using html_parse::ClampedSize;
using html_parse::kParseOptions;
using html_parse::SilenceErrors;
using html_parse::WithinBudget;

// libxml2's SAX events of its parse, given to a collector. The tree VisibleTextFromTree walks is
// built from exactly these events by libxml2's SAX2 handlers, one node per start tag, text,
// CDATA block, comment or processing instruction.
class EventReader {
 public:
  explicit EventReader(HtmlTextCollector& collector) : collector_(collector) {}

  // Parses `html` as htmlReadMemory does, with this reader's handlers.
  void Parse(std::string_view html) {
    if (html.empty()) return;
    SilenceErrors();
    xmlParserCtxtPtr context = xmlCreateMemoryParserCtxt(html.data(), ClampedSize(html));
    if (context == nullptr) return;
    htmlSAXHandler handler{};
    handler.startElement = OnStartElement;
    handler.endElement = OnEndElement;
    handler.characters = OnText;
    handler.cdataBlock = OnText;
    handler.comment = OnComment;
    handler.processingInstruction = OnProcessingInstruction;
    handler.internalSubset = OnDoctype;
    handler.initialized = 1;  // A SAX1 handler, as htmlReadMemory installs.
    std::memcpy(context->sax, &handler, sizeof(xmlSAXHandlerV1));
    // The rest of htmlReadMemory (its htmlDoRead), with the same options and encoding.
    htmlCtxtUseOptions(context, kParseOptions);
    context->html = 1;
    if (xmlCharEncodingHandlerPtr utf8 = xmlFindCharEncodingHandler("UTF-8")) {
      xmlSwitchToEncoding(context, utf8);
      if (context->input->encoding != nullptr)
        xmlFree(const_cast<xmlChar*>(context->input->encoding));
      context->input->encoding = xmlStrdup(BAD_CAST "UTF-8");
    }
    current_ = this;
    context_ = context;
    htmlParseDocument(context);
    current_ = nullptr;
    context_ = nullptr;
    if (context->myDoc != nullptr) xmlFreeDoc(context->myDoc);  // None: no startDocument.
    context->myDoc = nullptr;
    xmlFreeParserCtxt(context);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  // Runs a handler's work; an exception (std::bad_alloc) must not unwind through libxml2's C
  // frames: it stops the parser and is thrown again once the parse has returned.
  template <typename Work>
  static void Guarded(Work&& work) {
    EventReader& self = *current_;
    if (self.stopped_) return;
    try {
      work(self);
    } catch (...) {
      self.failure_ = std::current_exception();
      self.Stop();
    }
  }

  void Stop() {
    stopped_ = true;
    xmlStopParser(context_);
  }

  static void OnStartElement(void*, const xmlChar* name, const xmlChar** attributes) {
    Guarded([&](EventReader& self) {
      if (!self.collector_.StartElement(reinterpret_cast<const char*>(name),
                                        reinterpret_cast<const char* const*>(attributes))) {
        self.Stop();
      }
    });
  }
  static void OnEndElement(void*, const xmlChar*) {
    Guarded([](EventReader& self) { self.collector_.EndElement(); });
  }
  static void OnText(void*, const xmlChar* text, int length) {
    Guarded([&](EventReader& self) {
      self.collector_.Characters(reinterpret_cast<const char*>(text),
                                 length > 0 ? static_cast<std::size_t>(length) : 0);
    });
  }
  static void OnComment(void*, const xmlChar*) {
    Guarded([](EventReader& self) { self.collector_.CommentOrInstruction(); });
  }
  static void OnProcessingInstruction(void*, const xmlChar*, const xmlChar*) {
    Guarded([](EventReader& self) { self.collector_.CommentOrInstruction(); });
  }
  static void OnDoctype(void*, const xmlChar*, const xmlChar*, const xmlChar*) {
    Guarded([](EventReader& self) { self.collector_.Doctype(); });
  }

  static thread_local EventReader* current_;  // The reader of this thread's parse.
  HtmlTextCollector& collector_;
  xmlParserCtxtPtr context_ = nullptr;
  std::exception_ptr failure_;
  bool stopped_ = false;
};

thread_local EventReader* EventReader::current_ = nullptr;

}  // namespace

void InitializeHtmlParser() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

HtmlContent VisibleText(std::string_view html, const HtmlLimits& limits, HtmlParser parser) {
  HtmlContent content;
  html = WithinBudget(html, limits, content.truncated);
  if (parser == HtmlParser::kFast) {
    HtmlTextCollector collector(content);
    if (ParseHtmlFast(html, collector)) {
      collector.Finish();
      return content;
    }
    // Something the fast parser leaves to libxml2: start again there.
    const bool truncated = content.truncated;
    content = HtmlContent{};
    content.truncated = truncated;
  }
  HtmlTextCollector collector(content);
  EventReader(collector).Parse(html);
  collector.Finish();
  return content;
}

std::string HtmlEventTrace(std::string_view html, HtmlParser parser, bool* fast_parsed) {
  HtmlContent content;
  HtmlTextCollector collector(content);
  std::string trace;
  collector.TraceInto(&trace);
  if (parser == HtmlParser::kFast) {
    const bool parsed = ParseHtmlFast(html, collector);
    if (fast_parsed != nullptr) *fast_parsed = parsed;
  } else {
    EventReader(collector).Parse(html);
  }
  return trace;
}

}  // namespace nbspamd::tokenizer
