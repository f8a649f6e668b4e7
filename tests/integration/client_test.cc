// Integration tests of nbspamc: the real client binary, run as a subprocess, against the real
// nbspamd on 127.0.0.1 with an ephemeral port and a RocksDB model in a temp folder.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_text.h"

namespace nbspamd::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "client-test-secret-0123456789";

// How nbspamc ended.
struct ClientExit {
  int status = -1;
  std::string out;
  std::string err;
};

using test_support::ReadFile;

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << content;
}

// Runs nbspamc with `args`, `input` on standard input and `env` added to the environment (and
// NBSPAMC_* removed unless given), at most `timeout`.
ClientExit RunClient(const std::vector<std::string>& args, const std::string& input = "",
                     const std::map<std::string, std::string>& env = {},
                     std::chrono::seconds timeout = std::chrono::seconds(60)) {
  TempDir io;
  const std::string in_path = io.Join("in"), out_path = io.Join("out"), err_path = io.Join("err");
  WriteFile(in_path, input);
  std::vector<std::string> argv_strings = {NBSPAMC_BINARY};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    unsetenv("NBSPAMC_SERVER");
    unsetenv("NBSPAMC_TOKEN");
    unsetenv("NBSPAMC_TIMEOUT");
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const int in = open(in_path.c_str(), O_RDONLY);
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ClientExit exit;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  exit.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  exit.out = ReadFile(out_path);
  exit.err = ReadFile(err_path);
  return exit;
}

std::string Mail(const std::string& subject, const std::string& body) {
  return "From: someone@example.org\nSubject: " + subject + "\n\n" + body + "\n";
}

std::string SpamMail(int i) {
  return Mail(
      "cheap pills " + std::to_string(i),
      "buy viagra now, cheap pills, casino bonus, click here to win money " + std::to_string(i));
}

std::string HamMail(int i) {
  return Mail(
      "meeting notes " + std::to_string(i),
      "the project meeting is on friday, lunch after, see the report draft " + std::to_string(i));
}

// The number of documents of `label` in the daemon's /stats (or in the stats at `path`, such as
// a user's /users/{id}/stats).
std::int64_t Documents(HttpClient& client, const std::string& label,
                       const std::string& path = "/stats") {
  const json::value stats = client.GetJson(path);
  for (const json::value& c : stats.at("classes").as_array()) {
    if (c.at("label").as_string() == label) return c.at("documents").to_number<std::int64_t>();
  }
  return -1;
}

class ClientTest : public ::testing::Test {
 protected:
  DaemonProcess Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--listen",          "127.0.0.1:0", "--data-dir",
                                     data_.Join("model"), "--threads",   "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto daemon = DaemonProcess::Start(args);
    if (!daemon) throw std::runtime_error(daemon.error());
    return std::move(*daemon);
  }

  static std::string Server(const DaemonProcess& daemon) {
    return "127.0.0.1:" + std::to_string(daemon.port());
  }

  // Spam in a directory (5), ham in an mbox (4, one with a quoted From line) and in a Maildir
  // (3, plus one in tmp/ that must not be read).
  void WriteCorpus() {
    for (int i = 0; i < 5; ++i) {
      WriteFile(corpus_.path() / "spam" / ("sub" + std::to_string(i % 2)) / std::to_string(i),
                SpamMail(i));
    }
    std::string mbox;
    for (int i = 0; i < 4; ++i) {
      mbox += "From someone@example.org Mon Jan  1 00:00:0" + std::to_string(i) + " 2024\n" +
              HamMail(i) + (i == 2 ? ">From the minutes\n" : "") + "\n";
    }
    WriteFile(corpus_.path() / "ham.mbox", mbox);
    WriteFile(corpus_.path() / "Maildir" / "cur" / "1.host:2,S", HamMail(10));
    WriteFile(corpus_.path() / "Maildir" / "cur" / "2.host:2,S", HamMail(11));
    WriteFile(corpus_.path() / "Maildir" / "new" / "3.host", HamMail(12));
    WriteFile(corpus_.path() / "Maildir" / "tmp" / "4.host", HamMail(13));
  }

  std::string Corpus(const std::string& name) const { return corpus_.Join(name); }

  // Writes the corpus and trains its spam folder and its ham mbox.
  void TrainCorpus(const DaemonProcess& daemon) {
    WriteCorpus();
    ASSERT_EQ(
        RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("spam")}).status,
        0);
    ASSERT_EQ(RunClient({"--server", Server(daemon), "train", "--label", "ham", Corpus("ham.mbox")})
                  .status,
              0);
  }

  TempDir data_;
  TempDir corpus_;
};

