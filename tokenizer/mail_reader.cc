#include "tokenizer/mail_reader.h"

#include <gmime/gmime.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "common/utf8.h"
#include "tokenizer/ascii.h"
#include "tokenizer/charset.h"
#include "tokenizer/header_words.h"
#include "tokenizer/html_text.h"
#include "tokenizer/url_hosts.h"

namespace nbspamd::tokenizer {
namespace {

// Owns a GObject reference.
struct Unref {
  void operator()(void* object) const {
    if (object != nullptr) g_object_unref(object);
  }
};
template <typename T>
using GObjectPtr = std::unique_ptr<T, Unref>;

std::string Lower(std::string_view text) { return AsciiLowered(text); }

// "1", "2", "3-5", "6-10", "11+": counts where the exact number matters little.
std::string Bucket(std::size_t n) {
  if (n <= 2) return std::to_string(n);
  if (n <= 5) return "3-5";
  if (n <= 10) return "6-10";
  return "11+";
}

// The offset at which the (limit + 1)-th "multipart/" starts its line, or npos. Parsing stops
// there: GMime's parser recurses once per nesting level, so this bounds its depth and work.
std::size_t MultipartCut(std::string_view message, std::size_t limit) {
  constexpr std::string_view kNeedle = "multipart/";
  std::size_t seen = 0;
  for (std::size_t i = 0; i + kNeedle.size() <= message.size(); ++i) {
    if ((message[i] | 0x20) != 'm') continue;
    bool match = true;
    for (std::size_t j = 1; j < kNeedle.size() && match; ++j) {
      match = AsciiLower(message[i + j]) == kNeedle[j];
    }
    if (match && ++seen > limit) {
      const std::size_t line = message.rfind('\n', i);
      return line == std::string_view::npos ? 0 : line + 1;
    }
  }
  return std::string_view::npos;
}

// Whether `line` (without its line break) starts a header field: `Name:` with a printable name.
bool IsFieldLine(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == 0 || colon == std::string_view::npos) return false;
  return std::all_of(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(colon),
                     [](char c) { return c > 32 && c < 127; });
}

// Whether `text` contains `lower` (lower-case) ignoring ASCII case.
bool ContainsNoCase(std::string_view text, std::string_view lower) {
  return std::search(text.begin(), text.end(), lower.begin(), lower.end(),
                     [](char a, char b) { return AsciiLower(a) == b; }) != text.end();
}

// Whether the field `line` starts is Content-Type.
bool IsContentType(std::string_view line) {
  constexpr std::string_view kName = "content-type";
  const std::string_view name = line.substr(0, line.find(':'));
  return name.size() >= kName.size() && ContainsNoCase(name.substr(0, kName.size()), kName) &&
         name.find_first_not_of(" \t", kName.size()) == std::string_view::npos;
}

// Whether the field `line` starts is one GMime parses as addresses when it builds a message:
// From, Sender, Reply-To, To, Cc, Bcc.
bool IsAddressField(std::string_view line) {
  const std::string_view name = line.substr(0, line.find_first_of(": \t"));
  for (std::string_view field : {"from", "sender", "reply-to", "to", "cc", "bcc"}) {
    if (name.size() == field.size() && ContainsNoCase(name, field)) return true;
  }
  return false;
}

// At least as many comments (RFC 5322 3.2.2) as GMime leaves open at the end of an address
// field, read line by line, however it reads the quoted strings and domain literals around them:
// every '(' may open one, and only a ')' that no backslash quotes may close one.
class OpenComments {
 public:
  void Read(std::string_view text) {
    ends_in_backslash_ = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c == '\\') {
        if (++i == text.size()) {
          ends_in_backslash_ = true;
        } else if (text[i] == '(') {
          ++depth_;  // Quoted in a comment or a string, but not in a domain literal.
        }
      } else if (c == '(') {
        ++depth_;
      } else if (c == ')' && depth_ > 0) {
        --depth_;
      }
    }
  }
  // What closes them: a ')' for each, after a space if a backslash would quote the first.
  std::string Closing() const {
    if (depth_ == 0) return {};
    std::string closing(ends_in_backslash_ ? 1 : 0, ' ');
    closing.append(depth_, ')');
    return closing;
  }
  void Reset() { *this = OpenComments(); }

 private:
  std::size_t depth_ = 0;
  bool ends_in_backslash_ = false;
};

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

