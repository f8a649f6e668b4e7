#include "tokenizer/mail_reader.h"

#include <gmime/gmime.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>

#include "common/utf8.h"
#include "tokenizer/ascii.h"
#include "tokenizer/charset.h"
#include "tokenizer/header_converters.h"
#include "tokenizer/header_words.h"
#include "tokenizer/html_text.h"
#include "tokenizer/html_tree_text.h"
#include "tokenizer/mail_budgets.h"
#include "tokenizer/plain_message.h"
#include "tokenizer/simple_addresses.h"
#include "tokenizer/simple_field_value.h"
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

// Owns a string GLib allocated.
struct GFree {
  void operator()(char* text) const { g_free(text); }
};
using GStringPtr = std::unique_ptr<char, GFree>;

// A header field's value as GMime decodes it (g_mime_header_get_value: the raw value unfolded,
// then its RFC 2047 words decoded and 8-bit text converted), `unfolded` owning it where it is not
// GMime's. GMime decodes through a list of tokens it allocates one a word (70% of the reader's
// GLib slice allocations); an unfolded value of 7-bit text with no "=?" has nothing to decode and
// is its own decoding (MailReaderTest checks GMime agrees; the corpora's tokens are
// byte-identical either way: docs/PERFORMANCE.md).
// With `gmime_decoding`, always GMime's.
const char* DecodedValue(GMimeHeader* header, GStringPtr& unfolded, bool gmime_decoding) {
  if (gmime_decoding) return g_mime_header_get_value(header);
  const char* raw = g_mime_header_get_raw_value(header);
  if (raw == nullptr) return g_mime_header_get_value(header);
  unfolded.reset(g_mime_utils_header_unfold(raw));
  if (unfolded != nullptr && IsPlainHeaderText(unfolded.get())) return unfolded.get();
  return g_mime_header_get_value(header);
}

