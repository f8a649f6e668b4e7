#include "tokenizer/html_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

// libxml2 reports through a global handler; the parse options already silence it, this makes
// sure nothing reaches standard error.
void IgnoreError(void*, const char*, ...) {}

// What the walk does with an element, by its name (ASCII case ignored).
enum ElementFlags : unsigned {
  kSkipped = 1,   // script, style, noscript: nothing inside is seen.
  kBlock = 2,     // A reader sees a break before and after it, so words stay apart.
  kHrefLink = 4,  // a, area, link: the href is a link.
  kImage = 8,     // img: counted, its src is a link.
  kAltText = 16,  // img, area: the alt text is seen.
};

unsigned FlagsOf(const xmlChar* raw_name) {
  static constexpr std::string_view kBlocks[] = {
      "p",      "div",   "br",         "td",   "th",      "tr",      "li",     "ul",
      "ol",     "table", "h1",         "h2",   "h3",      "h4",      "h5",     "h6",
      "pre",    "title", "blockquote", "hr",   "dd",      "dt",      "center", "form",
      "option", "body",  "head",       "html", "section", "article", "header", "footer"};
  constexpr std::size_t kLongest = 10;  // "blockquote"; longer names have no flags.
  if (raw_name == nullptr) return 0;
  const auto* raw = reinterpret_cast<const char*>(raw_name);
  char lower[kLongest];
  std::size_t length = 0;
  for (; raw[length] != '\0'; ++length) {
    if (length == kLongest) return 0;
    lower[length] = AsciiLower(raw[length]);
  }
  const std::string_view name(lower, length);
  if (name == "script" || name == "style" || name == "noscript") return kSkipped;
  if (name == "a" || name == "link") return kHrefLink;
  if (name == "area") return kHrefLink | kAltText;
  if (name == "img") return kImage | kAltText;
  for (std::string_view block : kBlocks) {
    if (block == name) return kBlock;
  }
  return 0;
}

void AddAttribute(const xmlNode* node, const char* name, std::vector<std::string>& links) {
  xmlChar* value = xmlGetProp(node, BAD_CAST name);
  if (value == nullptr) return;
  links.emplace_back(reinterpret_cast<const char*>(value));
  xmlFree(value);
}

// Walks the tree without recursion (markup can nest very deep).
void Walk(xmlNode* root, HtmlContent& content) {
  xmlNode* node = root;
  while (node != nullptr) {
    bool descend = true;
    if (node->type == XML_TEXT_NODE || node->type == XML_CDATA_SECTION_NODE) {
      if (node->content != nullptr) content.text += reinterpret_cast<const char*>(node->content);
    } else if (node->type == XML_ELEMENT_NODE) {
      const unsigned flags = FlagsOf(node->name);
      if ((flags & kSkipped) != 0) {
        descend = false;
      } else {
        if ((flags & kHrefLink) != 0) AddAttribute(node, "href", content.links);
        if ((flags & kImage) != 0) {
          ++content.images;
          AddAttribute(node, "src", content.links);
        }
        if ((flags & kAltText) != 0) {
          xmlChar* alt = xmlGetProp(node, BAD_CAST "alt");
          if (alt != nullptr) {
            content.text += ' ';
            content.text += reinterpret_cast<const char*>(alt);
            content.text += ' ';
            xmlFree(alt);
          }
        }
        if ((flags & kBlock) != 0) content.text += ' ';
      }
    }
    // Next node in document order: first child, else next sibling, else an ancestor's sibling.
    if (descend && node->type == XML_ELEMENT_NODE && node->children != nullptr) {
      node = node->children;
      continue;
    }
    while (node != nullptr && node != root && node->next == nullptr) {
      node = node->parent;
      if (node != nullptr && node->type == XML_ELEMENT_NODE &&
          (FlagsOf(node->name) & kBlock) != 0) {
        content.text += ' ';
      }
    }
    if (node == nullptr || node == root) break;
    node = node->next;
  }
}