TEST_F(ClientTest, TrainsADirectoryAnMboxAndAMaildirThenClassifiesForgetsAndShowsStats) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  WriteCorpus();
  const std::vector<std::string> server = {"--server", Server(daemon)};

  ClientExit run =
      RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("spam")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 5, relearned 0, unchanged 0, failed 0"));
  run = RunClient({"train", "--label", "ham", "--jobs", "2", Corpus("ham.mbox"), Corpus("Maildir")},
                  "", {{"NBSPAMC_SERVER", Server(daemon)}});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 7,"));
  EXPECT_EQ(Documents(client, "spam"), 5);
  EXPECT_EQ(Documents(client, "ham"), 7);

  // Again: nothing changes.
  run = RunClient({"train", "--label", "ham", Corpus("ham.mbox"), "--server", Server(daemon)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 0, relearned 0, unchanged 4"));

  // classify: exit 1 for spam, 0 for ham; one verdict line, the verdict first.
  const std::string spam_file = Corpus("spam/sub0/0");
  run = RunClient({"classify", spam_file, "--server", Server(daemon)});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_THAT(run.out,
              ::testing::MatchesRegex("spam [0-9.]+ score=[0-9.-]+( confidence=[0-9.]+)?\n"));
  run = RunClient({"--server", Server(daemon), "classify", "-"}, HamMail(99));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, ::testing::StartsWith("ham "));
  run = RunClient({"--server", Server(daemon), "classify", "--json", "--explain", "3", "-"},
                  SpamMail(42));
  EXPECT_EQ(run.status, 1) << run.err;
  const json::value answer = json::parse(run.out);
  EXPECT_EQ(answer.at("label").as_string(), "spam");
  EXPECT_EQ(answer.at("verdict").as_string(), "spam");
  EXPECT_EQ(answer.at("explain").as_array().size(), 3u);
  run = RunClient({"--server", Server(daemon), "classify", "--explain", "2", spam_file});
  EXPECT_EQ(run.status, 1);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 3) << run.out;
  run = RunClient({"--server", Server(daemon), "classify", Corpus("nothing-here")});
  EXPECT_EQ(run.status, 2);

  // stats, readable and raw.
  run = RunClient({"--server", Server(daemon), "stats"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("documents: 12\n"));
  EXPECT_THAT(run.out, HasSubstr("  spam: 5 documents"));
  run = RunClient({"--server", Server(daemon), "stats", "--json"});
  ASSERT_EQ(run.status, 0);
  EXPECT_EQ(json::parse(run.out).at("documents").to_number<int>(), 12);

  // forget by content: the mbox's messages, then again (not found is not a failure).
  run = RunClient({"--server", Server(daemon), "forget", Corpus("ham.mbox")});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("forgotten 4, not found 0, failed 0"));
  EXPECT_EQ(Documents(client, "ham"), 3);
  run = RunClient({"--server", Server(daemon), "forget", Corpus("ham.mbox")});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("forgotten 0, not found 4"));

  // train and forget under an id.
  run = RunClient({"--server", Server(daemon), "train", "--label", "ham", "--id", "<a@b.c>",
                   Corpus("Maildir/new/3.host")});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 1"));
  run = RunClient({"--server", Server(daemon), "forget", "--id", "<a@b.c>"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("forgotten 1"));
  run = RunClient(
      {"--server", Server(daemon), "train", "--label", "ham", "--id", "x", Corpus("spam")});
  EXPECT_EQ(run.status, 2) << run.err;
}

