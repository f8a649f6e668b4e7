#include "tokenizer/simple_field_value.h"

#include <gmime/gmime.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tokenizer/ascii.h"

namespace nbspamd::tokenizer {
namespace {

std::optional<std::string> Owned(std::optional<std::string_view> value) {
  if (!value.has_value()) return std::nullopt;
  return std::string(*value);
}

std::optional<std::string> Owned(const char* value) {
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

TEST(SimpleFieldValueTest, ReadsTheCommonForms) {
  const std::optional<SimpleFieldValue> type =
      ParseSimpleFieldValue("Text/Plain; CharSet=\"US-ASCII\" ;format=flowed;", true);
  ASSERT_TRUE(type.has_value());
  EXPECT_EQ(type->type, "Text");
  EXPECT_EQ(type->subtype, "Plain");
  EXPECT_EQ(Owned(type->Find("charset")), "US-ASCII");
  EXPECT_EQ(Owned(type->Find("FORMAT")), "flowed");
  EXPECT_EQ(Owned(type->Find("boundary")), std::nullopt);

  const std::optional<SimpleFieldValue> multipart =
      ParseSimpleFieldValue("multipart/alternative;\tboundary=\"----=_NextPart_000\"", true);
  ASSERT_TRUE(multipart.has_value());
  EXPECT_EQ(Owned(multipart->Find("boundary")), "----=_NextPart_000");

  const std::optional<SimpleFieldValue> disposition =
      ParseSimpleFieldValue("attachment; filename=\"report 2026.pdf\"", false);
  ASSERT_TRUE(disposition.has_value());
  EXPECT_EQ(disposition->type, "attachment");
  EXPECT_EQ(disposition->subtype, "");
  EXPECT_EQ(Owned(disposition->Find("filename")), "report 2026.pdf");
  EXPECT_TRUE(ParseSimpleFieldValue("inline", false).has_value());
}

TEST(SimpleFieldValueTest, LeavesEverythingElseToGMime) {
  for (const char* type : {"text",
                           "text/",
                           "/plain",
                           "text /plain",
                           "text/ plain",
                           "text/plain x",
                           "text/plain; charset",
                           "text/plain; charset=",
                           "text/plain; charset=\"\"",
                           "text/plain; =x",
                           "text/plain; charset = x",
                           "text/plain; a=b c",
                           "text/plain; a=b/c",
                           "text/plain; a=\"b\\\"c\"",
                           "text/plain; a*=x",
                           "text/plain; a*0=x",
                           "text/plain; a=\"=?utf-8?q?x?=\"",
                           "text/plain; a=x; A=y",
                           "text/plain;; a=x",
                           "text/plain; a=x;;",
                           "text/plain; a=\"x",
                           "text/plain; a=x (comment)",
                           "text/plain; a=\"caf\xC3\xA9\"",
                           "text/plain\x01",
                           ""}) {
    EXPECT_FALSE(ParseSimpleFieldValue(type, true).has_value()) << type;
  }
  EXPECT_FALSE(ParseSimpleFieldValue("attachment/pdf", false).has_value());
}

// One of `pieces`, at random.
std::string PickValuePiece(std::mt19937& random, const std::vector<std::string>& pieces) {
  return pieces[random() % pieces.size()];
}

// A random value made of the pieces real mail and broken mail use.
std::string RandomValue(std::mt19937& random, bool with_subtype) {
  static const std::vector<std::string> kTypes = {"text/plain",
                                                  "Text/HTML",
                                                  "multipart/mixed",
                                                  "multipart/alternative",
                                                  "application/pdf",
                                                  "image/gif",
                                                  "text",
                                                  "text/",
                                                  "/plain",
                                                  "text /plain",
                                                  "text/ plain",
                                                  "x-y/z.w+v",
                                                  "text/*"};
  static const std::vector<std::string> kDispositions = {
      "attachment", "Attachment", "inline", "INLINE", "form-data", "attachment/x", "", "a b"};
  static const std::vector<std::string> kSeparators = {"; ", ";",  " ;",  ";\t", ";;",
                                                       " ",  "; ", ";  ", "\t;"};
  static const std::vector<std::string> kNames = {
      "charset", "CHARSET", "Charset", "boundary", "name",  "filename", "format",
      "a*",      "name*0",  "x-y",     "",         "delsp", "type",     "size"};
  static const std::vector<std::string> kEquals = {"=", "=", "=", " = ", " =", "= "};
  static const std::vector<std::string> kValues = {"us-ascii",
                                                   "ISO-8859-1",
                                                   "\"utf-8\"",
                                                   "----=_NextPart_000",
                                                   "\"----=_Next_01\"",
                                                   "b/c",
                                                   "\"\"",
                                                   "\"a\\\"b\"",
                                                   "\"=?utf-8?q?x?=\"",
                                                   "'x'",
                                                   "x (c)",
                                                   "x y=z",
                                                   "\"a b.txt\"",
                                                   "\"a;b\"",
                                                   "report.pdf",
                                                   "\"x",
                                                   "",
                                                   "\"tab\there\"",
                                                   "flowed",
                                                   "\"caf\xC3\xA9\"",
                                                   "1.2",
                                                   "\"(not a comment)\"",
                                                   "x@y",
                                                   "\"x@y\""};
  std::string value =
      with_subtype ? PickValuePiece(random, kTypes) : PickValuePiece(random, kDispositions);
  const int parameters = static_cast<int>(random() % 4);
  for (int i = 0; i < parameters; ++i) {
    value += PickValuePiece(random, kSeparators) + PickValuePiece(random, kNames) +
             PickValuePiece(random, kEquals) + PickValuePiece(random, kValues);
  }
  if (random() % 4 == 0) value += PickValuePiece(random, kSeparators);
  return value;
}

struct UnrefFieldValue {
  void operator()(gpointer object) const { g_object_unref(object); }
};

// Where the shortcut reads a value, GMime's parser gives the same type, subtype and parameters.
TEST(SimpleFieldValueTest, RandomValuesAreReadAsGMimeReadsThem) {
  g_mime_init();
  std::mt19937 random(7122026);
  const std::vector<std::string> kProbes = {"charset", "boundary", "name", "filename", "format",
                                            "x-y",     "delsp",    "type", "size",     "a"};
  int read = 0;
  for (int round = 0; round < 20000; ++round) {
    const bool with_subtype = round % 2 == 0;
    const std::string value = RandomValue(random, with_subtype);
    const std::optional<SimpleFieldValue> simple = ParseSimpleFieldValue(value, with_subtype);
    if (!simple.has_value()) continue;
    ++read;
    std::vector<std::string> names = kProbes;
    for (const SimpleFieldValue::Parameter& parameter : simple->parameters) {
      names.emplace_back(parameter.name);
    }
    if (with_subtype) {
      const std::unique_ptr<GMimeContentType, UnrefFieldValue> gmime(
          g_mime_content_type_parse(nullptr, value.c_str()));
      ASSERT_NE(gmime, nullptr) << value;
      ASSERT_EQ(Owned(g_mime_content_type_get_media_type(gmime.get())), simple->type) << value;
      ASSERT_EQ(Owned(g_mime_content_type_get_media_subtype(gmime.get())), simple->subtype)
          << value;
      for (const std::string& name : names) {
        ASSERT_EQ(Owned(g_mime_content_type_get_parameter(gmime.get(), name.c_str())),
                  Owned(simple->Find(name)))
            << value << " / " << name;
      }
    } else {
      const std::unique_ptr<GMimeContentDisposition, UnrefFieldValue> gmime(
          g_mime_content_disposition_parse(nullptr, value.c_str()));
      ASSERT_NE(gmime, nullptr) << value;
      ASSERT_EQ(Owned(g_mime_content_disposition_get_disposition(gmime.get())), simple->type)
          << value;
      // What the mail reader asks of a disposition (mail_reader.cc).
      ASSERT_EQ(g_mime_content_disposition_is_attachment(gmime.get()) != FALSE,
                EqualsIgnoringAsciiCase(simple->type, "attachment"))
          << value;
      for (const std::string& name : names) {
        ASSERT_EQ(Owned(g_mime_content_disposition_get_parameter(gmime.get(), name.c_str())),
                  Owned(simple->Find(name)))
            << value << " / " << name;
      }
    }
  }
  EXPECT_GT(read, 2000);  // The shortcut read many, not a few.
}

}  // namespace
}  // namespace nbspamd::tokenizer
