#include "tokenizer/plain_message.h"

#include <gmime/gmime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/mail_reader.h"

namespace nbspamd::tokenizer {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields Named(const std::vector<PlainField>& fields) {
  Fields named;
  for (const PlainField& field : fields) {
    named.emplace_back(std::string(field.name), std::string(field.raw_value));
  }
  return named;
}

TEST(PlainMessageTest, SplitsFieldsWithTheirRawValuesAndTheBody) {
  const std::string message =
      "From: a@example.org\r\nSubject:  two\r\n  lines \r\nX-Empty:\r\n"
      "Content-Type: text/plain;\r\n charset=us-ascii\r\ncontent-transfer-encoding: 7bit\r\n"
      "ContentX: not a content field\r\n\r\nbody\r\n\r\nmore\r\n";
  const std::optional<PlainMessage> plain = SplitPlainMessage(message);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(Named(plain->fields), (Fields{{"From", " a@example.org\r\n"},
                                          {"Subject", "  two\r\n  lines \r\n"},
                                          {"X-Empty", "\r\n"},
                                          {"ContentX", " not a content field\r\n"}}));
  EXPECT_EQ(Named(plain->content_fields),
            (Fields{{"Content-Type", " text/plain;\r\n charset=us-ascii\r\n"},
                    {"content-transfer-encoding", " 7bit\r\n"}}));
  EXPECT_EQ(plain->body, "body\r\n\r\nmore\r\n");

  const std::optional<PlainMessage> empty_body = SplitPlainMessage("Subject: s\n\n");
  ASSERT_TRUE(empty_body.has_value());
  EXPECT_EQ(Named(empty_body->fields), (Fields{{"Subject", " s\n"}}));
  EXPECT_EQ(empty_body->body, "");
}

TEST(PlainMessageTest, AnythingGMimeMightReadOtherwiseIsNotPlain) {
  for (const std::string& message : {
           std::string("Subject: no empty line\n"),
           std::string("Subject: no line break at all"),
           std::string("From someone@example.org Mon Jan  1 00:00:00 2024\nSubject: s\n\nb\n"),
           std::string(" fold: first\nSubject: s\n\nb\n"),
           std::string("Subject: s\n \t \nX: y\n\nb\n"),  // A fold of white space only.
           std::string("Subject : space before the colon\n\nb\n"),
           std::string(":no name\n\nb\n"),
           std::string("Subject: bare\rCR\n\nb\n"),
           std::string("Subject: CR CR\r\r\n\nb\n"),
           std::string("Subject: nul\0byte\n\nb\n", 22),
           std::string("Subject: del\x7f\n\nb\n"),
           std::string("Subject: s\nnot a field\n\nb\n"),
       }) {
    EXPECT_FALSE(SplitPlainMessage(message).has_value()) << message;
  }
  // A tab inside a value, a lone '=' or '?', a field name of any printable bytes: plain.
  EXPECT_TRUE(SplitPlainMessage("X-[odd]~name: a\tb = c ? d\n\nb\n").has_value());
  // 8-bit text and encoded words: plain too (the reader decodes them with GMime's decoder).
  EXPECT_TRUE(SplitPlainMessage("Subject: caf\xc3\xa9 \xff\n\nb\n").has_value());
  const std::optional<PlainMessage> encoded =
      SplitPlainMessage("Subject: =?utf-8?q?encoded?=\n =?x\n\nb\n");
  ASSERT_TRUE(encoded.has_value());
  ASSERT_EQ(encoded->fields.size(), 1u);
  EXPECT_EQ(encoded->fields[0].raw_value, " =?utf-8?q?encoded?=\n =?x\n");
}

// The byte rule of a plain line, checked eight bytes at a time, against its definition byte by
// byte: random values of every byte but CR and LF, stop bytes at every offset of the words.
TEST(PlainMessageTest, EveryByteOfAValueIsCheckedWhereverItStands) {
  std::mt19937 random(20261207);
  std::size_t plain = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string value;
    const std::size_t length = random() % 40;
    for (std::size_t i = 0; i < length; ++i) {
      // Mostly text, now and then any byte, a tab, '=' or '?' ("=?" is plain), DEL, a control
      // byte or an 8-bit one.
      const unsigned pick = random() % 64;
      char c = static_cast<char>('a' + random() % 26);
      if (pick == 0) c = static_cast<char>(random() % 256);
      if (pick == 1) c = '\t';
      if (pick == 2) c = '=';
      if (pick == 3) c = '?';
      if (pick == 4) c = '\x7f';
      if (pick == 5) c = static_cast<char>(random() % 32);
      if (pick == 6) c = static_cast<char>(0x80 + random() % 128);
      if (c == '\r' || c == '\n') c = 'x';
      value += c;
    }
    bool expected = true;
    for (char c : value) {
      const auto byte = static_cast<unsigned char>(c);
      if ((byte < 32 && c != '\t') || byte == 127) expected = false;
    }
    // A value of blanks only is still a field's line: "X:" starts it.
    const std::string message = "X:" + value + "\n\nbody\n";
    ASSERT_EQ(SplitPlainMessage(message).has_value(), expected) << round;
    plain += expected ? 1 : 0;
  }
  EXPECT_GT(plain, 2000u);
  EXPECT_LT(plain, 18000u);  // Both answers, many times each.
}