// What a scan of the daemon's history classified, learned and forgotten from its kept tokens:
// the administrator's correction of a verdict with no message file at hand.
// With --error-driven, a daemon under error-driven training only checks what it already scores
// right beyond its margin; nbspamc says so, and passes again over the PATHs while a pass still
// counts some. Without it, train is an archive import: every message counted.
TEST_F(ClientTest, TrainUnderAMarginCountsTheCheckedAndPassesAgain) {
  DaemonProcess daemon = Start({"--train-margin", "0.5"});
  HttpClient client(daemon.port());
  WriteCorpus();
  // No ham yet: nothing can be scored, every spam is counted.
  ClientExit run = RunClient(
      {"--server", Server(daemon), "train", "--error-driven", "--label", "spam", Corpus("spam")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "learned 5, relearned 0, unchanged 0, failed 0: 5 messages in " +
                         run.out.substr(run.out.find(" in ") + 4));
  // nbspamc says why, and how to train both classes in turn.
  EXPECT_THAT(run.err, HasSubstr("note: the daemon trains on or near error and has no ham yet"));
  EXPECT_THAT(run.err, HasSubstr("--label spam PATH... --label ham PATH..."));
  // The first ham is counted (no ham before it); the others score as ham beyond the margin. The
  // pass counted one and checked three, so a second pass scores the three again: still right.
  run = RunClient({"--server", Server(daemon), "train", "--error-driven", "--label", "ham",
                   Corpus("ham.mbox")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("note:"))) << "the model has spam";
  EXPECT_THAT(run.out, HasSubstr("learned 1, relearned 0, unchanged 0, checked 3, failed 0"));
  EXPECT_THAT(run.out, HasSubstr("\npass 2: learned 0, relearned 0, unchanged 1, checked 3,"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("pass 3")));
  EXPECT_EQ(Documents(client, "ham"), 1);
  // --passes 1: one pass only.
  run = RunClient({"--server", Server(daemon), "train", "--error-driven", "--label", "ham",
                   "--passes", "1", Corpus("Maildir")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 0, relearned 0, unchanged 0, checked 3, failed 0"));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("pass 2")));
  EXPECT_EQ(RunClient({"--server", Server(daemon), "train", "--error-driven", "--label", "ham",
                       "--passes", "0", Corpus("Maildir")})
                .status,
            2);
  // By default an archive import counts every message, those only checked before too.
  run = RunClient({"--server", Server(daemon), "train", "--label", "ham", Corpus("Maildir")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 3, relearned 0, unchanged 0, failed 0"));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("note:")));
  EXPECT_EQ(Documents(client, "ham"), 4);
  // And the ham of the mbox, checked twice above, too (--count-all says the same).
  run = RunClient(
      {"--server", Server(daemon), "train", "--label", "ham", "--count-all", Corpus("ham.mbox")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 3, relearned 0, unchanged 1, failed 0"));
  EXPECT_EQ(Documents(client, "ham"), 7);
}

// Both classes in one run: their messages go in turn, so error-driven training scores each
// against a model that holds both from the start (trained one class after the other, the first
// class is counted whole, unscored). Each message goes under its own --label.
TEST_F(ClientTest, TrainWithSeveralLabelsSendsTheirMessagesInTurn) {
  WriteCorpus();
  {
    DaemonProcess daemon = Start();  // An archive import counts every message: exact counts.
    HttpClient client(daemon.port());
    const ClientExit run =
        RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("spam"),
                   "--label", "ham", Corpus("ham.mbox"), Corpus("Maildir")});
    ASSERT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("learned 12, relearned 0, unchanged 0, failed 0: 12 messages"));
    EXPECT_EQ(Documents(client, "spam"), 5);
    EXPECT_EQ(Documents(client, "ham"), 7);
    ASSERT_EQ(daemon.Terminate(), 0) << daemon.Log();
  }
  std::filesystem::remove_all(data_.Join("model"));
  DaemonProcess daemon = Start({"--train-margin", "0.5"});
  HttpClient client(daemon.port());
  const ClientExit run =
      RunClient({"--server", Server(daemon), "train", "--error-driven", "--label", "spam",
                 Corpus("spam"), "--label", "ham", Corpus("ham.mbox")});
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  // In turn, spam then ham: the first of each is counted unscored, the rest scored.
  EXPECT_GE(Documents(client, "spam"), 1);
  EXPECT_GE(Documents(client, "ham"), 1);
  EXPECT_LT(Documents(client, "spam"), 5) << run.out << "\nspam after the first ham was scored";
  EXPECT_THAT(run.out, HasSubstr("checked"));
}

TEST_F(ClientTest, TrainAndForgetByScanIdLearnWhatThatScanClassified) {
  DaemonProcess daemon = Start();
  HttpClient client(daemon.port());
  ASSERT_NO_FATAL_FAILURE(TrainCorpus(daemon));
  ClientExit run = RunClient({"--server", Server(daemon), "classify", "--json", "-"}, HamMail(50));
  ASSERT_EQ(run.err, "");
  const std::string scan_id(json::parse(run.out).at("scan_id").as_string());
  ASSERT_FALSE(scan_id.empty()) << run.out;
  const std::int64_t ham = Documents(client, "ham");
  const std::int64_t spam = Documents(client, "spam");

  const auto scan = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", Server(daemon)});
    return RunClient(args);
  };
  run = scan({"train", "--label", "ham", "--scan-id", scan_id});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 1, relearned 0, unchanged 0, failed 0"));
  EXPECT_EQ(Documents(client, "ham"), ham + 1);
  run = scan({"train", "--label", "ham", "--scan-id", scan_id});
  EXPECT_THAT(run.out, HasSubstr("learned 0, relearned 0, unchanged 1"));
  // The same message from its bytes: the scan's key is the message's own id.
  WriteFile(corpus_.path() / "classified", HamMail(50));
  run = scan({"train", "--label", "ham", Corpus("classified")});
  EXPECT_THAT(run.out, HasSubstr("unchanged 1")) << run.err;
  run = scan({"train", "--label", "spam", "--scan-id", scan_id});
  EXPECT_THAT(run.out, HasSubstr("learned 0, relearned 1"));
  EXPECT_EQ(Documents(client, "ham"), ham);
  EXPECT_EQ(Documents(client, "spam"), spam + 1);
  run = scan({"forget", "--scan-id", scan_id});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("forgotten 1, not found 0"));
  EXPECT_EQ(Documents(client, "spam"), spam);

  // A scan the history never had is not found (as a forget of nothing learned); a malformed id
  // is the daemon's error; --scan-id with a message or an --id is a usage error.
  const std::string unknown = scan_id.substr(0, scan_id.size() - 4) + "ffff";
  run = scan({"forget", "--scan-id", unknown});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("forgotten 0, not found 1"));
  run = scan({"train", "--label", "ham", "--scan-id", unknown});
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("no scan " + unknown));
  run = scan({"forget", "--scan-id", "not-a-scan"});
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("HTTP 400"));
  EXPECT_EQ(scan({"train", "--label", "ham", "--scan-id", scan_id, "--id", "x"}).status, 2);
  EXPECT_EQ(scan({"train", "--label", "ham", "--scan-id", scan_id, Corpus("spam")}).status, 2);
  EXPECT_EQ(Documents(client, "ham"), ham);
}