Budgeted ApplyBudgets(std::string_view message, const MailReaderOptions& options,
                      std::string& storage) {
  // kBlockStart: the line after a boundary line or after the header block of an attached
  // message (or of a digest's part: its parts are messages unless they say otherwise); it
  // starts a header block if it is a field.
  enum class State { kHeader, kBlockStart, kBody };
  State state = State::kHeader;
  Budgeted result;
  bool copying = false;            // Once a line is dropped, kept lines go to `storage`.
  bool dropping = false;           // The rest of the current header block is dropped.
  bool in_content_type = false;    // The current header field is Content-Type.
  bool block_has_message = false;  // The current header block declares a message/ type.
  bool multipart_seen = false;     // A header block declared a multipart/ type.
  bool digest_seen = false;        // A header block declared multipart/digest.
  bool part_block = false;         // The current header block follows a boundary line.
  bool block_has_type = false;     // The current header block has a Content-Type field.
  std::size_t fields = 0;
  std::size_t header_bytes = 0;
  std::size_t boundaries = 0;
  std::size_t pos = 0;
  bool in_address = false;     // The current field (or body line) reads as an address field.
  OpenComments open_comments;  // Of the current address field.
  // Ends the current field: closes its open comments before the last line break kept.
  auto end_field = [&] {
    if (const std::string closing = open_comments.Closing(); !closing.empty()) {
      if (!copying) storage.assign(message.substr(0, pos));
      copying = true;
      std::size_t end = storage.size();
      while (end > 0 && (storage[end - 1] == '\n' || storage[end - 1] == '\r')) --end;
      storage.insert(end, closing);
    }
    open_comments.Reset();
    in_address = false;
  };
  while (pos < message.size()) {
    const std::size_t newline = message.find('\n', pos);
    const std::size_t next = newline == std::string_view::npos ? message.size() : newline + 1;
    const std::string_view line = message.substr(pos, next - pos);
    std::string_view content = line;
    while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) {
      content.remove_suffix(1);
    }
    if (state == State::kBlockStart) {
      if (IsFieldLine(content)) {
        state = State::kHeader;
      } else if (content.empty() && part_block && digest_seen) {
        part_block = false;  // A digest's part without fields: its message follows.
      } else {
        state = State::kBody;
      }
    }
    bool keep = true;
    std::string_view head;  // When !keep, the start of the line kept (then a line break).
    if (state == State::kHeader) {
      if (content.empty()) {
        const bool digest_message = part_block && digest_seen && !block_has_type;
        state = block_has_message || digest_message ? State::kBlockStart : State::kBody;
        block_has_message = false;
        block_has_type = false;
        part_block = false;
        dropping = false;
      } else {
        const bool new_field = content.front() != ' ' && content.front() != '\t';
        const bool too_many = new_field && fields >= options.max_header_fields;
        if (dropping || too_many || header_bytes + line.size() > options.max_header_bytes) {
          if (!dropping && !too_many) {
            // The line that crosses the byte budget: its start, up to the budget.
            head = content.substr(0, options.max_header_bytes - header_bytes);
            header_bytes = options.max_header_bytes;
            fields += new_field ? 1 : 0;
          }
          dropping = true;
          keep = false;
        } else {
          fields += new_field ? 1 : 0;
          header_bytes += line.size();
          if (new_field) in_content_type = IsContentType(content);
          // Loosely: GMime also reads "multipart (comment) / mixed" and folded types.
          if (in_content_type && ContainsNoCase(content, "multipart")) multipart_seen = true;
          if (in_content_type && ContainsNoCase(content, "digest")) digest_seen = true;
          if (in_content_type) block_has_type = true;
          if (in_content_type && ContainsNoCase(content, "message")) block_has_message = true;
        }
      }
    } else if (multipart_seen && content.starts_with("--")) {
      if (++boundaries > options.max_boundary_lines) {
        result.parts_cut = true;
        break;
      }
      state = State::kBlockStart;
      part_block = true;
    }
    // Address fields wherever GMime may find one: the scan's idea of where a header block ends
    // is looser than GMime's, and a line that reads as an address field in a body changes no
    // word. GMime reads a field as a C string: a NUL would hide the rest of it and the comments
    // closed there, so NULs in address fields become spaces.
    const std::string_view kept = keep ? content : head;
    if (keep || !head.empty()) {
      const bool continuation = !kept.empty() && (kept.front() == ' ' || kept.front() == '\t');
      if (!continuation) {
        end_field();
        in_address = IsFieldLine(kept) && IsAddressField(kept);
      }
      if (in_address) open_comments.Read(kept.substr(continuation ? 0 : kept.find(':') + 1));
    }
    const bool nul_in_address = in_address && kept.find('\0') != std::string_view::npos;
    if (!keep || nul_in_address) {
      if (!copying) storage.assign(message.substr(0, pos));
      copying = true;
      if (!keep) result.headers_cut = true;
    }
    const std::size_t appended = storage.size();
    if (keep && copying) storage.append(line);
    if (!head.empty()) storage.append(head).append("\n");
    if (nul_in_address) {
      std::replace(storage.begin() + static_cast<std::ptrdiff_t>(appended), storage.end(), '\0',
                   ' ');
    }
    pos = next;
  }
  end_field();
  result.text = copying ? std::string_view(storage) : message.substr(0, pos);
  return result;
}