// The blanks of libxml2 (IS_BLANK_CH).
bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// What starts and continues a tag or attribute name: libxml2's htmlParseHTMLName reads
// [A-Za-z_:.][A-Za-z0-9_:.-]*. Exactly these: a character read as bogus here but as a name there
// (or the reverse) would change where a quoted value starts, and what is counted after it.
bool IsNameStart(char c) { return IsAsciiLetter(c) || c == '_' || c == ':' || c == '.'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-'; }

// libxml2 cuts names at 100 bytes and reads the rest as another attribute; 64 counts more.
constexpr std::size_t kNameChunk = 64;

// The attributes libxml2 gives the start tag at `html[start]` ('<' then a name start),
// counted as libxml2 reads them (htmlParseStartTag), at least as many; stops counting beyond
// `stop_after`. `scanned` grows by the bytes read.
std::size_t CountTagAttributes(std::string_view html, std::size_t start, std::size_t stop_after,
                               std::size_t& scanned) {
  std::size_t i = start + 1;
  const std::size_t end = html.size();
  std::size_t count = 0;
  const std::size_t name_start = i;
  while (i < end && IsNameChar(html[i])) ++i;
  count += (i - name_start) / kNameChunk;  // A tag name libxml2 cuts: the rest is an attribute.
  while (count <= stop_after) {
    while (i < end && IsBlank(html[i])) ++i;
    if (i >= end || html[i] == '>' || (html[i] == '/' && i + 1 < end && html[i + 1] == '>')) {
      break;
    }
    ++count;  // Whether or not libxml2 takes it as an attribute.
    if (!IsNameStart(html[i])) {
      // libxml2 drops a bogus attribute up to the next blank or the end of the tag.
      while (i < end && !IsBlank(html[i]) && html[i] != '>' &&
             !(html[i] == '/' && i + 1 < end && html[i + 1] == '>')) {
        ++i;
      }
      continue;
    }
    const std::size_t name = i;
    while (i < end && IsNameChar(html[i])) ++i;
    count += (i - name - 1) / kNameChunk;
    std::size_t j = i;
    while (j < end && IsBlank(html[j])) ++j;
    if (j >= end || html[j] != '=') continue;  // No value; what follows is read afresh.
    i = j + 1;
    while (i < end && IsBlank(html[i])) ++i;
    if (i < end && (html[i] == '"' || html[i] == '\'')) {
      const std::size_t close = html.find(html[i], i + 1);
      i = close == std::string_view::npos ? end : close + 1;
    } else {
      while (i < end && !IsBlank(html[i]) && html[i] != '>') ++i;
    }
  }
  scanned += i - start;
  return count;
}

// Where `html` is cut to stay within `limits` (npos: not cut).
std::size_t BudgetCut(std::string_view html, const HtmlLimits& limits) {
  const std::size_t max_scanned = limits.max_scan_factor * html.size();
  std::size_t tags = 0;
  std::size_t attributes = 0;
  std::size_t scanned = 0;
  for (std::size_t i = html.find('<'); i != std::string_view::npos; i = html.find('<', i + 1)) {
    if (++tags > limits.max_tags) return i;
    if (i + 1 >= html.size() || !IsNameStart(html[i + 1])) continue;
    // Each '<' gets its own scan, also one inside a quoted value of an earlier tag: what libxml2
    // takes for markup or text there cannot hide a start tag from the count.
    const std::size_t n = CountTagAttributes(html, i, limits.max_tag_attributes, scanned);
    attributes += n;
    if (n > limits.max_tag_attributes || attributes > limits.max_attributes ||
        scanned > max_scanned) {
      return i;
    }
  }
  return std::string_view::npos;
}

// `html` cut to stay within `limits`; sets `truncated` when it was cut.
std::string_view WithinBudget(std::string_view html, const HtmlLimits& limits, bool& truncated) {
  if (const std::size_t cut = BudgetCut(html, limits); cut != std::string_view::npos) {
    html = html.substr(0, cut);
    truncated = true;
  }
  return html;
}

void SilenceErrors() {
  thread_local const bool silenced = [] {  // libxml2's error handler is per thread.
    xmlSetGenericErrorFunc(nullptr, IgnoreError);
    return true;
  }();
  (void)silenced;
}

// Not HTML_PARSE_NOIMPLIED: without the implied <html><body>, libxml2 drops whitespace-only text
// outside any element, gluing the words of "<a>BUY</a> <a>NOW</a>" into "BUYNOW".
constexpr int kParseOptions = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                              HTML_PARSE_NONET | HTML_PARSE_COMPACT;

int ClampedSize(std::string_view html) {
  return static_cast<int>(std::min<std::size_t>(html.size(), INT_MAX));
}

// The tree libxml2 builds from `html`, already within budget; null for empty input.
htmlDocPtr ParseTree(std::string_view html) {
  if (html.empty()) return nullptr;
  SilenceErrors();
  return htmlReadMemory(html.data(), ClampedSize(html), nullptr, "UTF-8", kParseOptions);
}

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

HtmlContent VisibleTextFromTree(std::string_view html, const HtmlLimits& limits) {
  HtmlContent content;
  htmlDocPtr document = ParseTree(WithinBudget(html, limits, content.truncated));
  if (document == nullptr) return content;
  for (xmlNode* node = document->children; node != nullptr; node = node->next) {
    Walk(node, content);
  }
  xmlFreeDoc(document);
  return content;
}

std::size_t CountParsedAttributes(std::string_view html, const HtmlLimits& limits) {
  bool truncated = false;
  htmlDocPtr document = ParseTree(WithinBudget(html, limits, truncated));
  if (document == nullptr) return 0;
  std::size_t count = 0;
  // Every node, without recursion: children first, then siblings, then an ancestor's sibling.
  xmlNode* node = document->children;
  while (node != nullptr) {
    if (node->type == XML_ELEMENT_NODE) {
      for (const xmlAttr* attribute = node->properties; attribute != nullptr;
           attribute = attribute->next) {
        ++count;
      }
    }
    if (node->children != nullptr && node->type == XML_ELEMENT_NODE) {
      node = node->children;
      continue;
    }
    while (node != nullptr && node->next == nullptr) {
      node = node->parent;
      if (node != nullptr && reinterpret_cast<xmlNode*>(document) == node) node = nullptr;
    }
    if (node != nullptr) node = node->next;
  }
  xmlFreeDoc(document);
  return count;
}

}  // namespace nbspamd::tokenizer
