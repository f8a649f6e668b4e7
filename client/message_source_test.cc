#include "client/message_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <stop_token>
#include <string>

#include "tests/support/temp_dir.h"

namespace nbspamd::client {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

void Write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// Every message of `paths`: path (relative to `root`) → body, or "error: ..." for failures.
std::map<std::string, std::string> ReadAll(const fs::path& root, std::vector<fs::path> paths,
                                           std::size_t limit = 1 << 20) {
  MessageSource source(std::move(paths), limit);
  std::map<std::string, std::string> messages;
  while (auto message = source.Next()) {
    const std::string name = fs::path(message->path).lexically_relative(root).generic_string();
    messages[name] = message->error ? "error: " + *message->error : message->body;
  }
  return messages;
}

TEST(MessageSourceTest, WalksADirectoryRecursivelySkippingHiddenFiles) {
  TempDir dir;
  Write(dir.path() / "a.eml", "Subject: a\n\na\n");
  Write(dir.path() / "sub" / "deeper" / "b", "Subject: b\n\nb\n");
  Write(dir.path() / ".hidden", "not a message");
  EXPECT_THAT(ReadAll(dir.path(), {dir.path()}),
              UnorderedElementsAre(Pair("a.eml", "Subject: a\n\na\n"),
                                   Pair("sub/deeper/b", "Subject: b\n\nb\n")));
}

TEST(MessageSourceTest, ReadsCurAndNewOfAMaildirAndNothingElse) {
  TempDir dir;
  const fs::path maildir = dir.path() / "Maildir";
  Write(maildir / "cur" / "1.host:2,S", "Subject: seen\n\n");
  Write(maildir / "new" / "2.host", "Subject: new\n\n");
  Write(maildir / "tmp" / "3.host", "Subject: half delivered\n\n");
  Write(maildir / "dovecot-uidlist", "3 V1 N4\n");
  Write(maildir / ".Sent" / "cur" / "4.host", "Subject: sent\n\n");
  EXPECT_TRUE(IsMaildir(maildir));
  EXPECT_THAT(ReadAll(dir.path(), {maildir}),
              UnorderedElementsAre(Pair("Maildir/cur/1.host:2,S", "Subject: seen\n\n"),
                                   Pair("Maildir/new/2.host", "Subject: new\n\n")));
  // A Maildir inside a directory is read the same way.
  EXPECT_EQ(ReadAll(dir.path(), {dir.path()}).size(), 2u);
}

TEST(MessageSourceTest, SplitsMboxFilesFoundAnywhere) {
  TempDir dir;
  Write(dir.path() / "inbox.mbox", "From a\nSubject: 1\n\n\nFrom b\nSubject: 2\n\n");
  Write(dir.path() / "box" / "old", "From c\nSubject: 3\n");
  const std::string mbox = (dir.path() / "inbox.mbox").string();
  EXPECT_THAT(ReadAll(dir.path(), {mbox}), ElementsAre(Pair("inbox.mbox#1", "Subject: 1\n\n"),
                                                       Pair("inbox.mbox#2", "Subject: 2\n")));
  EXPECT_THAT(ReadAll(dir.path(), {dir.path()}),
              UnorderedElementsAre(Pair("box/old#1", "Subject: 3\n"),
                                   Pair("inbox.mbox#1", "Subject: 1\n\n"),
                                   Pair("inbox.mbox#2", "Subject: 2\n")));
}

TEST(MessageSourceTest, MissingAndTooLargeFilesFailAloneAndTheRestIsRead) {
  TempDir dir;
  Write(dir.path() / "big", std::string(200, 'x'));
  Write(dir.path() / "small", "ok");
  const auto messages =
      ReadAll(dir.path(), {dir.path() / "missing", dir.path() / "big", dir.path() / "small"}, 100);
  EXPECT_THAT(messages, UnorderedElementsAre(
                            Pair("missing", "error: no such file or directory"),
                            Pair("big", ::testing::HasSubstr("200 bytes, over the limit of 100")),
                            Pair("small", "ok")));
}

TEST(MessageSourceTest, TotalInputBytesAddsTheSizesOfTheFilesItWouldRead) {
  TempDir dir;
  Write(dir.path() / "a", std::string(10, 'a'));
  Write(dir.path() / "d" / "b", std::string(20, 'b'));
  Write(dir.path() / "d" / ".skip", std::string(40, 'c'));
  Write(dir.path() / "m" / "cur" / "c", std::string(5, 'c'));
  Write(dir.path() / "m" / "new" / "n", std::string(6, 'c'));
  Write(dir.path() / "m" / "tmp" / "t", std::string(80, 'c'));
  std::stop_source stop;
  EXPECT_EQ(
      TotalInputBytes({dir.path() / "a", dir.path() / "d", dir.path() / "m"}, stop.get_token()),
      41u);
  stop.request_stop();
  EXPECT_EQ(TotalInputBytes({dir.path() / "d"}, stop.get_token()), std::nullopt);
}

}  // namespace
}  // namespace nbspamd::client