// Header fields read: the first kMaxHeaderFields; the received: and received-ip: tokens come
// from the first kMaxReceived Received fields.
constexpr int kMaxHeaderFields = 200;
constexpr int kMaxReceived = 8;
// Header words stop once this many whole tokens are collected (a bound on memory for hostile
// headers; the tokenizer keeps at most max_tokens of them anyway).
constexpr std::size_t kMaxWholeTokens = 20000;

// Fields that give no token at all, not even hname:. Mailing-list fields: a list mail carries
// ten of them, and naive Bayes would count the list's name ten times over as independent
// evidence, so spam sent through a list ranks as ham (docs/ACCURACY.md). Other filters'
// verdicts (X-Spam-*, X-Virus-*): a message is often learned after such a filter has marked it
// but classified before, so the marks would be evidence at training time only.
bool IsIgnoredHeader(std::string_view name) {
  static constexpr std::string_view kIgnored[] = {
      "list-id",     "list-unsubscribe", "list-subscribe", "list-help",
      "list-post",   "list-archive",     "list-owner",     "x-mailman-version",
      "x-beenthere", "precedence",       "errors-to",      "x-loop",
      "sender",      "x-list",           "mailing-list",   "x-mailing-list"};
  for (std::string_view ignored : kIgnored) {
    if (name == ignored) return true;
  }
  return name.starts_with("x-spam-") || name.starts_with("x-virus-");
}

enum class HeaderFamily {
  kReadElsewhere,  // Read by ReadHeaders or ReadEntity into their own tokens.
  kReceived,       // received: and received-ip: tokens, and rcvd:<word>.
  kRecipients,     // To and Cc: to:<word>.
  kOther,          // Every other field: head:<word>.
};

HeaderFamily FamilyOf(std::string_view name) {
  static constexpr std::string_view kReadElsewhere[] = {"subject",      "from",     "reply-to",
                                                        "message-id",   "x-mailer", "user-agent",
                                                        "content-type", "date"};
  for (std::string_view read : kReadElsewhere) {
    if (name == read) return HeaderFamily::kReadElsewhere;
  }
  if (name == "received") return HeaderFamily::kReceived;
  if (name == "to" || name == "cc") return HeaderFamily::kRecipients;
  return HeaderFamily::kOther;
}

