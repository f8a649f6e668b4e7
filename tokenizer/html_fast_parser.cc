#include "tokenizer/html_fast_parser.h"

#include <libxml/HTMLparser.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <forward_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/ascii.h"
#include "tokenizer/html_elements.h"

namespace nbspamd::tokenizer {
namespace {

namespace el = html_elements;

// libxml2 reads at most this many bytes of a name (HTML_PARSER_BUFFER_SIZE) and the rest as
// something else; the fast parser leaves such names to it.
constexpr std::size_t kNameLimit = 100;
// libxml2 gives text in chunks of this many bytes at least (HTML_PARSER_BIG_BUFFER_SIZE), each
// judged on its own for being blanks it may drop.
constexpr std::size_t kTextChunk = 1000;

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool IsDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// libxml2's IS_CHAR: the characters XML allows.
constexpr bool IsXmlChar(std::uint32_t c) {
  return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

// Whether `c` (a byte below 0x80) is a character libxml2 drops from text: a control other than
// tab, line feed and carriage return.
constexpr bool IsDroppedAscii(unsigned char c) {
  return c < 0x20 && c != '\t' && c != '\n' && c != '\r';
}

// Whether `html` is strict UTF-8 without a NUL byte; `has_dropped` tells whether it holds a
// character libxml2 drops from text (IsDroppedAscii, U+FFFE, U+FFFF).
bool CheckInput(std::string_view html, bool& has_dropped) {
  const auto* p = reinterpret_cast<const unsigned char*>(html.data());
  const auto* const end = p + html.size();
  has_dropped = false;
  while (p < end) {
    // Eight ASCII bytes of 0x20 or more at a time.
    if (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, sizeof(word));
      constexpr std::uint64_t kHigh = 0x8080808080808080ull;
      constexpr std::uint64_t kSpaces = 0x2020202020202020ull;
      if ((word & kHigh) == 0 && ((word - kSpaces) & ~word & kHigh) == 0) {
        p += 8;
        continue;
      }
    }
    const unsigned char c = *p;
    if (c < 0x80) {
      if (c == 0) return false;
      if (IsDroppedAscii(c)) has_dropped = true;
      ++p;
      continue;
    }
    std::size_t length;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      if (c == 0xE0) low = 0xA0;
      if (c == 0xED) high = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      if (c == 0xF0) low = 0x90;
      if (c == 0xF4) high = 0x8F;
    } else {
      return false;
    }
    if (static_cast<std::size_t>(end - p) < length || p[1] < low || p[1] > high) return false;
    for (std::size_t i = 2; i < length; ++i) {
      if (!IsContinuation(static_cast<char>(p[i]))) return false;
    }
    if (c == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF)) has_dropped = true;
    p += length;
  }
  return true;
}