// The scan history at a shell: the scans listed newest first and filtered, one shown with its
// explanation, its id ready for train --scan-id.
TEST_F(ClientTest, HistoryListsTheScansNewestFirstAndScanExplainsOne) {
  DaemonProcess daemon = Start();
  ASSERT_NO_FATAL_FAILURE(TrainCorpus(daemon));
  const auto nbspamc = [&](std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--server", Server(daemon)});
    return RunClient(args, input);
  };
  std::vector<std::string> scan_ids;  // In the order classified.
  for (const std::string& message : {SpamMail(60), HamMail(61), SpamMail(62)}) {
    const ClientExit run = nbspamc({"classify", "--json", "-"}, message);
    ASSERT_EQ(run.err, "");
    scan_ids.emplace_back(json::parse(run.out).at("scan_id").as_string());
  }
  // Lines: the header, then the scan ids newest first.
  const auto first_words = [](const std::string& out) {
    std::vector<std::string> words;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
      words.push_back(line.substr(0, line.find(' ')));
    return words;
  };
  ClientExit run = nbspamc({"history"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out),
            (std::vector<std::string>{"SCAN", scan_ids[2], scan_ids[1], scan_ids[0]}));
  EXPECT_THAT(run.out, HasSubstr(scan_ids[1] + "  "));

  run = nbspamc({"history", "--verdict", "spam"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(first_words(run.out), (std::vector<std::string>{"SCAN", scan_ids[2], scan_ids[0]}));
  run = nbspamc({"history", "--limit", "1"});
  EXPECT_EQ(first_words(run.out), (std::vector<std::string>{"SCAN", scan_ids[2]}));
  EXPECT_THAT(run.err, HasSubstr("more scans may match"));
  run = nbspamc({"history", "--since", "1h", "--json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const json::value page = json::parse(run.out);
  EXPECT_EQ(page.at("scans").as_array().size(), 3u);
  EXPECT_TRUE(page.at("next").is_null());
  run = nbspamc({"history", "--front-end", "milter"});
  EXPECT_EQ(first_words(run.out), std::vector<std::string>{"SCAN"});

  run = nbspamc({"scan", scan_ids[1]});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("scan " + scan_ids[1] + " at "));
  EXPECT_THAT(run.out,
              ::testing::ContainsRegex("\n  [+-][0-9]+\\.[0-9]{4} (body|header|url|meta) "));
  EXPECT_THAT(run.out, HasSubstr("\nnot learned\n"));
  run = nbspamc({"scan", "--json", scan_ids[1]});
  EXPECT_EQ(json::parse(run.out).at("scan_id").as_string(), scan_ids[1]);
  // Learned by its id as the other class (a correction: always counted), the scan says so.
  const std::string other = json::parse(run.out).at("label").as_string() == "spam" ? "ham" : "spam";
  run = nbspamc({"train", "--label", other, "--scan-id", scan_ids[1]});
  ASSERT_EQ(run.status, 0) << run.err;
  run = nbspamc({"scan", scan_ids[1]});
  EXPECT_THAT(run.out, HasSubstr("\nlearned as " + other + " at "));
  EXPECT_THAT(run.out, HasSubstr(" UTC (scan_id)\n"));
  const std::string unknown = scan_ids[0].substr(0, scan_ids[0].size() - 4) + "ffff";
  run = nbspamc({"scan", unknown});
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("no scan " + unknown));
  EXPECT_EQ(nbspamc({"history", "--verdict", "maybe"}).status, 2);
}

TEST_F(ClientTest, AnUnsureVerdictIsPrintedFirstAndExitsZero) {
  // Thresholds so wide that every message falls between them.
  DaemonProcess daemon = Start({"--ham-threshold", "-1000", "--spam-threshold", "1000"});
  ASSERT_NO_FATAL_FAILURE(TrainCorpus(daemon));
  for (const std::string& message : {SpamMail(42), HamMail(99)}) {
    const ClientExit run = RunClient({"--server", Server(daemon), "classify", "-"}, message);
    EXPECT_EQ(run.status, 0) << "unsure exits 0, like ham: " << run.err;
    EXPECT_THAT(run.out,
                ::testing::MatchesRegex("unsure [0-9.]+ score=[0-9.-]+( confidence=[0-9.]+)?\n"));
  }
  const ClientExit run =
      RunClient({"--server", Server(daemon), "classify", "--json", "-"}, SpamMail(42));
  EXPECT_EQ(run.status, 0);
  const json::value answer = json::parse(run.out);
  EXPECT_EQ(answer.at("verdict").as_string(), "unsure");
  EXPECT_EQ(answer.at("label").as_string(), "spam") << "the label is the most probable class";
}

TEST_F(ClientTest, ClassifyBeforeAnyTrainingPrintsTheDaemonsError) {
  DaemonProcess daemon = Start();
  const ClientExit run = RunClient({"--server", Server(daemon), "classify", "-"}, HamMail(1));
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("HTTP 409"));
}

TEST_F(ClientTest, AWrongTokenStopsWithTheDaemonsMessageAndTheTokenIsNeverPrinted) {
  DaemonProcess daemon = Start({"--auth-tokens", std::string("mx:") + kToken});
  WriteCorpus();
  ClientExit run = RunClient({"--server", Server(daemon), "--token", "wrong-secret-0123456789",
                              "train", "--label", "spam", Corpus("spam")});
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("HTTP 403"));
  EXPECT_THAT(run.out + run.err, Not(HasSubstr("wrong-secret")));
  run = RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("spam")});
  EXPECT_EQ(run.status, 4);
  EXPECT_THAT(run.err, HasSubstr("HTTP 401"));

  run = RunClient({"train", "--label", "spam", Corpus("spam")}, "",
                  {{"NBSPAMC_SERVER", Server(daemon)}, {"NBSPAMC_TOKEN", kToken}});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 5"));
  EXPECT_THAT(run.out + run.err, Not(HasSubstr(kToken)));
}