class Reader {
 public:
  Reader(const MailReaderOptions& options, MailContent& content)
      : options_(options), content_(content) {}

  void Read(std::string_view message) {
    const std::size_t cut = MultipartCut(message, options_.max_mime_parts);
    if (cut != std::string_view::npos) {
      message = message.substr(0, cut);
      Meta("mime-truncated");
    }
    std::string storage;
    const Budgeted budgeted = ApplyBudgets(message, options_, storage);
    message = budgeted.text;
    if (budgeted.headers_cut) Meta("headers-truncated");
    if (budgeted.parts_cut && cut == std::string_view::npos) Meta("mime-truncated");
    GObjectPtr<GMimeStream> stream(
        g_mime_stream_mem_new_with_buffer(message.data(), message.size()));
    GObjectPtr<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    GObjectPtr<GMimeMessage> mail(g_mime_parser_construct_message(parser.get(), nullptr));
    if (mail == nullptr) {
      Meta("mime-unparsable");
      AddText("", TokenSource::kBody, std::string(message));
      return;
    }
    if (options_.header_tokens) ReadHeaders(mail.get());
    GMimeObject* body = g_mime_message_get_mime_part(mail.get());
    if (body == nullptr) {
      Meta("no-body");
    } else {
      ReadEntity(body, 0);
    }
    if (has_html_ && !has_plain_) Meta("html-only");
    if (!has_html_ && !has_plain_) Meta("no-text");
    AddUrlTokens(hosts_, content_);
  }

 private:
  void Meta(std::string_view fact) {
    content_.tokens.push_back({"meta:" + std::string(fact), TokenSource::kMeta});
  }
  // Token texts must be UTF-8 (tokenizer/tokenizer.h), but GMime hands back some header bytes
  // undecoded (a content type, a header name, an address): ill-formed bytes become U+FFFD.
  void Whole(std::string text, TokenSource source) {
    if (!IsValidUtf8(text)) text = ReplaceInvalidUtf8(text);
    content_.tokens.push_back({std::move(text), source});
  }
  void AddText(std::string prefix, TokenSource source, std::string text) {
    if (!text.empty()) content_.texts.push_back({std::move(prefix), source, std::move(text)});
  }

  // prefix + word for each word of a header value (tokenizer/header_words.h), each once.
  void HeaderWords(std::string_view prefix, std::string_view value) {
    ForEachHeaderWord(value, word_, [&](const std::string& word) {
      Whole(std::string(prefix) + word, TokenSource::kHeader);
      return content_.tokens.size() < kMaxWholeTokens;
    });
  }

