#include "tokenizer/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>

#include "tokenizer/ascii.h"
#include "tokenizer/html_parse.h"

namespace nbspamd::tokenizer {
namespace {

using html_parse::ClampedSize;
using html_parse::FlagsOf;
using html_parse::kAltText;
using html_parse::kBlock;
using html_parse::kHrefLink;
using html_parse::kImage;
using html_parse::kParseOptions;
using html_parse::kSkipped;
using html_parse::SilenceErrors;
using html_parse::WithinBudget;

// The SAX events of the same parse, read into `content` as the walk of the tree reads it
// (VisibleTextFromTree): the tree is built from exactly these events by libxml2's SAX2
// handlers, one node per start tag, text, CDATA block, comment or processing instruction.
class EventReader {
 public:
  explicit EventReader(HtmlContent& content) : content_(content) {}

  // Parses `html` (within budget) as htmlReadMemory does, with this reader's handlers.
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
    Finish();
  }

 private:
  // An open element, as libxml2's tree builder holds it on its node stack.
  struct Open {
    unsigned flags = 0;
    bool unseen = false;        // It or an ancestor is skipped: the walk never enters it.
    bool has_children = false;  // The walk adds a block's closing space only after children.
    bool is_root = false;       // The document's first child.
  };
  // The tree builder's node stack refuses a node deeper than this and stops the parser
  // (nodePush and xmlParserMaxDepth, without XML_PARSE_HUGE): the tree ends there.
  static constexpr std::size_t kMaxDepth = 256;

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
    Guarded([&](EventReader& self) { self.Start(name, attributes); });
  }

  void Start(const xmlChar* name, const xmlChar** attributes) {
    if (open_.size() > kMaxDepth) {
      Stop();
      return;
    }
    bool is_root = false;
    if (!open_.empty()) {
      open_.back().has_children = true;
    } else if (!document_has_child_) {
      document_has_child_ = true;
      is_root = true;  // The document's first child, and an element.
    } else if (closed_root_.has_value()) {
      if (root_adopts_) {
        closed_root_->has_children = true;  // Adopted: the tree builder appends it there.
      } else {
        Close(*closed_root_);  // A sibling after the root: the walk left the root.
        closed_root_.reset();
      }
    }
    const bool parent_unseen = !open_.empty() && open_.back().unseen;
    const unsigned flags = FlagsOf(TreeNameOf(name));
    const bool unseen = parent_unseen || (flags & kSkipped) != 0;
    open_.push_back({flags, unseen, false, is_root});
    if (unseen) return;
    HtmlContent& content = content_;
    if ((flags & kHrefLink) != 0) {
      if (const xmlChar* const* href = Find(attributes, "href"))
        content.links.emplace_back(Text(*href));
    }
    if ((flags & kImage) != 0) {
      ++content.images;
      if (const xmlChar* const* src = Find(attributes, "src"))
        content.links.emplace_back(Text(*src));
    }
    if ((flags & kAltText) != 0) {
      if (const xmlChar* const* alt = Find(attributes, "alt")) {
        content.text += ' ';
        content.text += Text(*alt);
        content.text += ' ';
      }
    }
    if ((flags & kBlock) != 0) content.text += ' ';
  }

  // The name the tree builder gives an element (xmlSAX2StartElement splits it as a qualified
  // name, xmlSplitQName): what follows the first ':' ("x:style" is a style element), unless the
  // name starts or ends with it.
  static const xmlChar* TreeNameOf(const xmlChar* name) {
    if (name == nullptr || name[0] == ':') return name;
    const xmlChar* colon = xmlStrchr(name, ':');
    return colon == nullptr || colon[1] == '\0' ? name : colon + 1;
  }

  static void OnEndElement(void*, const xmlChar*) {
    Guarded([](EventReader& self) {
      if (self.open_.empty()) return;
      const Open closed = self.open_.back();
      self.open_.pop_back();
      if (closed.is_root) {
        self.closed_root_ = closed;  // Closed in the tree only after what it may still adopt.
      } else {
        self.Close(closed);
      }
    });
  }

  // A block's closing space, where the walk adds it on leaving the element.
  void Close(const Open& element) {
    if (!element.unseen && element.has_children && (element.flags & kBlock) != 0) {
      content_.text += ' ';
    }
  }

  // The end of the tree: the walk leaves whatever the parse left open (it stopped early), then
  // the root element.
  void Finish() {
    while (!open_.empty()) {
      const Open element = open_.back();
      open_.pop_back();
      if (element.is_root)
        closed_root_ = element;
      else
        Close(element);
    }
    if (closed_root_.has_value()) Close(*closed_root_);
  }

  static void OnText(void*, const xmlChar* text, int length) {
    Guarded([&](EventReader& self) {
      // Text with no open element makes no node (xmlSAX2Characters).
      if (self.open_.empty()) return;
      Open& parent = self.open_.back();
      parent.has_children = true;
      if (!parent.unseen && length > 0) {
        self.content_.text.append(reinterpret_cast<const char*>(text),
                                  static_cast<std::size_t>(length));
      }
    });
  }

  static void OnComment(void*, const xmlChar*) { MarkChild(); }
  static void OnProcessingInstruction(void*, const xmlChar*, const xmlChar*) { MarkChild(); }

  // The tree's DTD node, made the document's first child wherever the doctype comes: elements
  // started with nothing open are from then on appended to the document, not to the root.
  static void OnDoctype(void*, const xmlChar*, const xmlChar*, const xmlChar*) {
    current_->document_has_child_ = true;
    current_->root_adopts_ = false;
  }

  // A comment or processing instruction: a child of the open element, else of the document.
  static void MarkChild() {
    EventReader& self = *current_;
    if (self.stopped_) return;
    if (self.open_.empty()) {
      self.document_has_child_ = true;
    } else {
      self.open_.back().has_children = true;
    }
  }

  // The value slot of attribute `name` in libxml2's name/value list, or null. A value-less
  // attribute reads as "" (as xmlGetProp gives it).
  static const xmlChar* const* Find(const xmlChar** attributes, const char* name) {
    if (attributes == nullptr) return nullptr;
    for (const xmlChar** pair = attributes; pair[0] != nullptr; pair += 2) {
      if (xmlStrEqual(pair[0], BAD_CAST name) != 0) return &pair[1];
    }
    return nullptr;
  }
  static const char* Text(const xmlChar* value) {
    return value != nullptr ? reinterpret_cast<const char*>(value) : "";
  }

  static thread_local EventReader* current_;  // The reader of this thread's parse.
  HtmlContent& content_;
  xmlParserCtxtPtr context_ = nullptr;
  std::exception_ptr failure_;
  std::vector<Open> open_;
  bool stopped_ = false;
  // The tree builder makes the first element the document's first child unless a doctype,
  // comment or processing instruction came first; an element started after that root closed is
  // then appended to the root (xmlSAX2StartElement), so the walk leaves the root last.
  bool document_has_child_ = false;
  bool root_adopts_ = true;
  std::optional<Open> closed_root_;
};

thread_local EventReader* EventReader::current_ = nullptr;

}  // namespace

void InitializeHtmlParser() {
  static std::once_flag once;
  std::call_once(once, [] { xmlInitParser(); });
}

HtmlContent VisibleText(std::string_view html, const HtmlLimits& limits) {
  HtmlContent content;
  EventReader(content).Parse(WithinBudget(html, limits, content.truncated));
  return content;
}

}  // namespace nbspamd::tokenizer
