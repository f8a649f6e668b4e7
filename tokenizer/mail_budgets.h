// The plain-text pass over a message before GMime parses it (mail_reader.cc): the header and
// boundary-line budgets of MailReaderOptions, the cut that bounds multipart nesting, and the
// repair of address comments left open. Line by line on the raw bytes, with no MIME parser, so
// that it can be tested and fuzzed on its own. Plain functions; thread-safe.
#ifndef NBSPAMD_TOKENIZER_MAIL_BUDGETS_H_
#define NBSPAMD_TOKENIZER_MAIL_BUDGETS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "tokenizer/mail_reader.h"

namespace nbspamd::tokenizer {

// The offset at which the (limit + 1)-th "multipart/" starts its line, or npos. Parsing stops
// there: GMime's parser recurses once per nesting level, so this bounds its depth and work.
[[nodiscard]] std::size_t MultipartCut(std::string_view message, std::size_t limit);

// The message GMime is given: `message` within the header and boundary-line budgets of
// MailReaderOptions (mail_reader.h says what they are), with the comments left open in
// address fields, and in any line that reads as one, closed at the field's end. GMime 3.2.13
// leaks two strings for each address whose domain literal is followed by an unterminated
// comment (`From: a@[x](`); a closed comment reads the same.
struct Budgeted {
  std::string_view text;     // Into `message` or into `storage`.
  bool headers_cut = false;  // Header lines were dropped.
  bool parts_cut = false;    // The message was cut at a boundary line.
};

// `storage` holds the text when it had to be copied (a line dropped or repaired); `text` points
// into `message` otherwise. Either must outlive the use of `text`.
[[nodiscard]] Budgeted ApplyBudgets(std::string_view message, const MailReaderOptions& options,
                                    std::string& storage);

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_MAIL_BUDGETS_H_