  // The domain of the first mailbox of `list` ("" when none).
  std::string ReadAddresses(InternetAddressList* list, bool is_from) {
    std::string first_domain;
    if (list == nullptr) return first_domain;
    const int count = internet_address_list_length(list);
    for (int i = 0; i < count && i < 4; ++i) {
      InternetAddress* address = internet_address_list_get_address(list, i);
      if (address == nullptr || !INTERNET_ADDRESS_IS_MAILBOX(address)) continue;
      const char* addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(address));
      const std::string mailbox = addr != nullptr ? Lower(addr) : "";
      const std::size_t at = mailbox.rfind('@');
      const std::string domain = at == std::string::npos ? "" : mailbox.substr(at + 1);
      if (first_domain.empty()) first_domain = domain;
      if (is_from) {
        if (!mailbox.empty()) Whole("from:" + mailbox, TokenSource::kHeader);
        if (!domain.empty()) Whole("from-domain:" + domain, TokenSource::kHeader);
        if (const char* name = internet_address_get_name(address); name != nullptr) {
          AddText("from-name:", TokenSource::kHeader, name);
        }
      }
    }
    return first_domain;
  }

  void ReadHeaders(GMimeMessage* mail) {
    if (const char* subject = g_mime_message_get_subject(mail); subject != nullptr) {
      AddText("subject:", TokenSource::kHeader, subject);
    }
    const std::string from_domain = ReadAddresses(g_mime_message_get_from(mail), true);
    const std::string reply_domain = ReadAddresses(g_mime_message_get_reply_to(mail), false);
    if (!reply_domain.empty()) {
      Whole("reply-to-domain:" + reply_domain, TokenSource::kHeader);
      if (reply_domain != from_domain) Meta("reply-to-differs");
    }
    std::size_t recipients = 0;
    for (GMimeAddressType type : {GMIME_ADDRESS_TYPE_TO, GMIME_ADDRESS_TYPE_CC}) {
      if (InternetAddressList* list = g_mime_message_get_addresses(mail, type)) {
        recipients += static_cast<std::size_t>(internet_address_list_length(list));
      }
    }
    Meta("recipients:" + Bucket(recipients));
    if (const char* id = g_mime_message_get_message_id(mail); id != nullptr) {
      const std::string message_id = Lower(id);
      if (const std::size_t at = message_id.rfind('@'); at != std::string::npos) {
        Whole("message-id-domain:" + message_id.substr(at + 1), TokenSource::kHeader);
      }
    } else {
      Meta("no-message-id");
    }
    GMimeObject* top = GMIME_OBJECT(mail);
    for (const char* name : {"X-Mailer", "User-Agent"}) {
      if (const char* mailer = g_mime_object_get_header(top, name); mailer != nullptr) {
        AddText("mailer:", TokenSource::kHeader, mailer);
      }
    }
    GMimeHeaderList* headers = g_mime_object_get_header_list(top);
    const int count = headers != nullptr ? g_mime_header_list_get_count(headers) : 0;
    int received = 0;
    for (int i = 0; i < count && i < kMaxHeaderFields; ++i) {
      GMimeHeader* header = g_mime_header_list_get_header_at(headers, i);
      const char* raw_name = g_mime_header_get_name(header);
      if (raw_name == nullptr) continue;
      const std::string name = Lower(raw_name);
      if (IsIgnoredHeader(name)) continue;
      Whole("hname:" + name, TokenSource::kHeader);
      const HeaderFamily family = FamilyOf(name);
      if (family == HeaderFamily::kReadElsewhere) continue;
      // The name first: GMime decodes a value only when it is asked for.
      const char* value = g_mime_header_get_value(header);
      if (value == nullptr) continue;
      switch (family) {
        case HeaderFamily::kReceived:
          if (++received <= kMaxReceived) ReadReceived(value);
          HeaderWords("rcvd:", value);
          break;
        case HeaderFamily::kRecipients:
          HeaderWords("to:", value);
          break;
        case HeaderFamily::kOther:
          HeaderWords("head:", value);
          break;
        case HeaderFamily::kReadElsewhere:
          break;
      }
    }
  }

  // Received: hosts named in the chain, reduced to registrable domains, and IPv4 /24 networks.
  void ReadReceived(std::string_view value) {
    std::size_t i = 0;
    while (i < value.size()) {
      while (i < value.size() && !IsAsciiAlnum(value[i])) ++i;
      std::size_t end = i;
      while (end < value.size() &&
             (IsAsciiAlnum(value[end]) || value[end] == '.' || value[end] == '-')) {
        ++end;
      }
      std::string word = Lower(value.substr(i, end - i));
      while (!word.empty() && word.back() == '.') word.pop_back();
      i = end;
      if (word.find('.') == std::string::npos) continue;
      if (IsIpv4Address(word)) {
        Whole("received-ip:" + word.substr(0, word.rfind('.')), TokenSource::kHeader);
      } else if (const std::string domain = RegistrableDomain(word); !domain.empty()) {
        Whole("received:" + domain, TokenSource::kHeader);
      }
    }
  }

  void ReadEntity(GMimeObject* entity, std::size_t depth) {
    if (depth > options_.max_mime_depth) {
      Meta("mime-too-deep");
      return;
    }
    GMimeContentType* type = g_mime_object_get_content_type(entity);
    const std::string media =
        type != nullptr ? Lower(g_mime_content_type_get_media_type(type)) : "text";
    const std::string subtype =
        type != nullptr ? Lower(g_mime_content_type_get_media_subtype(type)) : "plain";
    if (depth == 0 && options_.header_tokens) {
      Whole("content-type:" + media + "/" + subtype, TokenSource::kHeader);
    }
    if (GMIME_IS_MULTIPART(entity)) {
      GMimeMultipart* multipart = GMIME_MULTIPART(entity);
      const int count = g_mime_multipart_get_count(multipart);
      for (int i = 0; i < count; ++i) {
        if (GMimeObject* part = g_mime_multipart_get_part(multipart, i)) {
          ReadEntity(part, depth + 1);
        }
      }
      // No parts (no boundary parameter, or the boundary never occurs): GMime keeps the whole
      // content as the prologue, and that is the text a reader is shown.
      const char* prologue = g_mime_multipart_get_prologue(multipart);
      if (count == 0 && prologue != nullptr && *prologue != '\0') {
        has_plain_ = true;
        Utf8Text text = ToUtf8(prologue, "");
        FindUrlHosts(text.text, hosts_,
                     options_.max_urls - std::min(options_.max_urls, hosts_.size()));
        AddText("", TokenSource::kBody, std::move(text.text));
      }
      return;
    }
    if (GMIME_IS_MESSAGE_PART(entity)) {
      GMimeMessage* inner = g_mime_message_part_get_message(GMIME_MESSAGE_PART(entity));
      Meta("attached-message");
      if (inner != nullptr) {
        if (GMimeObject* body = g_mime_message_get_mime_part(inner)) ReadEntity(body, depth + 1);
      }
      return;
    }
    if (!GMIME_IS_PART(entity)) return;
    if (++leaf_parts_ > options_.max_text_parts) {
      if (leaf_parts_ == options_.max_text_parts + 1) Meta("mime-too-many-parts");
      return;
    }
    GMimePart* part = GMIME_PART(entity);
    const bool attachment = g_mime_part_is_attachment(part);
    if (media != "text" || (attachment && subtype != "plain" && subtype != "html")) {
      Whole("attachment:" + media + "/" + subtype, TokenSource::kMeta);
      if (const char* filename = g_mime_part_get_filename(part); filename != nullptr) {
        const std::string name = Lower(filename);
        if (const std::size_t dot = name.rfind('.');
            dot != std::string::npos && name.size() - dot <= 8) {
          Whole("attachment-ext:" + name.substr(dot + 1), TokenSource::kMeta);
        }
      }
      return;
    }
    const std::string bytes = Decode(part);
    const char* charset = g_mime_object_get_content_type_parameter(entity, "charset");
    Utf8Text text = ToUtf8(bytes, charset != nullptr ? charset : "");
    if (text.outcome == CharsetOutcome::kUnknown) Meta("charset-unknown");
    if (text.outcome == CharsetOutcome::kDetected && charset != nullptr) Meta("charset-mismatch");
    Meta("charset:" + text.charset);
    if (subtype == "html") {
      has_html_ = true;
      const HtmlLimits limits{.max_tags = options_.max_html_tags,
                              .max_attributes = options_.max_html_attributes,
                              .max_tag_attributes = options_.max_html_tag_attributes};
      HtmlContent html = options_.html_from_tree ? VisibleTextFromTree(text.text, limits)
                                                 : VisibleText(text.text, limits);
      if (html.truncated) Meta("html-truncated");
      for (const std::string& link : html.links) {
        if (hosts_.size() >= options_.max_urls) break;
        if (std::string host = UrlHost(link); !host.empty()) hosts_.push_back(std::move(host));
      }
      if (html.images > 0) Meta("images:" + Bucket(html.images));
      FindUrlHosts(html.text, hosts_,
                   options_.max_urls - std::min(options_.max_urls, hosts_.size()));
      AddText("", TokenSource::kBody, std::move(html.text));
    } else {
      has_plain_ = true;
      FindUrlHosts(text.text, hosts_,
                   options_.max_urls - std::min(options_.max_urls, hosts_.size()));
      AddText("", TokenSource::kBody, std::move(text.text));
    }
  }

  // The part's content with its transfer encoding (base64, quoted-printable, uuencode) undone.
  static std::string Decode(GMimePart* part) {
    GMimeDataWrapper* wrapper = g_mime_part_get_content(part);
    if (wrapper == nullptr) return "";
    GObjectPtr<GMimeStream> out(g_mime_stream_mem_new());
    if (g_mime_data_wrapper_write_to_stream(wrapper, out.get()) < 0) return "";
    GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out.get()));
    if (bytes == nullptr) return "";
    return std::string(reinterpret_cast<const char*>(bytes->data), bytes->len);
  }

  const MailReaderOptions& options_;
  MailContent& content_;
  std::vector<std::string> hosts_;
  std::string word_;            // Reused by HeaderWords.
  std::size_t leaf_parts_ = 0;  // Leaf MIME parts (text or attachment) visited.
  bool has_html_ = false;
  bool has_plain_ = false;
};

