#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/bag_builder.h"
#include "tokenizer/byte_ngrams.h"
#include "tokenizer/mail_reader.h"
#include "tokenizer/message_parts.h"
#include "tokenizer/url_hosts.h"
#include "tokenizer/word_scanner.h"

namespace nbspamd::tokenizer {
namespace {

// URLs turned into tokens from plain text.
constexpr std::size_t kMaxPlainTextUrls = 256;

// `message` without a leading mbox "From " separator line.
std::string_view SkipMboxLine(std::string_view message) {
  if (!message.starts_with("From ")) return message;
  const std::size_t end = message.find('\n');
  return end == std::string_view::npos ? std::string_view() : message.substr(end + 1);
}

// `message` (mail) with an empty line inserted where its header block ends without one, at the
// first line that is neither a header field nor a continuation (tokenizer/message_parts.h):
// GMime would skip that line and all after it as broken header fields, losing the body. Empty
// when the message needs no change.
std::string WithEndOfHeaders(std::string_view message, const MessageParts& parts) {
  if (parts.body.empty()) return {};
  const std::string_view head =
      message.substr(0, static_cast<std::size_t>(parts.body.data() - message.data()));
  if (head.ends_with("\n\n") || head.ends_with("\n\r\n")) return {};
  std::string fixed;
  fixed.reserve(message.size() + 2);
  fixed.append(head).append(head.ends_with("\r\n") ? "\r\n" : "\n").append(parts.body);
  return fixed;
}

}  // namespace

Tokenizer::Tokenizer(TokenizerOptions options) : options_(options) { InitializeMailReader(); }

TokenBag Tokenizer::Tokenize(std::string_view message, bool keep_text, MessageFacts* facts) const {
  message = message.substr(0, std::min(message.size(), options_.max_message_bytes));
  BagBuilder bag(options_.max_tokens, keep_text);
  if (message.empty() || bag.Full()) return std::move(bag).Finish(options_.boolean_counts);

  message = SkipMboxLine(message);
  // Outside max_tokens, so first: the raw head, before anything is decoded.
  AddByteNgrams(message.substr(0, std::min(message.size(), options_.byte_ngram_head)),
                ByteNgramSize(options_), bag);

  const MessageParts parts = SplitMessage(message, /*with_headers=*/false);
  const bool is_mail = parts.is_mail;
  MailContent content;
  if (is_mail) {
    const std::string fixed = WithEndOfHeaders(message, parts);
    content = ReadMail(fixed.empty() ? message : fixed,
                       {.header_tokens = options_.header_tokens,
                        .html_from_tree = options_.html_path == HtmlPath::kTree,
                        .gmime_decoding = options_.mime_path == MimePath::kGmime});
    if (facts != nullptr) *facts = std::move(content.facts);
  } else {
    std::vector<std::string> hosts;
    FindUrlHosts(message, hosts, kMaxPlainTextUrls);
    AddUrlTokens(hosts, content);
  }
  for (const MailContent::WholeToken& token : content.tokens) {
    if (!bag.Add(token.text, token.source)) break;
  }
  WordScanner scanner(options_);
  for (const MailContent::Text& text : content.texts) {
    scanner.Scan(text.utf8, text.prefix, text.source, bag);
  }
  if (!is_mail) scanner.Scan(message, "", TokenSource::kBody, bag);
  return std::move(bag).Finish(options_.boolean_counts);
}

}  // namespace nbspamd::tokenizer
