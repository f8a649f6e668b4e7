// ReadMail: a mail message as the tokenizer needs it, parsed by GMime (or, for a message whose
// header blocks have nothing to decode and whose parts are leaves and multiparts, split as
// GMime would: plain_message.h): decoded header values, the visible text of every text part
// (transfer encodings undone, charsets converted to UTF-8, HTML reduced to what a reader sees),
// URL hosts, and a few facts about its structure.
//
// The token vocabulary it produces (the prefix says where a token came from):
//   subject:<word>  from-name:<word>  mailer:<word>      words of those headers
//   from:<address>  from-domain:<domain>  reply-to-domain:<domain>  message-id-domain:<domain>
//   received:<registrable domain>  received-ip:<a.b.c>    hosts of the Received chain
//   hname:<field name>                                    every header field present
//   rcvd:<word>  to:<word>  head:<word>                   words (tokenizer/header_words.h) of
//                   Received, of To and Cc, and of every other field not read above
//   (mailing-list fields, other filters' X-Spam-* and X-Virus-* and nbspamd's own X-Nbspamd*
//   give none of these)
//   content-type:<type/subtype>                           of the top-level entity
//   url:<host>  url-domain:<registrable domain>           links in text and HTML
//   attachment:<type/subtype>  attachment-ext:<ext>       non-text parts, never their bytes
//   meta:<fact>  e.g. meta:html-only, meta:charset:<name>, meta:charset-unknown,
//                meta:recipients:<bucket>, meta:mime-too-deep, meta:images:<bucket>,
//                meta:mime-truncated, meta:headers-truncated, meta:html-truncated (budgets below)
#ifndef NBSPAMD_TOKENIZER_MAIL_READER_H_
#define NBSPAMD_TOKENIZER_MAIL_READER_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/token_bag.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/whole_tokens.h"

namespace nbspamd::tokenizer {

struct MailReaderOptions {
  // Tokens from header fields: the prefixed ones above and meta:recipients, meta:no-message-id,
  // meta:reply-to-differs. At most 200 fields are read. Body words, URLs and the body's meta tokens
  // come either way.
  bool header_tokens = true;
  // Read HTML parts from libxml2's tree (VisibleTextFromTree, the reference) rather than from its
  // SAX events: the same tokens, slower; for the differential checks.
  bool html_from_tree = false;
  // Parse every message with GMime's parser, decode every header value with GMime
  // (g_mime_header_get_value) and every part's content through GMime's data wrapper
  // (g_mime_data_wrapper_write_to_stream), rather than the reader's shortcuts (a value of plain
  // 7-bit text taken as it is once unfolded; a part's content decoded in place in the parser's
  // buffer; a message of one text part with a plain header block split without the parser,
  // plain_message.h): the same tokens and facts, slower; for the differential checks.
  bool gmime_decoding = false;
  std::size_t max_text_parts = 1000;  // Leaf parts read; the rest give meta:mime-too-many-parts.
  std::size_t max_mime_parts = 100;   // multipart/ declarations parsed; the rest is cut.
  std::size_t max_mime_depth = 32;    // Nesting of multiparts and attached messages.
  std::size_t max_urls = 256;         // URLs turned into tokens.
  // Budgets that bound what GMime and libxml2 build (their objects cost tens to hundreds of bytes
  // for each byte of hostile input: a field, a part, an element), so that one message of
  // max_message_bytes cannot take more than a few times its size in memory
  // (docs/PERFORMANCE.md, "Memory of one hostile request"). Before parsing, a scan of the lines
  // finds the header blocks (the message's own, that of each part after a boundary line, and that
  // of an attached message or of a digest's part) and:
  //   - keeps the first max_header_fields fields of all header blocks together and drops the
  //     rest, and likewise stops at max_header_bytes bytes of header lines (the line that
  //     crosses it is cut there): meta:headers-truncated;
  //   - cuts the message before the (max_boundary_lines + 1)-th line starting with "--" after a
  //     multipart/ declaration (each may open a part): meta:mime-truncated;
  //   - closes the comments left open at the end of From, Sender, Reply-To, To, Cc and Bcc
  //     fields, and of lines anywhere that read as such fields (GMime 3.2.13 leaks memory on
  //     some); they read as if closed.
  // Each HTML part is read within max_html_tags '<', max_html_attributes attributes and
  // max_html_tag_attributes attributes in one tag (HtmlLimits in html_text.h):
  // meta:html-truncated.
  std::size_t max_header_fields = 5000;
  std::size_t max_header_bytes = 256 << 10;
  std::size_t max_boundary_lines = 2000;
  std::size_t max_html_tags = 50000;
  std::size_t max_html_attributes = 50000;
  std::size_t max_html_tag_attributes = 1000;
};

// What one message gives the tokenizer.
struct MailContent {
  // Text to split into words; each word becomes prefix + word.
  struct Text {
    std::string prefix;  // "" for body text, else e.g. "subject:".
    TokenSource source = TokenSource::kBody;
    std::string utf8;
  };
  // A token taken whole (already normalised: lower-case).
  using WholeToken = WholeTokens::Token;
  std::vector<Text> texts;
  WholeTokens tokens;
  MessageFacts facts;  // Read whatever the options.
  // GMime's parser read the message: it is not a plain message of text parts that the reader
  // splits itself (plain_message.h), or MailReaderOptions::gmime_decoding asked for it. For
  // tests and benchmarks; the tokens are the same either way.
  bool parsed_by_gmime = false;
};

// Reads `message` (an RFC 5322 message, possibly MIME). Never fails: what cannot be parsed
// gives fewer tokens and a meta token saying so.
[[nodiscard]] MailContent ReadMail(std::string_view message, const MailReaderOptions& options);

// Adds url: and url-domain: tokens for `hosts`.
void AddUrlTokens(const std::vector<std::string>& hosts, MailContent& content);

// Prepares GMime and libxml2; called once before the first ReadMail (the Tokenizer does).
void InitializeMailReader();

}  // namespace nbspamd::tokenizer

#endif  // NBSPAMD_TOKENIZER_MAIL_READER_H_