void AppendUtf8(std::string& out, std::uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// The value of HTML entity `name` (case as written), or 0 when libxml2 knows none.
std::uint32_t EntityValue(std::string_view name) {
  // The common ones without libxml2's linear search.
  if (name == "nbsp") return 160;
  if (name == "amp") return '&';
  if (name == "lt") return '<';
  if (name == "gt") return '>';
  if (name == "quot") return '"';
  if (name.size() > 16) return 0;  // Longer than any entity's name.
  char key[17];
  std::memcpy(key, name.data(), name.size());
  key[name.size()] = '\0';
  const htmlEntityDesc* entity = htmlEntityLookup(BAD_CAST key);
  return entity != nullptr ? entity->value : 0;
}

// One parse; see html_fast_parser.h. Positions past the end read as NUL, as libxml2's buffer
// ends with one.
class Parser {
 public:
  Parser(std::string_view html, bool has_dropped, HtmlTextCollector& collector)
      : p_(html.data()),
        end_(html.data() + html.size()),
        has_dropped_(has_dropped),
        collector_(collector) {
    names_.reserve(32);
  }

  bool Run() {
    if (end_ - p_ >= 3 && std::memcmp(p_, "\xEF\xBB\xBF", 3) == 0) return false;
    // htmlParseDocument: blanks before the first '<' are dropped; comments, processing
    // instructions and a doctype may come before the content.
    SkipBlanks();
    SkipCommentsAndInstructions();
    if (AtDoctype()) ParseDoctype();
    SkipBlanks();
    SkipCommentsAndInstructions();
    ParseContent();
    if (p_ == end_) CloseAll();
    return !failed_;
  }

 private:
  // An open element on libxml2's stack of names.
  struct Name {
    const char* text = nullptr;  // NUL-terminated, lower case.
    std::size_t length = 0;
    el::ElementId id = el::kUnknown;

    bool operator==(const Name& other) const {
      if (id != el::kUnknown || other.id != el::kUnknown) return id == other.id;
      return length == other.length && std::memcmp(text, other.text, length) == 0;
    }
  };

  // The attributes the collector reads, first of their name (libxml2 drops a repeated one).
  enum Kept { kHref, kSrc, kAlt, kKeptCount };

  char At(std::size_t offset) const {
    return static_cast<std::size_t>(end_ - p_) > offset ? p_[offset] : '\0';
  }
  bool AtEnd() const { return p_ >= end_; }

  void SkipBlanks() {
    while (p_ < end_ && IsBlank(*p_)) ++p_;
  }

  // --- The stack of names and its events ---

  bool TopIs(el::ElementId id) const { return !names_.empty() && names_.back().id == id; }

  void Push(const Name& name, const char* const* attributes) {
    if (name.id == el::kHead && html_ < 3) html_ = 3;
    if (name.id == el::kBody && html_ < 10) html_ = 10;
    names_.push_back(name);
    if (names_.size() > HtmlTextCollector::kMaxDepth / 2 ||
        !collector_.StartElement(name.text, attributes, FlagsOf(name))) {
      failed_ = true;
    }
  }
  // The collector's flags of an element: a known name's once a process.
  static unsigned FlagsOf(const Name& name) {
    if (name.id == el::kUnknown) return HtmlTextCollector::FlagsOfName(name.text);
    static const std::vector<unsigned> kKnown = [] {
      std::vector<unsigned> flags;
      for (const char* known : el::AllNames())
        flags.push_back(HtmlTextCollector::FlagsOfName(known));
      return flags;
    }();
    return kKnown[static_cast<std::size_t>(name.id)];
  }

  void PushKnown(el::ElementId id) {
    Push({el::NameOf(id), std::strlen(el::NameOf(id)), id}, nullptr);
  }

  void Pop() {
    collector_.EndElement();
    names_.pop_back();
  }

  void CloseAll() {
    while (!names_.empty()) Pop();
  }

  // htmlAutoClose: the open elements a start tag of `id` ends.
  void AutoClose(el::ElementId id) {
    if (id == el::kUnknown) return;
    while (!names_.empty() && names_.back().id != el::kUnknown &&
           el::StartEnds(id, names_.back().id)) {
      Pop();
    }
  }

  // htmlCheckImplied: the html, then head or body, elements a start tag of `id` implies.
  void CheckImplied(el::ElementId id) {
    if (id == el::kHtml) return;
    if (names_.empty()) PushKnown(el::kHtml);
    if (id == el::kBody || id == el::kHead) return;
    if (names_.size() <= 1 && (id == el::kScript || id == el::kStyle || id == el::kMeta ||
                               id == el::kLink || id == el::kTitle || id == el::kBase)) {
      if (html_ >= 3) return;  // A head was seen or implied before.
      PushKnown(el::kHead);
    } else if (id != el::kNoframes && id != el::kFrame && id != el::kFrameset) {
      if (html_ >= 10) return;  // A body was seen or implied before.
      for (const Name& name : names_) {
        if (name.id == el::kBody || name.id == el::kHead) return;
      }
      PushKnown(el::kBody);
    }
  }

  // htmlCheckParagraph: text with no open element, or in html or head, opens a p.
  void CheckParagraph() {
    if (!names_.empty() && !TopIs(el::kHtml) && !TopIs(el::kHead)) return;
    AutoClose(el::kP);
    CheckImplied(el::kP);
    PushKnown(el::kP);
  }

  // --- Names ---

  // htmlParseHTMLName: [A-Za-z_:.][A-Za-z0-9:_.-]* in lower case into `buffer`; its length, 0
  // when none starts here. A name libxml2 would cut fails the parse.
  std::size_t ReadHtmlName(char (&buffer)[kNameLimit + 1]) {
    if (AtEnd() || !(IsLetter(*p_) || *p_ == '_' || *p_ == ':' || *p_ == '.')) return 0;
    std::size_t length = 0;
    while (p_ < end_ && (IsLetter(*p_) || IsDigit(*p_) || *p_ == ':' || *p_ == '-' || *p_ == '_' ||
                         *p_ == '.')) {
      if (length == kNameLimit - 1) {
        failed_ = true;
        return 0;
      }
      buffer[length++] = AsciiLower(*p_++);
    }
    buffer[length] = '\0';
    return length;
  }

  // The name of a start tag as it stays on the stack: known names from the table, others
  // copied, reusing a copy of one of the last few unknown names (the repeated ones of real mail,
  // such as Outlook's o:p): searching every copy would be quadratic in a part of thousands of
  // distinct names.
  Name StackName(const char* text, std::size_t length) {
    const el::ElementId id = el::IdOf(std::string_view(text, length));
    if (id != el::kUnknown) return {el::NameOf(id), length, id};
    constexpr int kSearched = 8;
    int searched = 0;
    for (const std::string& known : unknown_names_) {
      if (++searched > kSearched) break;
      if (known.size() == length && std::memcmp(known.data(), text, length) == 0) {
        return {known.c_str(), length, id};
      }
    }
    const std::string& copy = unknown_names_.emplace_front(text, length);
    return {copy.c_str(), length, id};
  }

  enum class NameResult { kNone, kName, kFail };

  // htmlParseName, for entity names and processing instruction targets: an ASCII name; none at
  // the end of the input; one followed by a byte above 0x7F (where libxml2 reads Unicode
  // letters) fails the parse.
  NameResult ReadName(std::string_view& name) {
    const char* in = p_;
    if (in < end_ && (IsLetter(*in) || *in == '_' || *in == ':')) {
      ++in;
      while (in < end_ && (IsLetter(*in) || IsDigit(*in) || *in == '_' || *in == '-' ||
                           *in == ':' || *in == '.')) {
        ++in;
      }
      if (in == end_) return NameResult::kNone;
      if (static_cast<unsigned char>(*in) >= 0x80) return NameResult::kFail;
      name = std::string_view(p_, static_cast<std::size_t>(in - p_));
      p_ = in;
      return NameResult::kName;
    }
    if (in < end_ && static_cast<unsigned char>(*in) >= 0x80) return NameResult::kFail;
    return NameResult::kNone;
  }

  // --- References ---

  // htmlParseCharRef at "&#": the character, or 0 for none (not an XML character).
  std::uint32_t ReadCharRef() {
    std::uint32_t value = 0;
    if (At(2) == 'x' || At(2) == 'X') {
      p_ += 3;
      for (; p_ < end_ && *p_ != ';'; ++p_) {
        const char c = *p_;
        std::uint32_t digit;
        if (IsDigit(c)) {
          digit = static_cast<std::uint32_t>(c - '0');
        } else if (c >= 'a' && c <= 'f') {
          digit = static_cast<std::uint32_t>(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
          digit = static_cast<std::uint32_t>(c - 'A' + 10);
        } else {
          break;
        }
        if (value < 0x110000) value = value * 16 + digit;
      }
    } else {
      p_ += 2;
      for (; p_ < end_ && *p_ != ';'; ++p_) {
        if (!IsDigit(*p_)) break;
        if (value < 0x110000) value = value * 10 + static_cast<std::uint32_t>(*p_ - '0');
      }
    }
    if (p_ < end_ && *p_ == ';') ++p_;
    return IsXmlChar(value) ? value : 0;
  }

  // An entity reference after its '&': appends what libxml2 makes of it to `out` (its value, or
  // '&' and the name as written).
  void ReadEntity(std::string& out) {
    std::string_view name;
    const NameResult result = ReadName(name);
    if (result == NameResult::kFail) {
      failed_ = true;
      return;
    }
    out += '&';
    if (result == NameResult::kNone) return;
    if (p_ < end_ && *p_ == ';') {
      if (const std::uint32_t value = EntityValue(name); value != 0) {
        ++p_;
        out.pop_back();
        AppendUtf8(out, value);
        return;
      }
    }
    out += name;
  }

  // htmlParseReference: a reference in text.
  void ParseReference() {
    reference_.clear();
    if (At(1) == '#') {
      const std::uint32_t value = ReadCharRef();
      if (value == 0) return;
      AppendUtf8(reference_, value);
    } else {
      ++p_;
      ReadEntity(reference_);
      if (failed_) return;
    }
    CheckParagraph();
    collector_.Characters(reference_.data(), reference_.size());
  }

  // --- Text ---

  // `text` without the characters libxml2 drops from it.
  std::string_view WithoutDropped(std::string_view text) {
    if (!has_dropped_) return text;
    filtered_.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c < 0x80 && IsDroppedAscii(c)) continue;
      if (c == 0xEF && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xBF &&
          (static_cast<unsigned char>(text[i + 2]) == 0xBE ||
           static_cast<unsigned char>(text[i + 2]) == 0xBF)) {
        i += 2;
        continue;
      }
      filtered_ += text[i];
    }
    return filtered_;
  }

  // htmlParseCharData: text up to the next '<' or '&', in libxml2's chunks.
  void ParseCharData() {
    const char* stop = static_cast<const char*>(std::memchr(p_, '<', end_ - p_));
    if (stop == nullptr) stop = end_;
    if (const void* amp = std::memchr(p_, '&', stop - p_)) stop = static_cast<const char*>(amp);
    const std::string_view text = WithoutDropped(std::string_view(p_, stop - p_));
    p_ = stop;
    if (text.empty()) return;
    // Full chunks end after the character holding their 1,000th byte.
    std::size_t last = 0;
    while (text.size() - last >= kTextChunk) {
      std::size_t chunk_end = last + kTextChunk;
      while (chunk_end < text.size() && IsContinuation(text[chunk_end])) ++chunk_end;
      last = chunk_end;
    }
    if (last > 0) {  // Never dropped: libxml2 judges them at their own last byte, a character.
      CheckParagraph();
      collector_.Characters(text.data(), last);
    }
    if (last == text.size()) return;
    const std::string_view tail = text.substr(last);
    bool blanks = true;
    for (const char c : tail) {
      if (!IsBlank(c)) {
        blanks = false;
        break;
      }
    }
    // areBlanks: blanks at the end of the input, or before a tag with no element open or in
    // html or head, are text that implies no p (libxml2 keeps blanks, as its handler for
    // ignorable ones).
    if (!(blanks &&
          (AtEnd() || (*p_ == '<' && (names_.empty() || TopIs(el::kHtml) || TopIs(el::kHead)))))) {
      CheckParagraph();
    }
    collector_.Characters(tail.data(), tail.size());
  }

  // htmlParseScript: a script's or style's content up to "</" and its name.
  void ParseScript() {
    const Name& top = names_.back();
    const char* at = p_;
    for (;;) {
      at = static_cast<const char*>(std::memchr(at, '<', end_ - at));
      if (at == nullptr) {
        at = end_;
        break;
      }
      if (at + 1 < end_ && at[1] == '/' && static_cast<std::size_t>(end_ - at - 2) >= top.length &&
          EqualsIgnoringAsciiCase(std::string_view(at + 2, top.length),
                                  std::string_view(top.text, top.length))) {
        break;
      }
      ++at;
    }
    const std::string_view content = WithoutDropped(std::string_view(p_, at - p_));
    p_ = at;
    if (!content.empty()) collector_.Characters(content.data(), content.size());
  }

  // --- Markup other than elements ---

  bool AtComment() const { return At(0) == '<' && At(1) == '!' && At(2) == '-' && At(3) == '-'; }
  bool AtInstruction() const { return At(0) == '<' && At(1) == '?'; }
  bool AtDoctype() const {
    if (At(0) != '<' || At(1) != '!') return false;
    static constexpr char kDoctype[] = "DOCTYPE";
    for (std::size_t i = 0; i < 7; ++i) {
      char c = At(2 + i);
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c != kDoctype[i]) return false;
    }
    return true;
  }

  void SkipCommentsAndInstructions() {
    while (AtComment() || AtInstruction()) {
      ParseComment();
      ParseInstruction();
      SkipBlanks();
    }
  }

  // htmlParseComment: "<!--" to the first "-->" or "--!>" after it; unterminated, the rest of
  // the input, with no event.
  void ParseComment() {
    if (!AtComment()) return;
    p_ += 4;
    for (const char* at = p_; end_ - at >= 3; ++at) {
      at = static_cast<const char*>(std::memchr(at, '-', end_ - at));
      if (at == nullptr || end_ - at < 3) break;
      if (at[1] != '-') continue;
      if (at[2] == '>') {
        p_ = at + 3;
        collector_.CommentOrInstruction();
        return;
      }
      if (at[2] == '!' && end_ - at >= 4 && at[3] == '>') {
        p_ = at + 4;
        collector_.CommentOrInstruction();
        return;
      }
    }
    p_ = end_;
  }

  // htmlParsePI: "<?", a target name, then to the first '>'.
  void ParseInstruction() {
    if (!AtInstruction()) return;
    p_ += 2;
    std::string_view target;
    const NameResult result = ReadName(target);
    if (result == NameResult::kFail) {
      failed_ = true;
      return;
    }
    if (result == NameResult::kNone) return;  // Not a processing instruction: "<?" is gone.
    if (!AtEnd() && *p_ == '>') {
      ++p_;
      collector_.CommentOrInstruction();
      return;
    }
    SkipBlanks();
    const void* close = std::memchr(p_, '>', end_ - p_);
    if (close == nullptr) {
      p_ = end_;
      return;
    }
    p_ = static_cast<const char*>(close) + 1;
    collector_.CommentOrInstruction();
  }

  // A quoted literal of a doctype, when one starts here; unterminated, the rest of the input.
  void SkipLiteral() {
    if (AtEnd() || (*p_ != '"' && *p_ != '\'')) return;
    const void* close = std::memchr(p_ + 1, *p_, end_ - p_ - 1);
    p_ = close == nullptr ? end_ : static_cast<const char*>(close) + 1;
  }

  bool AtKeyword(const char* upper) const {
    for (std::size_t i = 0; upper[i] != '\0'; ++i) {
      char c = At(i);
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (c != upper[i]) return false;
    }
    return true;
  }

  // htmlParseDocTypeDecl.
  void ParseDoctype() {
    p_ += 9;
    SkipBlanks();
    std::string_view name;
    if (ReadName(name) == NameResult::kFail) {
      failed_ = true;
      return;
    }
    SkipBlanks();
    if (AtKeyword("SYSTEM")) {
      p_ += 6;
      SkipBlanks();
      SkipLiteral();
    } else if (AtKeyword("PUBLIC")) {
      p_ += 6;
      SkipBlanks();
      SkipLiteral();
      SkipBlanks();
      SkipLiteral();
    }
    SkipBlanks();
    const void* close = std::memchr(p_, '>', end_ - p_);
    p_ = close == nullptr ? end_ : static_cast<const char*>(close) + 1;
    collector_.Doctype();
  }

  // --- Tags ---

  // An attribute value (htmlParseAttValue); into `out` when it is kept.
  void ParseValue(std::string* out) {
    const char* stop;
    if (!AtEnd() && (*p_ == '"' || *p_ == '\'')) {
      const char quote = *p_++;
      stop = static_cast<const char*>(std::memchr(p_, quote, end_ - p_));
      if (stop == nullptr) {  // libxml2 reads the rest of the input as the value.
        failed_ = true;
        return;
      }
      if (out != nullptr) Decode(stop, *out);
      p_ = stop + 1;
      return;
    }
    stop = p_;
    while (stop < end_ && !IsBlank(*stop) && *stop != '>') ++stop;
    if (out != nullptr) Decode(stop, *out);
    p_ = stop;
  }

  // htmlParseHTMLAttribute from here to `stop` (references read within it never pass it).
  void Decode(const char* stop, std::string& out) {
    bool ended = false;  // A reference to no character writes NUL: the value ends there.
    while (p_ < stop) {
      const void* amp = std::memchr(p_, '&', stop - p_);
      const char* run_end = amp != nullptr ? static_cast<const char*>(amp) : stop;
      if (!ended) out.append(p_, run_end);
      p_ = run_end;
      if (p_ == stop) break;
      if (At(1) == '#') {
        const std::uint32_t value = ReadCharRef();
        if (value == 0) ended = true;
        if (!ended) AppendUtf8(out, value);
      } else {
        ++p_;
        reference_.clear();
        ReadEntity(reference_);
        if (failed_) return;
        if (!ended) out += reference_;
      }
    }
  }

  // htmlParseStartTag at '<' and a letter: whether the tag was dropped as misplaced.
  bool ParseStartTag() {
    ++p_;
    const std::size_t length = ReadHtmlName(tag_name_);
    if (failed_) return false;
    const Name name = StackName(tag_name_, length);
    AutoClose(name.id);
    CheckImplied(name.id);
    bool dropped = false;
    if (!names_.empty() && name.id == el::kHtml) {
      dropped = true;
      ++dropped_;
    }
    if (names_.size() != 1 && name.id == el::kHead) {
      dropped = true;
      ++dropped_;
    }
    if (name.id == el::kBody) {
      for (const Name& open : names_) {
        if (open.id == el::kBody) {
          dropped = true;
          ++dropped_;
        }
      }
    }
    bool kept[kKeptCount] = {};
    SkipBlanks();
    while (!AtEnd() && *p_ != '>' && !(*p_ == '/' && At(1) == '>')) {
      const std::size_t attribute_length = ReadHtmlName(attribute_name_);
      if (failed_) return false;
      if (attribute_length == 0) {
        // A bogus attribute: dropped up to the next blank or the end of the tag.
        while (!AtEnd() && !IsBlank(*p_) && *p_ != '>' && !(*p_ == '/' && At(1) == '>')) ++p_;
      } else {
        const std::string_view attribute(attribute_name_, attribute_length);
        int slot = -1;
        if (attribute == "href") slot = kHref;
        if (attribute == "src") slot = kSrc;
        if (attribute == "alt") slot = kAlt;
        std::string* out = nullptr;
        if (slot >= 0 && !kept[slot]) {
          kept[slot] = true;
          values_[slot].clear();
          out = &values_[slot];
        }
        SkipBlanks();
        if (!AtEnd() && *p_ == '=') {
          ++p_;
          SkipBlanks();
          ParseValue(out);
          if (failed_) return false;
        }
      }
      SkipBlanks();
    }
    if (!dropped) {
      const char* attributes[2 * kKeptCount + 2];
      std::size_t n = 0;
      static constexpr const char* kKeptNames[] = {"href", "src", "alt"};
      for (int slot = 0; slot < kKeptCount; ++slot) {
        if (!kept[slot]) continue;
        attributes[n++] = kKeptNames[slot];
        attributes[n++] = values_[slot].c_str();
      }
      attributes[n] = nullptr;
      attributes[n + 1] = nullptr;
      Push(name, n > 0 ? attributes : nullptr);
    }
    return dropped;
  }

  // htmlParseElementInternal: a start tag, and its end where the tag or the element says so.
  void ParseElement() {
    ParseStartTag();
    if (failed_) return;
    if (names_.empty()) {
      if (!AtEnd() && *p_ == '>') ++p_;
      return;
    }
    if (!AtEnd() && *p_ == '/' && At(1) == '>') {
      p_ += 2;
      Pop();  // The innermost element, also when the tag itself was dropped.
      return;
    }
    if (!AtEnd() && *p_ == '>') {
      ++p_;
      if (names_.back().id != el::kUnknown && el::IsEmpty(names_.back().id)) Pop();
      return;
    }
    // The input ended inside the tag: libxml2 takes the element off its stack without an event,
    // then ends the rest.
    names_.pop_back();
    CloseAll();
  }

  // htmlParseEndTag at "</": whether it ended the element of its name.
  bool ParseEndTag() {
    p_ += 2;
    const std::size_t length = ReadHtmlName(tag_name_);
    if (failed_ || length == 0) return false;
    SkipBlanks();
    if (AtEnd() || *p_ != '>') {
      const void* close = std::memchr(p_, '>', end_ - p_);
      p_ = close == nullptr ? end_ : static_cast<const char*>(close);
    }
    if (!AtEnd() && *p_ == '>') ++p_;
    const Name name{tag_name_, length, el::IdOf(std::string_view(tag_name_, length))};
    if (dropped_ > 0 && (name.id == el::kHtml || name.id == el::kBody || name.id == el::kHead)) {
      --dropped_;
      return false;
    }
    std::size_t i = names_.size();
    while (i > 0 && !(names_[i - 1] == name)) --i;
    if (i == 0) return false;  // Not open: dropped.
    // htmlAutoCloseOnClose: the elements above it end unless one has a higher priority.
    const int priority = el::EndPriority(name.id);
    for (std::size_t j = names_.size(); j > i; --j) {
      if (el::EndPriority(names_[j - 1].id) > priority) return false;
    }
    while (!(names_.back() == name)) Pop();
    Pop();
    return true;
  }

  // htmlParseContentInternal.
  void ParseContent() {
    // The element libxml2 last saw begin or end ("currentNode"), and the depth then.
    std::optional<Name> current;
    std::size_t depth = 0;
    const auto note_current = [&] {
      current = names_.empty() ? std::nullopt : std::optional<Name>(names_.back());
      depth = names_.size();
    };
    while (!failed_) {
      if (At(0) == '<' && At(1) == '/') {
        if (ParseEndTag() && (current.has_value() || names_.empty())) note_current();
        continue;
      }
      if (At(0) == '<' && (IsLetter(At(1)) || At(1) == '_' || At(1) == ':')) {
        // htmlParseHTMLName_nonInvasive: the name without '.', for the implied end tags.
        char lower[kNameLimit];
        std::size_t length = 0;
        for (char c = At(1); IsLetter(c) || IsDigit(c) || c == ':' || c == '-' || c == '_';
             c = At(1 + length)) {
          if (length == kNameLimit - 1) {
            failed_ = true;
            return;
          }
          lower[length++] = AsciiLower(c);
        }
        if (!names_.empty() && names_.back().id != el::kUnknown) {
          const el::ElementId id = el::IdOf(std::string_view(lower, length));
          if (id != el::kUnknown && el::StartEnds(id, names_.back().id)) {
            AutoClose(id);
            continue;
          }
        }
      }
      if (!names_.empty() && depth >= names_.size() &&
          !(current.has_value() && *current == names_.back())) {
        note_current();
        if (AtEnd()) CloseAll();
        continue;
      }
      if (!AtEnd() && current.has_value() &&
          (current->id == el::kScript || current->id == el::kStyle)) {
        if (names_.empty() || !(names_.back() == *current)) {
          failed_ = true;
          return;
        }
        ParseScript();
        continue;
      }
      if (AtDoctype()) ParseDoctype();
      if (failed_) return;
      if (AtComment()) {
        ParseComment();
      } else if (AtInstruction()) {
        ParseInstruction();
      } else if (At(0) == '<' && IsLetter(At(1))) {
        ParseElement();
        note_current();
      } else if (At(0) == '<') {
        collector_.Characters("<", 1);
        ++p_;
      } else if (At(0) == '&') {
        ParseReference();
      } else if (AtEnd()) {
        CloseAll();
        return;
      } else {
        ParseCharData();
      }
    }
  }

  const char* p_;
  const char* const end_;
  const bool has_dropped_;
  HtmlTextCollector& collector_;
  bool failed_ = false;
  std::vector<Name> names_;
  int html_ = 1;     // libxml2's ctxt->html: 3 once a head was open, 10 once a body was.
  int dropped_ = 0;  // libxml2's ctxt->depth: misplaced html, head and body start tags dropped.
  std::forward_list<std::string> unknown_names_;  // Stable: a name stays where it was put.
  char tag_name_[kNameLimit + 1];
  char attribute_name_[kNameLimit + 1];
  std::string values_[kKeptCount];
  std::string reference_;
  std::string filtered_;
};

}  // namespace

bool ParseHtmlFast(std::string_view html, HtmlTextCollector& collector) {
  bool has_dropped = false;
  if (!CheckInput(html, has_dropped)) return false;
  if (html.empty()) return true;
  return Parser(html, has_dropped, collector).Run();
}

}  // namespace nbspamd::tokenizer
