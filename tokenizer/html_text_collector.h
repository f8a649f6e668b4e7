// HtmlTextCollector: what a reader sees of an HTML part (HtmlContent), built from the events of
// libxml2's HTML parse as its tree builder would receive them (start and end of an element, text,
// comment, processing instruction, doctype), read as the walk of that tree reads it
// (VisibleTextFromTree). Both parsers that give these events use it: libxml2's own SAX events
// (html_text.cc) and the fast parser that re-does that parse (html_fast_parser.h), so the two can
// only differ in the events. Internal to the tokenizer; one per parse, not thread-safe; throws
// nothing but std::bad_alloc.
#ifndef NBSPAMD_TOKENIZER_HTML_TEXT_COLLECTOR_H_
#define NBSPAMD_TOKENIZER_HTML_TEXT_COLLECTOR_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/html_text.h"

namespace nbspamd::tokenizer {

class HtmlTextCollector {
 public:
  // The tree builder's node stack refuses a node deeper than this and stops the parser
  // (nodePush and xmlParserMaxDepth, without XML_PARSE_HUGE): the tree ends there.
  static constexpr std::size_t kMaxDepth = 256;

  explicit HtmlTextCollector(HtmlContent& content) : content_(content) {}

  // An element named `name` (as the parser gives it, NUL-terminated) starts; `attributes` holds
  // name/value pairs of NUL-terminated strings ending with a null name, as libxml2's SAX1
  // startElement gives them (null: none; a null value reads as ""). Returns false when the
  // element is beyond kMaxDepth: the parser must stop, and nothing after it counts.
  [[nodiscard]] bool StartElement(const char* name, const char* const* attributes) {
    return StartElement(name, attributes, FlagsOfName(name));
  }
  // The same, with the element's html_parse::ElementFlags known (FlagsOfName(name)).
  [[nodiscard]] bool StartElement(const char* name, const char* const* attributes, unsigned flags);
  // The html_parse::ElementFlags of an element the parser names `name`: those of the name the
  // tree builder gives it (what follows the first ':' of a qualified name).
  [[nodiscard]] static unsigned FlagsOfName(const char* name);
  // The innermost open element ends (nothing open: nothing happens).
  void EndElement();
  // Text, or a CDATA block (a script's or style's content), inside the innermost open element.
  void Characters(const char* text, std::size_t length);
  // A comment or processing instruction: a child of the innermost open element or the document.
  void CommentOrInstruction();
  // The doctype: the tree's DTD node, made the document's first child wherever it comes.
  void Doctype();
  // The end of the parse: whatever is still open is left as the walk leaves it.
  void Finish();

  // For tests: also writes each event to `trace` ("<name href=.. src=.. alt=..>", "</>",
  // "{text}" with adjacent texts joined, "!" for a comment or instruction, "#" for the doctype).
  void TraceInto(std::string* trace) { trace_ = trace; }

 private:
  // An open element, as libxml2's tree builder holds it on its node stack.
  struct Open {
    unsigned flags = 0;
    bool unseen = false;        // It or an ancestor is skipped: the walk never enters it.
    bool has_children = false;  // The walk adds a block's closing space only after children.
    bool is_root = false;       // The document's first child.
  };

  void Close(const Open& element);
  void Trace(std::string_view record);

  std::string* trace_ = nullptr;
  bool trace_in_text_ = false;  // The last record traced is text.

  HtmlContent& content_;
  std::vector<Open> open_;
  // The tree builder makes the first element the document's first child unless a doctype,
  // comment or processing instruction came first; an element started after that root closed is
  // then appended to the root (xmlSAX2StartElement), so the walk leaves the root last.
  bool document_has_child_ = false;
  bool root_adopts_ = true;
  std::optional<Open> closed_root_;
};

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_HTML_TEXT_COLLECTOR_H_