TEST_F(ClientTest, NoDaemonListeningExits3) {
  // A port that was free a moment ago.
  unsigned short port = 0;
  {
    boost::asio::io_context context;
    boost::asio::ip::tcp::acceptor acceptor(
        context, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  const std::string server = "127.0.0.1:" + std::to_string(port);
  ClientExit run = RunClient({"--server", server, "classify", "-"}, HamMail(1));
  EXPECT_EQ(run.status, 3);
  EXPECT_THAT(run.err, HasSubstr("cannot connect"));
  WriteCorpus();
  run = RunClient({"--server", server, "train", "--label", "spam", Corpus("spam")});
  EXPECT_EQ(run.status, 3);
  run = RunClient({"--server", server, "stats"});
  EXPECT_EQ(run.status, 3);
}

TEST_F(ClientTest, BadCommandLinesExit2WithUsage) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{}, {"bogus"}, {"stats", "--nope"}, {"train", "x"}}) {
    const ClientExit run = RunClient(args);
    EXPECT_EQ(run.status, 2) << ::testing::PrintToString(args);
    EXPECT_THAT(run.err, HasSubstr("usage: nbspamc"));
  }
  ClientExit run = RunClient({"--help"});
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, HasSubstr("--server"));
  run = RunClient({"--version"});
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, HasSubstr("nbspamc "));
}

