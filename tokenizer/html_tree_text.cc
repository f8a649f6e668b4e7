#include "tokenizer/html_tree_text.h"

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <string>
#include <vector>

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

// The tree libxml2 builds from `html`, already within budget; null for empty input.
htmlDocPtr ParseTree(std::string_view html) {
  if (html.empty()) return nullptr;
  SilenceErrors();
  return htmlReadMemory(html.data(), ClampedSize(html), nullptr, "UTF-8", kParseOptions);
}

}  // namespace

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
