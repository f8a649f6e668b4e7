#include "tokenizer/html_elements.h"

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <array>
#include <bitset>
#include <cstddef>
#include <cstring>

namespace nbspamd::tokenizer::html_elements {
namespace {

// In the order of the ids above, then the rest.
constexpr const char* kNames[] = {
    "html", "head", "body", "p", "script", "style", "meta", "link", "title", "base", "noframes",
    "frame", "frameset",
    // The rest of html40ElementTable.
    "a", "abbr", "acronym", "address", "applet", "area", "b", "basefont", "bdo", "big",
    "blockquote", "br", "button", "caption", "center", "cite", "code", "col", "colgroup", "dd",
    "del", "dfn", "dir", "div", "dl", "dt", "em", "embed", "fieldset", "font", "form", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "iframe", "img", "input", "ins", "isindex", "kbd", "label",
    "legend", "li", "map", "menu", "noscript", "object", "ol", "optgroup", "option", "param", "pre",
    "q", "s", "samp", "select", "small", "span", "strike", "strong", "sub", "sup", "table", "tbody",
    "td", "textarea", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var",
    // Named by htmlStartClose only.
    "listing", "xmp"};
constexpr std::size_t kCount = std::size(kNames);

// The start tags that end an open element of their own name (htmlStartClose's pairs of one name).
constexpr const char* kEndedBySameName[] = {"a", "col",   "colgroup", "form", "li", "option",
                                            "p", "tbody", "td",       "th",   "tr"};

// htmlEndPriority; every other element 100.
struct Priority {
  const char* name;
  int priority;
};
constexpr Priority kPriorities[] = {{"div", 150},   {"td", 160},    {"th", 160},    {"tr", 170},
                                    {"thead", 180}, {"tbody", 180}, {"tfoot", 180}, {"table", 190},
                                    {"head", 200},  {"body", 200},  {"html", 220}};
constexpr int kDefaultPriority = 100;

// Open addressing over a hash of the name; 256 slots for under a hundred names.
constexpr std::size_t kSlots = 256;

std::uint32_t Hash(std::string_view name) {
  std::uint32_t hash = 2166136261u;
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
  return hash;
}

struct Table {
  std::array<std::int16_t, kSlots> slots;
  std::array<bool, kCount> empty{};
  std::array<int, kCount> priority{};
  std::array<std::bitset<kCount>, kCount> start_ends;  // [new][old]

  Table() {
    slots.fill(-1);
    for (std::size_t id = 0; id < kCount; ++id) {
      std::size_t slot = Hash(kNames[id]) % kSlots;
      while (slots[slot] >= 0) slot = (slot + 1) % kSlots;
      slots[slot] = static_cast<std::int16_t>(id);
      const htmlElemDesc* description = htmlTagLookup(BAD_CAST kNames[id]);
      empty[id] = description != nullptr && description->empty != 0;
      priority[id] = kDefaultPriority;
      for (const Priority& p : kPriorities) {
        if (std::strcmp(p.name, kNames[id]) == 0) priority[id] = p.priority;
      }
    }
    // htmlAutoCloseTag(doc, old, element named new) is htmlCheckAutoClose(new, old) for a leaf
    // element of another name.
    for (std::size_t new_id = 0; new_id < kCount; ++new_id) {
      xmlNodePtr element = xmlNewNode(nullptr, BAD_CAST kNames[new_id]);
      if (element == nullptr) continue;
      for (std::size_t old_id = 0; old_id < kCount; ++old_id) {
        if (old_id == new_id) continue;
        start_ends[new_id][old_id] =
            htmlAutoCloseTag(nullptr, BAD_CAST kNames[old_id], element) != 0;
      }
      xmlFreeNode(element);
    }
    for (const char* name : kEndedBySameName) {
      const ElementId id = Lookup(name);
      if (id != kUnknown) start_ends[id][id] = true;
    }
  }

  ElementId Lookup(std::string_view name) const {
    for (std::size_t slot = Hash(name) % kSlots;; slot = (slot + 1) % kSlots) {
      const std::int16_t id = slots[slot];
      if (id < 0) return kUnknown;
      if (name == kNames[id]) return id;
    }
  }
};

const Table& TheTable() {
  static const Table table;
  return table;
}

}  // namespace

std::span<const char* const> AllNames() { return kNames; }
ElementId IdOf(std::string_view name) { return TheTable().Lookup(name); }
const char* NameOf(ElementId id) { return kNames[id]; }
bool IsEmpty(ElementId id) { return TheTable().empty[id]; }
bool StartEnds(ElementId new_id, ElementId old_id) { return TheTable().start_ends[new_id][old_id]; }
int EndPriority(ElementId id) {
  return id == kUnknown ? kDefaultPriority : TheTable().priority[id];
}

}  // namespace nbspamd::tokenizer::html_elements
