#include "tokenizer/html_text_collector.h"

#include <cstring>
#include <string>

#include "tokenizer/html_parse.h"

namespace nbspamd::tokenizer {
namespace {

using html_parse::FlagsOf;
using html_parse::kAltText;
using html_parse::kBlock;
using html_parse::kHrefLink;
using html_parse::kImage;
using html_parse::kSkipped;

// The name the tree builder gives an element (xmlSAX2StartElement splits it as a qualified
// name, xmlSplitQName): what follows the first ':' ("x:style" is a style element), unless the
// name starts or ends with it.
const char* TreeNameOf(const char* name) {
  if (name == nullptr || name[0] == ':') return name;
  const char* colon = std::strchr(name, ':');
  return colon == nullptr || colon[1] == '\0' ? name : colon + 1;
}

// The value slot of attribute `name` in a name/value list, or null.
const char* const* Find(const char* const* attributes, const char* name) {
  if (attributes == nullptr) return nullptr;
  for (const char* const* pair = attributes; pair[0] != nullptr; pair += 2) {
    if (std::strcmp(pair[0], name) == 0) return &pair[1];
  }
  return nullptr;
}

const char* Text(const char* value) { return value != nullptr ? value : ""; }

}  // namespace

void HtmlTextCollector::Trace(std::string_view record) {
  trace_in_text_ = false;
  *trace_ += record;
}

unsigned HtmlTextCollector::FlagsOfName(const char* name) {
  return FlagsOf(reinterpret_cast<const xmlChar*>(TreeNameOf(name)));
}

bool HtmlTextCollector::StartElement(const char* name, const char* const* attributes,
                                     unsigned flags) {
  if (open_.size() > kMaxDepth) return false;
  if (trace_ != nullptr) {
    std::string record = std::string("<") + name;
    for (const char* kept : {"href", "src", "alt"}) {
      if (const char* const* value = Find(attributes, kept)) {
        record += std::string(" ") + kept + "=" + Text(*value);
      }
    }
    Trace(record + ">");
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
  const bool unseen = parent_unseen || (flags & kSkipped) != 0;
  open_.push_back({flags, unseen, false, is_root});
  if (unseen) return true;
  if ((flags & kHrefLink) != 0) {
    if (const char* const* href = Find(attributes, "href"))
      content_.links.emplace_back(Text(*href));
  }
  if ((flags & kImage) != 0) {
    ++content_.images;
    if (const char* const* src = Find(attributes, "src")) content_.links.emplace_back(Text(*src));
  }
  if ((flags & kAltText) != 0) {
    if (const char* const* alt = Find(attributes, "alt")) {
      content_.text += ' ';
      content_.text += Text(*alt);
      content_.text += ' ';
    }
  }
  if ((flags & kBlock) != 0) content_.text += ' ';
  return true;
}

void HtmlTextCollector::EndElement() {
  if (trace_ != nullptr) Trace("</>");
  if (open_.empty()) return;
  const Open closed = open_.back();
  open_.pop_back();
  if (closed.is_root) {
    closed_root_ = closed;  // Closed in the tree only after what it may still adopt.
  } else {
    Close(closed);
  }
}

void HtmlTextCollector::Close(const Open& element) {
  // A block's closing space, where the walk adds it on leaving the element.
  if (!element.unseen && element.has_children && (element.flags & kBlock) != 0) {
    content_.text += ' ';
  }
}

void HtmlTextCollector::Finish() {
  // The walk leaves whatever the parse left open (it stopped early), then the root element.
  while (!open_.empty()) {
    const Open element = open_.back();
    open_.pop_back();
    if (element.is_root) {
      closed_root_ = element;
    } else {
      Close(element);
    }
  }
  if (closed_root_.has_value()) Close(*closed_root_);
}

void HtmlTextCollector::Characters(const char* text, std::size_t length) {
  if (trace_ != nullptr) {
    if (trace_in_text_) trace_->pop_back();  // Joined to the text before: "{ab}", not "{a}{b}".
    if (!trace_in_text_) *trace_ += '{';
    trace_->append(text, length);
    *trace_ += '}';
    trace_in_text_ = true;
  }
  // Text with no open element makes no node (xmlSAX2Characters).
  if (open_.empty()) return;
  Open& parent = open_.back();
  parent.has_children = true;
  if (!parent.unseen && length > 0) content_.text.append(text, length);
}

void HtmlTextCollector::CommentOrInstruction() {
  if (trace_ != nullptr) Trace("!");
  if (open_.empty()) {
    document_has_child_ = true;
  } else {
    open_.back().has_children = true;
  }
}

void HtmlTextCollector::Doctype() {
  if (trace_ != nullptr) Trace("#");
  // Elements started with nothing open are from then on appended to the document, not the root.
  document_has_child_ = true;
  root_adopts_ = false;
}

}  // namespace nbspamd::tokenizer
