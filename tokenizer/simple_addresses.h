// ParseSimpleAddressList: a From, Reply-To, To or Cc value of the simple form most mail uses,
// read without GMime's address parser (internet_address_list_parse), giving the names and
// addresses it gives for it. GMime builds a GObject for the list and for each address, and the
// reader only needs a few strings of them (docs/PERFORMANCE.md, "Eleventh round").
//
// Simple means, on the raw value (folds and the final line break included):
//   - printable 7-bit bytes, spaces, tabs and line breaks only, and none of ()[]\:; nor "=?"
//     (no comments, groups, domain literals, quoting or encoded words);
//   - one or more addresses separated by commas (none empty, no comma last), each either
//     `local@domain` alone, or `<local@domain>` after a display name: nothing, a quoted string,
//     or words of atext and dots separated by blanks (each word starting with atext, the last
//     not ending with a dot);
//   - local a dot-atom (atext runs joined by single dots); domain labels of letters, digits and
//     hyphens (not first or last) joined by single dots, none starting with "xn--" (GMime
//     decodes IDNA there).
// Anything else is std::nullopt and GMime reads it. SimpleAddressesTest checks the two agree on
// random values. A plain function; thread-safe.
#ifndef NBSPAMD_TOKENIZER_SIMPLE_ADDRESSES_H_
#define NBSPAMD_TOKENIZER_SIMPLE_ADDRESSES_H_

#include <optional>
#include <string_view>
#include <vector>

namespace nbspamd::tokenizer {

// Views into the value given to the parser, which must outlive them.
struct SimpleAddress {
  // As internet_address_get_name gives it: "" when there is none; a quoted string without its
  // quotes; words as written from the first to the last, the blanks and folds between them
  // included.
  std::string_view name;
  std::string_view addr;  // local@domain as written (internet_address_mailbox_get_addr).
};

[[nodiscard]] std::optional<std::vector<SimpleAddress>> ParseSimpleAddressList(
    std::string_view value);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_SIMPLE_ADDRESSES_H_