// What GMime's parser makes of `message`: the message's fields, its body part's fields and where
// the body part's content starts.
struct GMimeView {
  Fields fields;
  Fields content_fields;
  std::string content;
};

GMimeView ParseWithGMime(const std::string& message) {
  InitializeMailReader();  // g_mime_init.
  GMimeView view;
  GMimeStream* stream = g_mime_stream_mem_new_with_buffer(message.data(), message.size());
  GMimeParser* parser = g_mime_parser_new_with_stream(stream);
  GMimeMessage* mail = g_mime_parser_construct_message(parser, nullptr);
  if (mail != nullptr) {
    const auto read = [](GMimeObject* object, Fields& fields) {
      GMimeHeaderList* headers = g_mime_object_get_header_list(object);
      for (int i = 0; i < g_mime_header_list_get_count(headers); ++i) {
        GMimeHeader* header = g_mime_header_list_get_header_at(headers, i);
        fields.emplace_back(g_mime_header_get_name(header), g_mime_header_get_raw_value(header));
      }
    };
    read(GMIME_OBJECT(mail), view.fields);
    if (GMimeObject* body = g_mime_message_get_mime_part(mail); body != nullptr) {
      read(body, view.content_fields);
      if (GMIME_IS_PART(body)) {
        GMimeStream* content =
            g_mime_data_wrapper_get_stream(g_mime_part_get_content(GMIME_PART(body)));
        GByteArray* bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(content));
        view.content.assign(reinterpret_cast<const char*>(bytes->data) + content->bound_start,
                            static_cast<std::size_t>(content->bound_end - content->bound_start));
      }
    }
    g_object_unref(mail);
  }
  g_object_unref(parser);
  g_object_unref(stream);
  return view;
}

// Every plain message split as GMime's parser splits it: names, raw values (the reader parses
// addresses and types from them, as GMime does) and the body part's content.
TEST(PlainMessageTest, GMimeSplitsEveryPlainMessageTheSameWay) {
  std::mt19937 random(20261206);
  const std::vector<std::string> names = {"From",
                                          "To",
                                          "Cc",
                                          "Subject",
                                          "X-Mailer",
                                          "Content-Type",
                                          "content-transfer-encoding",
                                          "Content-Disposition",
                                          "Content-X",
                                          "Message-Id",
                                          "Received",
                                          "X-A",
                                          "ContentY",
                                          "A:B",
                                          "~"};
  const std::string value_bytes = "ab <>@.,;:\"()\t=?\\x";
  std::size_t plain_messages = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string eol = random() % 2 == 0 ? "\n" : "\r\n";
    std::string message;
    const int fields = 1 + static_cast<int>(random() % 6);
    for (int f = 0; f < fields; ++f) {
      message += names[random() % names.size()] + ":";
      const int lines = 1 + static_cast<int>(random() % 3);
      for (int l = 0; l < lines; ++l) {
        if (l > 0) message += eol + (random() % 2 == 0 ? " " : "\t");
        const int length = static_cast<int>(random() % 12);
        for (int i = 0; i < length; ++i) message += value_bytes[random() % value_bytes.size()];
      }
      message += eol;
    }
    message += eol + "body line" + eol + "last";
    const std::optional<PlainMessage> plain = SplitPlainMessage(message);
    if (!plain.has_value()) continue;
    ++plain_messages;
    const GMimeView gmime = ParseWithGMime(message);
    ASSERT_EQ(Named(plain->fields), gmime.fields) << message;
    ASSERT_EQ(Named(plain->content_fields), gmime.content_fields) << message;
    ASSERT_EQ(plain->body, gmime.content) << message;
  }
  EXPECT_GT(plain_messages, 1000u);  // The check ran on many, not on a few.
}

TEST(PlainMessageTest, UnfoldedValueIsGMimesUnfolding) {
  std::mt19937 random(6122026);
  const std::string bytes = " \t\r\nab=?";
  for (int round = 0; round < 5000; ++round) {
    std::string raw;
    const int length = static_cast<int>(random() % 14);
    for (int i = 0; i < length; ++i) raw += bytes[random() % bytes.size()];
    char* unfolded = g_mime_utils_header_unfold(raw.c_str());
    ASSERT_EQ(UnfoldedValue(raw), unfolded) << "[" << raw << "]";
    g_free(unfolded);
  }
}

}  // namespace
}  // namespace nbspamd::tokenizer
