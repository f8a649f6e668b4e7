#include "tokenizer/simple_addresses.h"

#include <gmime/gmime.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace nbspamd::tokenizer {
namespace {

TEST(SimpleAddressesTest, ReadsTheCommonForms) {
  const std::optional<std::vector<SimpleAddress>> list = ParseSimpleAddressList(
      " John Smith <John@Example.COM>, \"Smith, Jane\" <jane@example.org>,\r\n bob@example.net,"
      " <eve@example.com>\r\n");
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].name, "John Smith");
  EXPECT_EQ((*list)[0].addr, "John@Example.COM");
  EXPECT_EQ((*list)[1].name, "Smith, Jane");
  EXPECT_EQ((*list)[2].name, "");
  EXPECT_EQ((*list)[2].addr, "bob@example.net");
  EXPECT_EQ((*list)[3].name, "");
  EXPECT_EQ((*list)[3].addr, "eve@example.com");
}

TEST(SimpleAddressesTest, LeavesEverythingElseToGMime) {
  for (const char* value : {"",
                            " ",
                            "john",
                            "John <john>",
                            "john@example.com (John)",
                            "undisclosed-recipients:;",
                            "a@b.com,",
                            ", a@b.com",
                            "a@b.com,, c@d.com",
                            "john..doe@x.com",
                            "@x.com",
                            "john@",
                            "user@xn--bcher-kva.example",
                            "u@[192.0.2.1]",
                            "\"a\\\"b\" <a@b.com>",
                            "=?utf-8?q?J?= <j@x.com>",
                            "\"J\" Smith <j@x.com>",
                            "J <j@x.com> x",
                            "< j@x.com >",
                            "caf\xC3\xA9 <c@x.com>",
                            "\"J <j@x.com>"}) {
    EXPECT_FALSE(ParseSimpleAddressList(value).has_value()) << value;
  }
}

std::string PickAddressPiece(std::mt19937& random, const std::vector<std::string>& pieces) {
  return pieces[random() % pieces.size()];
}

// A random address list made of the pieces real and broken mail use.
std::string RandomList(std::mt19937& random) {
  static const std::vector<std::string> kNames = {"John Smith",     "\"Smith, John\"",
                                                  "\"\"",           "J. Smith",
                                                  "John  Smith",    "John\tSmith",
                                                  "John\r\n Smith", "John\n\tSmith",
                                                  "O'Brien",        "A&B",
                                                  "\"John\" Smith", ".J",
                                                  "John.",          "x..y",
                                                  "\"a b\"",        "\"J\r\n S\"",
                                                  "Dr. No",         "no-reply",
                                                  "\"(x)\"",        "a=b"};
  static const std::vector<std::string> kAddrs = {"john@example.com",
                                                  "John@Example.COM",
                                                  "a+b@x.com",
                                                  "john.doe@x.com",
                                                  "john..doe@x.com",
                                                  "john@x",
                                                  "@x.com",
                                                  "john@",
                                                  "john",
                                                  ".j@x.com",
                                                  "j.@x.com",
                                                  "user@xn--bcher-kva.example",
                                                  "u@sub.-x.com",
                                                  "u@x-.com",
                                                  "u@.x.com",
                                                  "u@x.com.",
                                                  "u@x..com",
                                                  "o'b@x.com",
                                                  "u@XN--x.com",
                                                  "u_1@mail-2.example.co.uk"};
  static const std::vector<std::string> kSeparators = {", ", ",",    " , ",   ",\r\n ",
                                                       ",,", "\n, ", ",\n\t", " ,"};
  static const std::vector<std::string> kOdd = {" (comment)", " x", "group:;", ";", "\"",
                                                "<",          ">",  "[1]",     "\\"};
  std::string value = random() % 2 == 0 ? " " : "";
  const int addresses = 1 + static_cast<int>(random() % 3);
  for (int i = 0; i < addresses; ++i) {
    if (i > 0) value += PickAddressPiece(random, kSeparators);
    const std::string addr = PickAddressPiece(random, kAddrs);
    switch (random() % 5) {
      case 0:
        value += addr;
        break;
      case 1:
        value += "<" + addr + ">";
        break;
      case 2:
        value += PickAddressPiece(random, kNames) + "<" + addr + ">";
        break;
      default:
        value += PickAddressPiece(random, kNames) + (random() % 3 == 0 ? "\r\n " : " ") + "<" +
                 addr + ">";
        break;
    }
    if (random() % 20 == 0) value += PickAddressPiece(random, kOdd);
  }
  if (random() % 8 == 0) value += PickAddressPiece(random, kSeparators);
  value += random() % 2 == 0 ? "\r\n" : "\n";
  return value;
}

struct UnrefAddressList {
  void operator()(gpointer object) const { g_object_unref(object); }
};

// Where the shortcut reads a list, GMime's parser gives as many addresses, each a mailbox with
// the same name and address.
TEST(SimpleAddressesTest, RandomListsAreReadAsGMimeReadsThem) {
  g_mime_init();
  std::mt19937 random(8122026);
  int read = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string value = RandomList(random);
    const std::optional<std::vector<SimpleAddress>> simple = ParseSimpleAddressList(value);
    if (!simple.has_value()) continue;
    ++read;
    const std::unique_ptr<InternetAddressList, UnrefAddressList> gmime(
        internet_address_list_parse(nullptr, value.c_str()));
    ASSERT_NE(gmime, nullptr) << value;
    ASSERT_EQ(static_cast<std::size_t>(internet_address_list_length(gmime.get())), simple->size())
        << value;
    for (std::size_t i = 0; i < simple->size(); ++i) {
      InternetAddress* address =
          internet_address_list_get_address(gmime.get(), static_cast<int>(i));
      ASSERT_TRUE(INTERNET_ADDRESS_IS_MAILBOX(address)) << value;
      const char* name = internet_address_get_name(address);
      const char* addr = internet_address_mailbox_get_addr(INTERNET_ADDRESS_MAILBOX(address));
      ASSERT_NE(name, nullptr) << value;
      ASSERT_NE(addr, nullptr) << value;
      ASSERT_EQ(name, (*simple)[i].name) << "[" << value << "] address " << i;
      ASSERT_EQ(addr, (*simple)[i].addr) << "[" << value << "] address " << i;
    }
  }
  EXPECT_GT(read, 2000);  // The shortcut read many, not a few.
}

}  // namespace
}  // namespace nbspamd::tokenizer