// What a user's move into or out of Junk runs (contrib/dovecot): one message on stdin, learned
// in that user's layer, idempotent, relearned by the other label; a daemon that is down or
// refuses never makes it fail unless --strict.
TEST_F(ClientTest, AReportLearnsInTheUsersLayerOnceAndNeverFailsTheMove) {
  DaemonProcess daemon = Start();
  const std::string server = Server(daemon);
  HttpClient client(daemon.port());
  const std::string message = SpamMail(1);
  ClientExit run =
      RunClient({"--server", server, "report", "--label", "spam", "--user", "alice"}, message);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_THAT(run.out, ::testing::StartsWith("spam learned alice "));
  EXPECT_EQ(run.err, "");
  run = RunClient({"--server", server, "report", "--label", "spam", "--user", "alice"}, message);
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, ::testing::StartsWith("spam unchanged alice "));
  EXPECT_EQ(Documents(client, "spam", "/users/alice/stats"), 1);
  run = RunClient({"--server", server, "report", "--label", "ham", "--user", "alice"}, message);
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.out, ::testing::StartsWith("ham relearned alice "));
  EXPECT_EQ(Documents(client, "spam", "/users/alice/stats"), 0);
  EXPECT_EQ(Documents(client, "ham", "/users/alice/stats"), 1);
  EXPECT_EQ(Documents(client, "spam"), 0);  // The global model: train_global_from_users off.
  EXPECT_EQ(Documents(client, "ham"), 0);

  // Without --user: the global model.
  run = RunClient({"--server", server, "report", "--label", "spam"}, SpamMail(2));
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(Documents(client, "spam"), 1);

  // The daemon's refusal: logged, exit 0; with --strict, exit 4.
  run = RunClient({"--server", server, "report", "--label", "spam"}, "");
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.err, HasSubstr("nbspamc: report: spam not learned: "));
  run = RunClient({"--server", server, "report", "--label", "spam", "--strict"}, "");
  EXPECT_EQ(run.status, 4);
  run = RunClient({"--server", server, "report", "--label", "spam", "--max-size", "10"}, message);
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.err, HasSubstr("more than --max-size 10"));

  // The daemon down: logged, exit 0 at once; with --strict, exit 3.
  EXPECT_EQ(daemon.Terminate(), 0);
  const auto start = std::chrono::steady_clock::now();
  run = RunClient({"--server", server, "report", "--label", "spam", "--user", "bob"}, message);
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(run.err, HasSubstr("nbspamc: report: spam for bob not learned: "));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  run = RunClient({"--server", server, "report", "--label", "spam", "--strict"}, message);
  EXPECT_EQ(run.status, 3);
}