// A message that makes GMime create every class it uses on the way: multiparts (mixed,
// alternative, signed), text, HTML and binary parts, quoted-printable and base64, an attached
// message, and mailbox and group addresses.
constexpr char kClassWarmUp[] =
    "From: \"A\" <a@example.org>\r\nTo: friends: b@example.org, c@example.org;\r\n"
    "Reply-To: r@example.net\r\nSubject: =?utf-8?q?warm_up?=\r\nMIME-Version: 1.0\r\n"
    "Content-Type: multipart/mixed; boundary=\"m\"\r\n\r\n"
    "--m\r\nContent-Type: multipart/alternative; boundary=\"a\"\r\n\r\n"
    "--a\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
    "Content-Transfer-Encoding: quoted-printable\r\n\r\ncaf=E9 http://example.com/x\r\n"
    "--a\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n"
    "PHA+aGk8L3A+\r\n--a--\r\n"
    "--m\r\nContent-Type: multipart/signed; boundary=\"s\"; "
    "protocol=\"application/pgp-signature\"\r\n\r\n"
    "--s\r\nContent-Type: text/plain\r\n\r\nsigned\r\n"
    "--s\r\nContent-Type: application/pgp-signature\r\n\r\nsig\r\n--s--\r\n"
    "--m\r\nContent-Type: application/octet-stream; name=\"a.bin\"\r\n"
    "Content-Disposition: attachment; filename=\"a.bin\"\r\nContent-Transfer-Encoding: "
    "base64\r\n\r\n"
    "AAECAw==\r\n"
    "--m\r\nContent-Type: message/rfc822\r\n\r\nFrom: d@example.com\r\nSubject: inner\r\n\r\n"
    "inner text\r\n--m--\r\n";

}  // namespace

void InitializeMailReader() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_mime_init();
    InitializeHtmlParser();
    // GLib creates each GMime class when it is first used, under its own locks, which
    // ThreadSanitizer cannot see (GLib is not built with it). Reading a message that uses them
    // all here, inside the once-initialisation every reader passes, creates them before any
    // other thread can read mail.
    MailContent ignored;
    Reader(MailReaderOptions{}, ignored).Read(kClassWarmUp);
  });
}

void AddUrlTokens(const std::vector<std::string>& hosts, MailContent& content) {
  for (const std::string& host : hosts) {
    if (IsIpv4Address(host)) {
      content.tokens.push_back({"meta:url-ip", TokenSource::kMeta});
      continue;
    }
    content.tokens.push_back({"url:" + host, TokenSource::kUrl});
    if (std::string domain = RegistrableDomain(host); !domain.empty()) {
      content.tokens.push_back({"url-domain:" + domain, TokenSource::kUrl});
    }
  }
}

MailContent ReadMail(std::string_view message, const MailReaderOptions& options) {
  InitializeMailReader();
  MailContent content;
  Reader(options, content).Read(message);
  return content;
}

}  // namespace nbspamd::tokenizer