// "1", "2", "3-5", "6-10", "11+": counts where the exact number matters little.
std::string Bucket(std::size_t n) {
  if (n <= 2) return std::to_string(n);
  if (n <= 5) return "3-5";
  if (n <= 10) return "6-10";
  return "11+";
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
// verdicts (X-Spam-*, X-Virus-*) and nbspamd's own (X-Nbspamd*, the milter's status header): a
// message is often learned after such a filter has marked it but classified before, so the marks
// would be evidence at training time only.
bool IsIgnoredHeader(std::string_view name) {
  static constexpr std::string_view kIgnored[] = {
      "list-id",     "list-unsubscribe", "list-subscribe", "list-help",
      "list-post",   "list-archive",     "list-owner",     "x-mailman-version",
      "x-beenthere", "precedence",       "errors-to",      "x-loop",
      "sender",      "x-list",           "mailing-list",   "x-mailing-list"};
  for (std::string_view ignored : kIgnored) {
    if (name == ignored) return true;
  }
  return name.starts_with("x-spam-") || name.starts_with("x-virus-") ||
         name.starts_with("x-nbspamd");
}

enum class HeaderFamily {
  kReadElsewhere,  // Read by ReadTopFields or ReadEntity into their own tokens.
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

// What the reader takes from a message's own fields beyond the header list. GMime's message
// object gives them (ReadMessage); a plain message's fields give the same (ReadPlain).
// An address of a From or Reply-To field, as the reader reads it.
struct AddressFacts {
  bool is_mailbox = true;           // INTERNET_ADDRESS_IS_MAILBOX: a group is not.
  std::string addr;                 // internet_address_mailbox_get_addr ("" for none).
  std::optional<std::string> name;  // internet_address_get_name.
};

// Appends GMime's `list` (nullptr for none) to `facts`.
void AppendFactsOf(InternetAddressList* list, std::vector<AddressFacts>& facts) {
  if (list == nullptr) return;
  const int count = internet_address_list_length(list);
  for (int i = 0; i < count; ++i) {
    InternetAddress* address = internet_address_list_get_address(list, i);
    AddressFacts& fact = facts.emplace_back();
    fact.is_mailbox = address != nullptr && INTERNET_ADDRESS_IS_MAILBOX(address);
    if (!fact.is_mailbox) continue;
    if (const char* addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(address))) {
      fact.addr = addr;
    }
    if (const char* name = internet_address_get_name(address)) fact.name = name;
  }
}

struct TopFields {
  const char* subject = nullptr;   // The last Subject field's value, decoded.
  std::vector<AddressFacts> from;  // The addresses of every From field, in order.
  std::vector<AddressFacts> reply_to;
  std::size_t recipients = 0;        // Addresses of every To and Cc field.
  const char* message_id = nullptr;  // The last Message-Id field's id, without <>.
  const char* mailers[2] = {};       // The first X-Mailer field's value, the first User-Agent's.
};

// Appends the addresses of a field's raw value to `facts`, as GMime's message reads each From,
// Reply-To, To and Cc field: a simple list without GMime's objects (simple_addresses.h), any
// other by internet_address_list_parse.
void AppendAddresses(std::string_view raw_value, std::vector<AddressFacts>& facts) {
  if (const std::optional<std::vector<SimpleAddress>> simple = ParseSimpleAddressList(raw_value)) {
    for (const SimpleAddress& address : *simple) {
      facts.push_back({true, std::string(address.addr), std::string(address.name)});
    }
  } else {
    const GObjectPtr<InternetAddressList> parsed(
        internet_address_list_parse(nullptr, std::string(raw_value).c_str()));
    AppendFactsOf(parsed.get(), facts);
  }
}

// How many addresses AppendAddresses would append: To and Cc are only counted, so nothing is
// copied.
std::size_t CountAddresses(std::string_view raw_value) {
  if (const std::optional<std::vector<SimpleAddress>> simple = ParseSimpleAddressList(raw_value)) {
    return simple->size();
  }
  const GObjectPtr<InternetAddressList> parsed(
      internet_address_list_parse(nullptr, std::string(raw_value).c_str()));
  return parsed == nullptr ? 0
                           : static_cast<std::size_t>(internet_address_list_length(parsed.get()));
}

// A plain field's value as g_mime_header_get_value gives it: unfolded, then decoded by GMime's own
// decoder when it holds anything to decode (encoded words, 8-bit text: IsPlainHeaderText); the
// unfolded value is its own decoding otherwise (MailReaderTest holds this to GMime's reading).
std::string PlainDecodedValue(std::string_view raw_value) {
  std::string value = UnfoldedValue(raw_value);
  if (IsPlainHeaderText(value)) return value;
  const GStringPtr decoded(g_mime_utils_header_decode_text(nullptr, value.c_str()));
  return decoded != nullptr ? std::string(decoded.get()) : std::string();
}

// The TopFields of a plain message's fields (plain_message.h), as GMime's message reads them:
// the last Subject and Message-Id, every From, Reply-To, To and Cc, the first X-Mailer and
// User-Agent. Owns what they point to, so it stays where it is made.
class PlainTopFields {
 public:
  explicit PlainTopFields(const std::vector<PlainField>& fields) {
    const PlainField* subject = nullptr;
    const PlainField* message_id = nullptr;
    const PlainField* mailers[2] = {};
    for (const PlainField& field : fields) {
      const std::string_view name = field.name;
      if (EqualsIgnoringAsciiCase(name, "subject")) {
        subject = &field;
      } else if (EqualsIgnoringAsciiCase(name, "message-id")) {
        message_id = &field;
      } else if (EqualsIgnoringAsciiCase(name, "from")) {
        AppendAddresses(field.raw_value, top_.from);
      } else if (EqualsIgnoringAsciiCase(name, "reply-to")) {
        AppendAddresses(field.raw_value, top_.reply_to);
      } else if (EqualsIgnoringAsciiCase(name, "to") || EqualsIgnoringAsciiCase(name, "cc")) {
        top_.recipients += CountAddresses(field.raw_value);
      } else if (EqualsIgnoringAsciiCase(name, "x-mailer")) {
        if (mailers[0] == nullptr) mailers[0] = &field;
      } else if (EqualsIgnoringAsciiCase(name, "user-agent")) {
        if (mailers[1] == nullptr) mailers[1] = &field;
      }
    }
    if (subject != nullptr) {
      subject_ = PlainDecodedValue(subject->raw_value);
      top_.subject = subject_.c_str();
    }
    if (message_id != nullptr) {
      message_id_.reset(
          g_mime_utils_decode_message_id(PlainDecodedValue(message_id->raw_value).c_str()));
      top_.message_id = message_id_.get();
    }
    for (int i = 0; i < 2; ++i) {
      if (mailers[i] == nullptr) continue;
      mailers_[i] = PlainDecodedValue(mailers[i]->raw_value);
      top_.mailers[i] = mailers_[i].c_str();
    }
  }
  PlainTopFields(const PlainTopFields&) = delete;
  PlainTopFields& operator=(const PlainTopFields&) = delete;

  [[nodiscard]] const TopFields& top() const { return top_; }

 private:
  TopFields top_;
  std::string subject_;
  GStringPtr message_id_;
  std::string mailers_[2];
};

// A part of a plain message (its body, or one part of its multipart body), as GMime's part for
// it would be.
struct PlainPart {
  std::string media = "text";  // Lower-case, as are subtype's.
  std::string subtype = "plain";
  // The Content-Type's parameters the reader uses, as g_mime_content_type_get_parameter gives
  // them: std::nullopt when absent, or without a Content-Type field.
  std::optional<std::string> charset;
  std::optional<std::string> boundary;
  std::optional<std::string> name;
  // From the Content-Disposition: g_mime_content_disposition_is_attachment, and its filename.
  bool attachment = false;
  std::optional<std::string> filename;
  GMimeContentEncoding encoding = GMIME_CONTENT_ENCODING_DEFAULT;
  std::string_view content;         // Still transfer-encoded.
  std::vector<PlainPart> children;  // A multipart's parts (SplitPlainMultipart).
};

std::optional<std::string> Owned(std::optional<std::string_view> value) {
  if (!value.has_value()) return std::nullopt;
  return std::string(*value);
}
std::optional<std::string> Owned(const char* value) {
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

// The part whose Content-* fields are `fields` and whose content is `content`, or std::nullopt
// when reading it needs more of GMime than the reader's shortcut: a second Content-Type,
// Content-Transfer-Encoding or Content-Disposition field (which of them GMime keeps is not
// reproduced here), anything to decode in one of them, a type GMime cannot parse, uuencode.
std::optional<PlainPart> PlainPartOf(const std::vector<PlainField>& fields,
                                     std::string_view content) {
  const PlainField* type_field = nullptr;
  const PlainField* encoding_field = nullptr;
  const PlainField* disposition_field = nullptr;
  for (const PlainField& field : fields) {
    const PlainField** slot = nullptr;
    if (EqualsIgnoringAsciiCase(field.name, "content-type")) {
      slot = &type_field;
    } else if (EqualsIgnoringAsciiCase(field.name, "content-transfer-encoding")) {
      slot = &encoding_field;
    } else if (EqualsIgnoringAsciiCase(field.name, "content-disposition")) {
      slot = &disposition_field;
    }
    if (slot == nullptr) continue;
    if (*slot != nullptr) return std::nullopt;
    // GMime parses these from the decoded value, and its parser finds the type in the raw one:
    // with anything to decode in them, GMime reads the part.
    if (!IsPlainHeaderText(field.raw_value)) return std::nullopt;
    *slot = &field;
  }
  PlainPart part;
  part.content = content;
  if (type_field != nullptr) {
    // From the value, as GMime's part parses it: an open quote ends with the value, not with its
    // line break. A simple value is read without GMime's objects (simple_field_value.h).
    const std::string value = UnfoldedValue(type_field->raw_value);
    if (const std::optional<SimpleFieldValue> simple = ParseSimpleFieldValue(value, true)) {
      part.media = AsciiLowered(simple->type);
      part.subtype = AsciiLowered(simple->subtype);
      part.charset = Owned(simple->Find("charset"));
      part.boundary = Owned(simple->Find("boundary"));
      part.name = Owned(simple->Find("name"));
    } else {
      const GObjectPtr<GMimeContentType> type(g_mime_content_type_parse(nullptr, value.c_str()));
      if (type == nullptr) return std::nullopt;
      const char* media = g_mime_content_type_get_media_type(type.get());
      const char* subtype = g_mime_content_type_get_media_subtype(type.get());
      if (media == nullptr || subtype == nullptr) return std::nullopt;
      part.media = AsciiLowered(media);
      part.subtype = AsciiLowered(subtype);
      part.charset = Owned(g_mime_content_type_get_parameter(type.get(), "charset"));
      part.boundary = Owned(g_mime_content_type_get_parameter(type.get(), "boundary"));
      part.name = Owned(g_mime_content_type_get_parameter(type.get(), "name"));
    }
  }
  if (encoding_field != nullptr) {
    part.encoding =
        g_mime_content_encoding_from_string(UnfoldedValue(encoding_field->raw_value).c_str());
  }
  if (part.encoding == GMIME_CONTENT_ENCODING_UUENCODE) return std::nullopt;
  if (disposition_field != nullptr) {
    const std::string value = UnfoldedValue(disposition_field->raw_value);
    if (const std::optional<SimpleFieldValue> simple = ParseSimpleFieldValue(value, false)) {
      part.attachment = EqualsIgnoringAsciiCase(simple->type, "attachment");
      part.filename = Owned(simple->Find("filename"));
    } else {
      const GObjectPtr<GMimeContentDisposition> disposition(
          g_mime_content_disposition_parse(nullptr, value.c_str()));
      if (disposition == nullptr) return std::nullopt;
      part.attachment = g_mime_content_disposition_is_attachment(disposition.get());
      part.filename =
          Owned(g_mime_content_disposition_get_parameter(disposition.get(), "filename"));
    }
  }
  return part;
}

// Multiparts nested deeper than this within a plain message are left to GMime.
constexpr std::size_t kMaxPlainNesting = 4;

// Fills `multipart`'s children as GMime's parser would make them: each a leaf or a multipart
// with a plain header block (SplitMultipartBody, SplitPlainMessage). A part within needs only its
// own boundary: the lines of its enclosing multiparts' boundaries have already ended it. False
// when GMime must read it: no boundary, multipart/digest (whose parts are messages by default),
// a message part, a part PlainPartOf refuses, nesting beyond kMaxPlainNesting.
bool SplitPlainMultipart(PlainPart& multipart, std::size_t nesting) {
  if (!multipart.boundary.has_value() || multipart.subtype == "digest" ||
      nesting > kMaxPlainNesting) {
    return false;
  }
  const std::optional<std::vector<MultipartPartBytes>> regions =
      SplitMultipartBody(multipart.content, *multipart.boundary);
  if (!regions.has_value()) return false;
  multipart.children.reserve(regions->size());
  for (const MultipartPartBytes& region : *regions) {
    const std::optional<PlainMessage> split = SplitPlainMessage(region.bytes);
    if (!split.has_value()) return false;
    std::optional<PlainPart> part = PlainPartOf(split->content_fields, split->body);
    if (!part.has_value() || part->media == "message") return false;
    if (part->media == "multipart") {
      // Its boundary lines are read as written, the last one's line break included.
      part->content = region.written.substr(region.bytes.size() - split->body.size());
      if (!SplitPlainMultipart(*part, nesting + 1)) return false;
    }
    multipart.children.push_back(std::move(*part));
  }
  return true;
}

// The body part of a plain message as GMime's parser would make it: a leaf, or a multipart
// whose parts are leaves and multiparts with plain header blocks (SplitPlainMultipart);
// std::nullopt when GMime must read it (a message, or as SplitPlainMultipart says).
std::optional<PlainPart> PlainBodyOf(const PlainMessage& plain) {
  std::optional<PlainPart> body = PlainPartOf(plain.content_fields, plain.body);
  if (!body.has_value() || body->media == "message") return std::nullopt;
  if (body->media == "multipart" && !SplitPlainMultipart(*body, 1)) return std::nullopt;
  return body;
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
    if (!options_.gmime_decoding) {
      if (const std::optional<PlainMessage> plain = SplitPlainMessage(message);
          plain.has_value() && ReadPlain(*plain)) {
        Finish();
        return;
      }
    }
    content_.parsed_by_gmime = true;
    GObjectPtr<GMimeStream> stream(
        g_mime_stream_mem_new_with_buffer(message.data(), message.size()));
    GObjectPtr<GMimeParser> parser(g_mime_parser_new_with_stream(stream.get()));
    GObjectPtr<GMimeMessage> mail(g_mime_parser_construct_message(parser.get(), nullptr));
    if (mail == nullptr) {
      Meta("mime-unparsable");
      AddText("", TokenSource::kBody, std::string(message));
      return;
    }
    ReadMessage(mail.get());
    GMimeObject* body = g_mime_message_get_mime_part(mail.get());
    if (body == nullptr) {
      Meta("no-body");
    } else {
      ReadEntity(body, 0);
    }
    Finish();
  }

 private:
  // "meta:" followed by `fact` (and `value`): names the reader made, not checked.
  void Meta(std::string_view fact, std::string_view value = {}) {
    content_.tokens.AddValid({"meta:", fact, value}, TokenSource::kMeta);
  }
  // Token texts must be UTF-8 (tokenizer/tokenizer.h), but GMime hands back some header bytes
  // undecoded (a content type, a header name, an address): ill-formed bytes become U+FFFD.
  void Whole(std::initializer_list<std::string_view> pieces, TokenSource source) {
    content_.tokens.Add(pieces, source);
  }
  void AddText(std::string prefix, TokenSource source, std::string text) {
    if (!text.empty()) content_.texts.push_back({std::move(prefix), source, std::move(text)});
  }

  // prefix + word for each word of a header value (tokenizer/header_words.h), each once.
  void HeaderWords(std::string_view prefix, std::string_view value) {
    ForEachHeaderWord(value, word_, [&](const std::string& word) {
      content_.tokens.AddValid({prefix, word}, TokenSource::kHeader);  // Words are ASCII.
      return content_.tokens.size() < kMaxWholeTokens;
    });
  }

  // The domain of the first mailbox of `list` ("" when none).
  std::string ReadAddresses(const std::vector<AddressFacts>& list, bool is_from) {
    std::string first_domain;
    for (std::size_t i = 0; i < list.size() && i < 4; ++i) {
      const AddressFacts& address = list[i];
      if (!address.is_mailbox) continue;
      const std::string mailbox = AsciiLowered(address.addr);
      const std::size_t at = mailbox.rfind('@');
      const std::string domain = at == std::string::npos ? "" : mailbox.substr(at + 1);
      if (first_domain.empty()) first_domain = domain;
      if (is_from) {
        if (!mailbox.empty()) Whole({"from:", mailbox}, TokenSource::kHeader);
        if (!domain.empty()) Whole({"from-domain:", domain}, TokenSource::kHeader);
        if (address.name.has_value()) AddText("from-name:", TokenSource::kHeader, *address.name);
      }
    }
    return first_domain;
  }

  void Finish() {
    if (has_html_ && !has_plain_) Meta("html-only");
    if (!has_html_ && !has_plain_) Meta("no-text");
    AddUrlTokens(hosts_, content_);
  }

  // The facts and header tokens of GMime's message.
  void ReadMessage(GMimeMessage* mail) {
    TopFields top;
    top.subject = g_mime_message_get_subject(mail);
    AppendFactsOf(g_mime_message_get_from(mail), top.from);
    AppendFactsOf(g_mime_message_get_reply_to(mail), top.reply_to);
    for (GMimeAddressType type : {GMIME_ADDRESS_TYPE_TO, GMIME_ADDRESS_TYPE_CC}) {
      if (InternetAddressList* list = g_mime_message_get_addresses(mail, type)) {
        top.recipients += static_cast<std::size_t>(internet_address_list_length(list));
      }
    }
    top.message_id = g_mime_message_get_message_id(mail);
    GMimeObject* object = GMIME_OBJECT(mail);
    top.mailers[0] = g_mime_object_get_header(object, "X-Mailer");
    top.mailers[1] = g_mime_object_get_header(object, "User-Agent");
    ReadFacts(top);
    if (!options_.header_tokens) return;
    ReadTopFields(top);
    GMimeHeaderList* headers = g_mime_object_get_header_list(object);
    const int count = headers != nullptr ? g_mime_header_list_get_count(headers) : 0;
    int received = 0;
    for (int i = 0; i < count && i < kMaxHeaderFields; ++i) {
      GMimeHeader* header = g_mime_header_list_get_header_at(headers, i);
      const char* name = g_mime_header_get_name(header);
      if (name == nullptr) continue;
      // GMime decodes a value only when it is asked for.
      GStringPtr unfolded;
      ReadField(name, received,
                [&] { return DecodedValue(header, unfolded, options_.gmime_decoding); });
    }
  }

  // A message whose header block is plain (plain_message.h) and whose body is one part, or
  // multiparts of such parts (PlainBodyOf), read as ReadMessage and ReadEntity read GMime's
  // objects for it, with GMime's own functions on each field's value (addresses, content type,
  // disposition, message id) but without its parser and message. False, having read nothing,
  // when the body is not that simple: GMime then reads the message.
  bool ReadPlain(const PlainMessage& plain) {
    const std::optional<PlainPart> body = PlainBodyOf(plain);
    if (!body.has_value()) return false;
    const PlainTopFields fields(plain.fields);
    ReadFacts(fields.top());
    if (options_.header_tokens) {
      ReadTopFields(fields.top());
      int received = 0;
      std::string value;
      for (std::size_t i = 0; i < plain.fields.size() && i < kMaxHeaderFields; ++i) {
        const PlainField& field = plain.fields[i];
        ReadField(std::string(field.name).c_str(), received, [&] {
          value = PlainDecodedValue(field.raw_value);
          return value.c_str();
        });
      }
      Whole({"content-type:", body->media, "/", body->subtype}, TokenSource::kHeader);
    }
    ReadPlainEntity(*body, 0);
    return true;
  }

  // A part of a plain message, as ReadEntity reads GMime's object for it (the content-type token
  // of depth 0 aside: ReadPlain's).
  void ReadPlainEntity(const PlainPart& part, std::size_t depth) {
    if (depth > options_.max_mime_depth) {
      Meta("mime-too-deep");
      return;
    }
    if (part.media != "multipart") return ReadLeaf(part);
    for (const PlainPart& child : part.children) ReadPlainEntity(child, depth + 1);
  }

  // A leaf part of a plain message, as ReadEntity reads GMime's part for it.
  void ReadLeaf(const PlainPart& part) {
    if (++leaf_parts_ > options_.max_text_parts) {
      if (leaf_parts_ == options_.max_text_parts + 1) Meta("mime-too-many-parts");
      return;
    }
    if (part.media != "text" ||
        (part.attachment && part.subtype != "plain" && part.subtype != "html")) {
      // g_mime_part_get_filename: the disposition's filename, else the type's name.
      const std::optional<std::string>& filename =
          part.filename.has_value() ? part.filename : part.name;
      ReadAttachment(part.media, part.subtype, filename.has_value() ? filename->c_str() : nullptr);
      return;
    }
    ReadText(part.subtype, part.charset.has_value() ? part.charset->c_str() : nullptr,
             DecodeInPlace(part.content, part.encoding));
  }

  void ReadFacts(const TopFields& top) {
    MessageFacts& facts = content_.facts;
    if (top.subject != nullptr) facts.subject = top.subject;
    if (top.message_id != nullptr) facts.message_id = top.message_id;
    for (std::size_t i = 0; i < top.from.size() && facts.from_domain.empty(); ++i) {
      if (!top.from[i].is_mailbox) continue;
      const std::string mailbox = AsciiLowered(top.from[i].addr);
      if (const std::size_t at = mailbox.rfind('@'); at != std::string::npos) {
        facts.from_domain = mailbox.substr(at + 1);
      }
    }
  }

  // The tokens of the fields in TopFields.
  void ReadTopFields(const TopFields& top) {
    if (top.subject != nullptr) AddText("subject:", TokenSource::kHeader, top.subject);
    const std::string from_domain = ReadAddresses(top.from, true);
    const std::string reply_domain = ReadAddresses(top.reply_to, false);
    if (!reply_domain.empty()) {
      Whole({"reply-to-domain:", reply_domain}, TokenSource::kHeader);
      if (reply_domain != from_domain) Meta("reply-to-differs");
    }
    Meta("recipients:", Bucket(top.recipients));
    if (top.message_id != nullptr) {
      const std::string message_id = AsciiLowered(top.message_id);
      if (const std::size_t at = message_id.rfind('@'); at != std::string::npos) {
        Whole({"message-id-domain:", std::string_view(message_id).substr(at + 1)},
              TokenSource::kHeader);
      }
    } else {
      Meta("no-message-id");
    }
    for (const char* mailer : top.mailers) {
      if (mailer != nullptr) AddText("mailer:", TokenSource::kHeader, mailer);
    }
  }

  // The tokens of one field of the header list named `raw_name`; `value()` gives its decoded
  // value (nullptr for none), asked for only when the field's words are read.
  template <typename Value>
  void ReadField(const char* raw_name, int& received, const Value& value_of) {
    const std::string name = AsciiLowered(raw_name);
    if (IsIgnoredHeader(name)) return;
    Whole({"hname:", name}, TokenSource::kHeader);
    const HeaderFamily family = FamilyOf(name);
    if (family == HeaderFamily::kReadElsewhere) return;
    const char* value = value_of();
    if (value == nullptr) return;
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
      const std::string_view raw = value.substr(i, end - i);
      i = end;
      // Only a dotted word can name a host or an address (lower-casing moves no dot): most words
      // of the field ("from", "by", "with", "id", dates) are passed over without a copy.
      if (raw.find('.') == std::string_view::npos) continue;
      std::string word = AsciiLowered(raw);
      while (!word.empty() && word.back() == '.') word.pop_back();
      if (word.find('.') == std::string::npos) continue;
      if (IsIpv4Address(word)) {
        Whole({"received-ip:", std::string_view(word).substr(0, word.rfind('.'))},
              TokenSource::kHeader);
      } else if (const std::string domain = RegistrableDomain(word); !domain.empty()) {
        Whole({"received:", domain}, TokenSource::kHeader);
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
        type != nullptr ? AsciiLowered(g_mime_content_type_get_media_type(type)) : "text";
    const std::string subtype =
        type != nullptr ? AsciiLowered(g_mime_content_type_get_media_subtype(type)) : "plain";
    if (depth == 0 && options_.header_tokens) {
      Whole({"content-type:", media, "/", subtype}, TokenSource::kHeader);
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
      ReadAttachment(media, subtype, g_mime_part_get_filename(part));
      return;
    }
    ReadText(subtype, g_mime_object_get_content_type_parameter(entity, "charset"),
             Decode(part, options_.gmime_decoding));
  }

  // A part read as an attachment: its type, and its file name's extension.
  void ReadAttachment(std::string_view media, std::string_view subtype, const char* filename) {
    Whole({"attachment:", media, "/", subtype}, TokenSource::kMeta);
    if (filename == nullptr) return;
    const std::string name = AsciiLowered(filename);
    if (const std::size_t dot = name.rfind('.');
        dot != std::string::npos && name.size() - dot <= 8) {
      Whole({"attachment-ext:", std::string_view(name).substr(dot + 1)}, TokenSource::kMeta);
    }
  }

  // A text part's content, transfer-decoded: `subtype` "html" is read as HTML, any other as
  // plain text; `charset` is its declared charset (nullptr for none).
  void ReadText(std::string_view subtype, const char* charset, const std::string& bytes) {
    Utf8Text text = ToUtf8(bytes, charset != nullptr ? charset : "");
    if (text.outcome == CharsetOutcome::kUnknown) Meta("charset-unknown");
    if (text.outcome == CharsetOutcome::kDetected && charset != nullptr) Meta("charset-mismatch");
    Meta("charset:", text.charset);
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
      if (html.images > 0) Meta("images:", Bucket(html.images));
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
  // The parser keeps each part's bytes in memory (a GMimeStreamMem over the message's buffer):
  // they are read in place and decoded with GMime's own decoder state, g_mime_encoding_flush (the
  // step its basic filter runs, over the whole content at once), rather than through
  // g_mime_data_wrapper_write_to_stream, which makes a filter stream, a filter and an output
  // stream for each part: three GObjects, each made and destroyed under GLib's process-wide
  // locks, which two classifying threads then wait on. uuencode (whose filter first looks for the
  // "begin" line itself), content held any other way, and all of it with `gmime_decoding` go that
  // way still.
  static std::string Decode(GMimePart* part, bool gmime_decoding) {
    GMimeDataWrapper* wrapper = g_mime_part_get_content(part);
    if (wrapper == nullptr) return "";
    const GMimeContentEncoding encoding = g_mime_data_wrapper_get_encoding(wrapper);
    GMimeStream* stream = g_mime_data_wrapper_get_stream(wrapper);
    if (!gmime_decoding && stream != nullptr && GMIME_IS_STREAM_MEM(stream) &&
        encoding != GMIME_CONTENT_ENCODING_UUENCODE) {
      if (GByteArray* buffer = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(stream));
          buffer != nullptr) {
        const auto size = static_cast<gint64>(buffer->len);
        const gint64 end = stream->bound_end < 0 ? size : std::min(stream->bound_end, size);
        const gint64 start = std::clamp<gint64>(stream->bound_start, 0, end);
        return DecodeInPlace(std::string_view(reinterpret_cast<const char*>(buffer->data) + start,
                                              static_cast<std::size_t>(end - start)),
                             encoding);
      }
    }
    GObjectPtr<GMimeStream> out(g_mime_stream_mem_new());
    if (g_mime_data_wrapper_write_to_stream(wrapper, out.get()) < 0) return "";
    GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out.get()));
    if (bytes == nullptr) return "";
    return std::string(reinterpret_cast<const char*>(bytes->data), bytes->len);
  }

  // `raw` with its transfer encoding (base64, quoted-printable) undone by GMime's decoder state,
  // as its basic filter would over the whole content at once; other encodings are as they are.
  // Not uuencode.
  static std::string DecodeInPlace(std::string_view raw, GMimeContentEncoding encoding) {
    if (encoding != GMIME_CONTENT_ENCODING_BASE64 &&
        encoding != GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE) {
      return std::string(raw);
    }
    GMimeEncoding decoder;
    g_mime_encoding_init_decode(&decoder, encoding);
    std::string decoded(g_mime_encoding_outlen(&decoder, raw.size()), '\0');
    decoded.resize(g_mime_encoding_flush(&decoder, raw.data(), raw.size(), decoded.data()));
    return decoded;
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
    KeepHeaderConvertersLoaded();
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
      content.tokens.AddValid({"meta:url-ip"}, TokenSource::kMeta);
      continue;
    }
    content.tokens.AddValid({"url:", host}, TokenSource::kUrl);
    if (std::string domain = RegistrableDomain(host); !domain.empty()) {
      content.tokens.AddValid({"url-domain:", domain}, TokenSource::kUrl);
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