TEST_F(ClientTest, AMessageOverTheDaemonsBodyLimitFailsAlone) {
  DaemonProcess daemon = Start({"--max-body-bytes", "100000"});
  WriteCorpus();
  // One over the limit but sent whole, one large enough to wait for "100 Continue".
  WriteFile(corpus_.path() / "spam" / "big1", Mail("big", std::string(150000, 'a')));
  WriteFile(corpus_.path() / "spam" / "big2", Mail("bigger", std::string(2 << 20, 'b')));
  const ClientExit run =
      RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("spam")});
  EXPECT_EQ(run.status, 4) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("learned 5, relearned 0, unchanged 0, failed 2"));
  EXPECT_THAT(run.err, HasSubstr("big1: the body is larger than the limit of 100000 bytes"));
  EXPECT_THAT(run.err, HasSubstr("big2: the body is larger than the limit of 100000 bytes"));
}

TEST_F(ClientTest, ImportsTenThousandMessagesInOneCommand) {
  DaemonProcess daemon = Start();
  constexpr int kMessages = 10000;
  for (int i = 0; i < kMessages; ++i) {
    WriteFile(corpus_.path() / "bulk" / std::to_string(i / 1000) / std::to_string(i),
              i % 2 ? SpamMail(i) : HamMail(i));
  }
  const auto start = std::chrono::steady_clock::now();
  const ClientExit run =
      RunClient({"--server", Server(daemon), "train", "--label", "spam", Corpus("bulk")}, "", {},
                std::chrono::seconds(240));
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(run.status, 0) << run.out << run.err << "daemon:\n" << daemon.Log();
  EXPECT_THAT(run.out, HasSubstr("learned 10000, relearned 0, unchanged 0, failed 0"));
  HttpClient client(daemon.port());
  EXPECT_EQ(Documents(client, "spam"), kMessages);
  std::printf("10000 messages in %.1f s: %.0f msg/s (%s)\n", elapsed.count(),
              kMessages / elapsed.count(), run.out.c_str());
  EXPECT_LT(elapsed.count(), 240);
}

}  // namespace
}  // namespace nbspamd::testing
