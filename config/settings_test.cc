#include "config/settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "config/auth_tokens.h"
#include "config/live_settings.h"

namespace nbspamd::config {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Calls LoadSettings with `args` after a program name, and `environment`.
std::expected<LoadResult, Error> Load(const std::vector<std::string>& args,
                                      const std::vector<std::string>& environment = {}) {
  std::vector<const char*> argv = {"nbspamd"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return LoadSettings(argv, environment);
}

// The settings a successful run-load gives; fails the test otherwise.
Settings LoadOk(const std::vector<std::string>& args,
                const std::vector<std::string>& environment = {}) {
  auto loaded = Load(args, environment);
  EXPECT_TRUE(loaded.has_value()) << loaded.error().message;
  if (!loaded) return {};
  EXPECT_EQ(loaded->action, LoadResult::Action::kRun);
  return loaded->settings;
}

// The error message of a failing load; fails the test if it succeeds or has another code.
std::string LoadError(const std::vector<std::string>& args,
                      const std::vector<std::string>& environment = {}) {
  auto loaded = Load(args, environment);
  EXPECT_FALSE(loaded.has_value());
  if (loaded) return "";
  EXPECT_EQ(loaded.error().code, ErrorCode::kInvalidArgument) << loaded.error().message;
  return loaded.error().message;
}

unsigned ResolvedDefaultThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// Makes a fresh folder for TOML files and removes it afterwards.
class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("nbspamd_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes `contents` to a file `name` in the folder and returns its path.
  std::string WriteToml(const std::string& name, const std::string& contents) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(SettingsTest, DefaultsWithNoArguments) {
  const Settings settings = LoadOk({});
  Settings expected;
  expected.threads = ResolvedDefaultThreads();
  EXPECT_EQ(settings, expected);
  EXPECT_EQ(settings.listen_host, "127.0.0.1");
  EXPECT_EQ(settings.listen_port, 7830);
  EXPECT_EQ(settings.data_dir, "data");
  EXPECT_GE(settings.threads, 1u);
  EXPECT_EQ(settings.alpha, 0.1);
  EXPECT_EQ(settings.spam_threshold, 0.9);
  EXPECT_EQ(settings.ham_threshold, -0.6);
  EXPECT_EQ(settings.ham_threshold, kDefaultHamThreshold);
  EXPECT_EQ(settings.score_min_weight, 1.0);
  EXPECT_EQ(settings.max_body_bytes, 10u << 20);
  EXPECT_EQ(settings.max_header_bytes, 16u << 10);
  EXPECT_EQ(settings.idle_timeout_seconds, 60u);
  EXPECT_EQ(settings.shutdown_timeout_seconds, 30u);
  EXPECT_EQ(settings.max_message_bytes, 4u << 20);
  EXPECT_EQ(settings.max_tokens, 20000u);
  EXPECT_EQ(settings.max_token_chars, 40u);
  EXPECT_TRUE(settings.boolean_counts);
  EXPECT_FALSE(settings.word_bigrams);
  EXPECT_EQ(settings.byte_ngrams, 0u);
  EXPECT_EQ(settings.byte_ngram_head, 2500u);
  EXPECT_EQ(settings.char_ngrams, 4u);
  EXPECT_EQ(settings.char_ngram_share, 0.3);
  EXPECT_FALSE(settings.fold_lookalikes);
  EXPECT_TRUE(settings.header_tokens);
}

TEST_F(SettingsTest, EmptyArgvAndIrrelevantEnvironmentAreFine) {
  auto loaded = LoadSettings(
      {}, std::vector<std::string>{"PATH=/bin", "HOME", "NBSPAMDX=1", "nbspamd_threads=3"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->action, LoadResult::Action::kRun);
  EXPECT_EQ(loaded->settings.threads, ResolvedDefaultThreads());
}

TEST_F(SettingsTest, TomlFileSetsEveryKey) {
  const std::string path = WriteToml("all.toml", R"(# every key
listen = "0.0.0.0:8080"
data_dir = "/var/lib/nbspamd"
threads = 4
alpha = 0.5
spam_threshold = -2.5
ham_threshold = -3.25
max_body_bytes = 1048576
max_header_bytes = 8192
idle_timeout_seconds = 5
shutdown_timeout_seconds = 0
max_message_bytes = 1000
max_tokens = 100
max_token_chars = 20
boolean_counts = false
header_tokens = false
)");
  const Settings settings = LoadOk({"--config", path});
  EXPECT_EQ(settings.listen_host, "0.0.0.0");
  EXPECT_EQ(settings.listen_port, 8080);
  EXPECT_EQ(settings.data_dir, "/var/lib/nbspamd");
  EXPECT_EQ(settings.threads, 4u);
  EXPECT_EQ(settings.alpha, 0.5);
  EXPECT_EQ(settings.spam_threshold, -2.5);
  EXPECT_EQ(settings.ham_threshold, -3.25);
  EXPECT_EQ(settings.max_body_bytes, 1048576u);
  EXPECT_EQ(settings.max_header_bytes, 8192u);
  EXPECT_EQ(settings.idle_timeout_seconds, 5u);
  EXPECT_EQ(settings.shutdown_timeout_seconds, 0u);
  EXPECT_EQ(settings.max_message_bytes, 1000u);
  EXPECT_EQ(settings.max_tokens, 100u);
  EXPECT_EQ(settings.max_token_chars, 20u);
  EXPECT_FALSE(settings.boolean_counts);
  EXPECT_FALSE(settings.header_tokens);
}

TEST_F(SettingsTest, TomlIntegersAreAcceptedForFloatingPointKeys) {
  const std::string path = WriteToml("ints.toml", "alpha = 2\nspam_threshold = -3\n");
  const Settings settings = LoadOk({"--config=" + path});
  EXPECT_EQ(settings.alpha, 2.0);
  EXPECT_EQ(settings.spam_threshold, -3.0);
}

TEST_F(SettingsTest, EmptyTomlFileKeepsDefaults) {
  const std::string path = WriteToml("empty.toml", "");
  const Settings settings = LoadOk({"--config", path});
  Settings expected;
  expected.threads = ResolvedDefaultThreads();
  EXPECT_EQ(settings, expected);
}

TEST_F(SettingsTest, EachSourceOverridesTheOneBefore) {
  const std::string path = WriteToml("layers.toml", R"(
data_dir = "from-toml"
threads = 2
alpha = 0.25
max_tokens = 10
)");
  // TOML over defaults.
  Settings settings = LoadOk({"--config", path});
  EXPECT_EQ(settings.data_dir, "from-toml");
  EXPECT_EQ(settings.threads, 2u);
  EXPECT_EQ(settings.alpha, 0.25);
  EXPECT_EQ(settings.max_tokens, 10u);

  // Environment over TOML.
  const std::vector<std::string> environment = {"NBSPAMD_CONFIG=" + path,
                                                "NBSPAMD_DATA_DIR=from-env", "NBSPAMD_THREADS=3",
                                                "NBSPAMD_ALPHA=0.75"};
  settings = LoadOk({}, environment);
  EXPECT_EQ(settings.data_dir, "from-env");
  EXPECT_EQ(settings.threads, 3u);
  EXPECT_EQ(settings.alpha, 0.75);
  EXPECT_EQ(settings.max_tokens, 10u);  // Still from the file named by NBSPAMD_CONFIG.

  // Flags over the environment.
  settings = LoadOk({"--data-dir", "from-flag", "--threads=5"}, environment);
  EXPECT_EQ(settings.data_dir, "from-flag");
  EXPECT_EQ(settings.threads, 5u);
  EXPECT_EQ(settings.alpha, 0.75);
  EXPECT_EQ(settings.max_tokens, 10u);
}

TEST_F(SettingsTest, ConfigFlagOverridesConfigEnvironmentVariable) {
  const std::string from_env = WriteToml("env.toml", "data_dir = \"env-file\"\n");
  const std::string from_flag = WriteToml("flag.toml", "data_dir = \"flag-file\"\n");
  const Settings settings = LoadOk({"--config", from_flag}, {"NBSPAMD_CONFIG=" + from_env});
  EXPECT_EQ(settings.data_dir, "flag-file");
}

TEST_F(SettingsTest, EnvironmentSetsEveryKey) {
  const Settings settings = LoadOk(
      {}, {"NBSPAMD_LISTEN=[::1]:9000", "NBSPAMD_DATA_DIR=/tmp/x", "NBSPAMD_THREADS=7",
           "NBSPAMD_ALPHA=1e-3", "NBSPAMD_SPAM_THRESHOLD=-1.5", "NBSPAMD_HAM_THRESHOLD=-1.75",
           "NBSPAMD_MAX_BODY_BYTES=2048", "NBSPAMD_MAX_HEADER_BYTES=1024",
           "NBSPAMD_IDLE_TIMEOUT_SECONDS=86400", "NBSPAMD_SHUTDOWN_TIMEOUT_SECONDS=3600",
           "NBSPAMD_MAX_MESSAGE_BYTES=1", "NBSPAMD_MAX_TOKENS=1", "NBSPAMD_MAX_TOKEN_CHARS=1000",
           "NBSPAMD_BOOLEAN_COUNTS=no", "NBSPAMD_HEADER_TOKENS=off"});
  EXPECT_EQ(settings.listen_host, "::1");
  EXPECT_EQ(settings.listen_port, 9000);
  EXPECT_EQ(settings.data_dir, "/tmp/x");
  EXPECT_EQ(settings.threads, 7u);
  EXPECT_EQ(settings.alpha, 1e-3);
  EXPECT_EQ(settings.spam_threshold, -1.5);
  EXPECT_EQ(settings.ham_threshold, -1.75);
  EXPECT_EQ(settings.max_body_bytes, 2048u);
  EXPECT_EQ(settings.max_header_bytes, 1024u);
  EXPECT_EQ(settings.idle_timeout_seconds, 86400u);
  EXPECT_EQ(settings.shutdown_timeout_seconds, 3600u);
  EXPECT_EQ(settings.max_message_bytes, 1u);
  EXPECT_EQ(settings.max_tokens, 1u);
  EXPECT_EQ(settings.max_token_chars, 1000u);
  EXPECT_FALSE(settings.boolean_counts);
  EXPECT_FALSE(settings.header_tokens);
}

TEST_F(SettingsTest, FlagsSetEveryKey) {
  const Settings settings = LoadOk({"--listen",
                                    "localhost:1",
                                    "--data-dir",
                                    "d",
                                    "--threads",
                                    "256",
                                    "--alpha",
                                    "3",
                                    "--spam-threshold",
                                    "-5",
                                    "--ham-threshold",
                                    "-6",
                                    "--max-body-bytes",
                                    "1073741824",
                                    "--max-header-bytes",
                                    "1048576",
                                    "--idle-timeout-seconds",
                                    "1",
                                    "--shutdown-timeout-seconds",
                                    "0",
                                    "--max-message-bytes",
                                    "18446744073709551615",
                                    "--max-tokens",
                                    "5",
                                    "--max-token-chars",
                                    "1",
                                    "--boolean-counts",
                                    "FALSE",
                                    "--header-tokens",
                                    "0"});
  EXPECT_EQ(settings.listen_host, "localhost");
  EXPECT_EQ(settings.listen_port, 1);
  EXPECT_EQ(settings.data_dir, "d");
  EXPECT_EQ(settings.threads, 256u);
  EXPECT_EQ(settings.alpha, 3.0);
  EXPECT_EQ(settings.spam_threshold, -5.0);
  EXPECT_EQ(settings.ham_threshold, -6.0);
  EXPECT_EQ(settings.max_body_bytes, 1073741824u);
  EXPECT_EQ(settings.max_header_bytes, 1048576u);
  EXPECT_EQ(settings.idle_timeout_seconds, 1u);
  EXPECT_EQ(settings.shutdown_timeout_seconds, 0u);
  EXPECT_EQ(settings.max_message_bytes, 18446744073709551615u);
  EXPECT_EQ(settings.max_tokens, 5u);
  EXPECT_EQ(settings.max_token_chars, 1u);
  EXPECT_FALSE(settings.boolean_counts);
  EXPECT_FALSE(settings.header_tokens);
}

TEST_F(SettingsTest, FlagGivenTwiceTakesTheLastValue) {
  EXPECT_EQ(LoadOk({"--threads", "2", "--threads=3"}).threads, 3u);
}

TEST_F(SettingsTest, ThreadsZeroResolvesToHardwareConcurrency) {
  EXPECT_EQ(LoadOk({"--threads", "0"}).threads, ResolvedDefaultThreads());
  EXPECT_EQ(LoadOk({"--threads", "1"}).threads, 1u);
}

TEST_F(SettingsTest, ListenParsesHostAndPort) {
  Settings settings = LoadOk({"--listen", "[::1]:0"});
  EXPECT_EQ(settings.listen_host, "::1");
  EXPECT_EQ(settings.listen_port, 0);

  settings = LoadOk({"--listen", "0.0.0.0:0"});
  EXPECT_EQ(settings.listen_host, "0.0.0.0");
  EXPECT_EQ(settings.listen_port, 0);

  settings = LoadOk({"--listen=example.org:65535"});
  EXPECT_EQ(settings.listen_host, "example.org");
  EXPECT_EQ(settings.listen_port, 65535);

  settings = LoadOk({"--listen", "[2001:db8::1]:7830"});
  EXPECT_EQ(settings.listen_host, "2001:db8::1");
  EXPECT_EQ(settings.listen_port, 7830);
}

TEST_F(SettingsTest, ListenRejectsMalformedAddresses) {
  for (const std::string bad :
       {"", "127.0.0.1", ":7830", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:80x",
        "::1:7830", "[::1]", "[::1]7830", "[]:7830", "[::1:7830", "a b:1", "127.0.0.1: 80",
        "127.0.0.1:99999999999999999999999"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(LoadError({"--listen", bad}),
                AllOf(HasSubstr("--listen"), HasSubstr("'listen'"), HasSubstr("HOST:PORT")));
  }
}

TEST_F(SettingsTest, InvalidFlagValuesNameTheFlagAndKey) {
  struct Case {
    std::string flag;
    std::string value;
    std::string key;
  };
  const std::vector<Case> cases = {
      {"--data-dir", "", "data_dir"},
      {"--threads", "257", "threads"},
      {"--threads", "-1", "threads"},
      {"--threads", "abc", "threads"},
      {"--threads", "4x", "threads"},
      {"--threads", " 4", "threads"},
      {"--threads", "99999999999999999999999", "threads"},
      {"--threads", "1.5", "threads"},
      {"--spam-threshold", "inf", "spam_threshold"},
      {"--spam-threshold", "nan", "spam_threshold"},
      {"--spam-threshold", "1.0x", "spam_threshold"},
      {"--max-body-bytes", "0", "max_body_bytes"},
      {"--max-body-bytes", "1073741825", "max_body_bytes"},
      {"--max-header-bytes", "1023", "max_header_bytes"},
      {"--max-header-bytes", "1048577", "max_header_bytes"},
      {"--idle-timeout-seconds", "0", "idle_timeout_seconds"},
      {"--idle-timeout-seconds", "86401", "idle_timeout_seconds"},
      {"--shutdown-timeout-seconds", "3601", "shutdown_timeout_seconds"},
      {"--max-message-bytes", "0", "max_message_bytes"},
      {"--byte-ngrams", "1", "byte_ngrams"},
      {"--byte-ngrams", "2", "byte_ngrams"},
      {"--byte-ngrams", "9", "byte_ngrams"},
      {"--byte-ngrams", "-4", "byte_ngrams"},
      {"--byte-ngram-head", "63", "byte_ngram_head"},
      {"--byte-ngram-head", "65537", "byte_ngram_head"},
      {"--max-message-bytes", "18446744073709551616", "max_message_bytes"},
      {"--max-tokens", "0", "max_tokens"},
      {"--max-token-chars", "0", "max_token_chars"},
      {"--max-token-chars", "1001", "max_token_chars"},
      {"--boolean-counts", "maybe", "boolean_counts"},
      {"--header-tokens", "", "header_tokens"},
      {"--milter-fail-mode", "reject", "milter_fail_mode"},
      {"--milter-reject-score", "high", "milter_reject_score"},
      {"--train-margin", "-0.5", "train_margin"},
      {"--train-margin", "nan", "train_margin"},
      {"--milter-quarantine-score", "inf", "milter_quarantine_score"},
      {"--milter-socket-mode", "0999", "milter_socket_mode"},
      {"--milter-socket-mode", "01000", "milter_socket_mode"},
      {"--milter-reject-text", "", "milter_reject_text"},
      {"--milter-read-timeout-seconds", "0", "milter_read_timeout_seconds"},
      {"--spamd-listen", "783", "spamd_listen"},
      {"--spamd-listen", "::1:783", "spamd_listen"},
      {"--spamd-listen", "127.0.0.1:65536", "spamd_listen"},
      {"--spamd-read-timeout-seconds", "0", "spamd_read_timeout_seconds"},
      {"--spamd-read-timeout-seconds", "3601", "spamd_read_timeout_seconds"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flag + " " + c.value);
    EXPECT_THAT(LoadError({c.flag, c.value}),
                AllOf(HasSubstr(c.flag + ": invalid value '" + c.value + "'"),
                      HasSubstr("'" + c.key + "'"), HasSubstr("expected")));
  }
}

TEST_F(SettingsTest, SpamdKeysFromFlagsAndEnvironment) {
  auto loaded = Load(
      {"--spamd-listen", "[::1]:7830", "--spamd-read-timeout-seconds", "5", "--spamd-user-layers",
       "true"},
      {"NBSPAMD_SPAMD_TELL=mx from 127.0.0.1 users sa-learn", "NBSPAMD_MILTER_USER_LAYERS=true"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  const Settings& settings = loaded->settings;
  EXPECT_EQ(settings.spamd_listen, "[::1]:7830");
  EXPECT_EQ(settings.spamd_listen_host, "::1");
  EXPECT_EQ(settings.spamd_listen_port, 7830);
  EXPECT_EQ(settings.spamd_tell, "mx from 127.0.0.1 users sa-learn");
  EXPECT_EQ(settings.spamd_read_timeout_seconds, 5u);
  EXPECT_TRUE(settings.spamd_user_layers);
  EXPECT_TRUE(settings.milter_user_layers);

  auto defaults = Load({});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->settings.spamd_listen, "");
  EXPECT_EQ(defaults->settings.spamd_tell, "");
  EXPECT_EQ(defaults->settings.spamd_read_timeout_seconds, 30u);
  EXPECT_FALSE(defaults->settings.spamd_user_layers);
  EXPECT_FALSE(defaults->settings.milter_user_layers);
  // "" turns the listener off again.
  auto off = Load({"--spamd-listen", ""}, {"NBSPAMD_SPAMD_LISTEN=127.0.0.1:783"});
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->settings.spamd_listen, "");
  EXPECT_EQ(off->settings.spamd_listen_port, 0);
}

TEST_F(SettingsTest, MilterKeysFromFlagsAndEnvironment) {
  auto loaded =
      Load({"--milter-listen", "unix:/run/nbspamd/milter", "--milter-reject-score", "2.5",
            "--milter-socket-mode", "0666", "--milter-fail-mode", "tempfail"},
           {"NBSPAMD_MILTER_QUARANTINE_SCORE=1.5", "NBSPAMD_MILTER_SOCKET_GROUP=postfix"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  const Settings& settings = loaded->settings;
  EXPECT_EQ(settings.milter_listen, "unix:/run/nbspamd/milter");
  EXPECT_EQ(settings.milter_reject_score, 2.5);
  EXPECT_EQ(settings.milter_quarantine_score, 1.5);
  EXPECT_EQ(settings.milter_socket_mode, 0666u);
  EXPECT_EQ(settings.milter_socket_group, "postfix");
  EXPECT_EQ(settings.milter_fail_mode, "tempfail");

  auto defaults = Load({});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->settings.milter_listen, "");
  EXPECT_EQ(defaults->settings.milter_reject_score, std::nullopt);
  EXPECT_EQ(defaults->settings.milter_socket_mode, 0660u);
  EXPECT_EQ(defaults->settings.milter_fail_mode, "accept");
  // "" turns a threshold off again.
  auto off = Load({"--milter-reject-score", ""}, {"NBSPAMD_MILTER_REJECT_SCORE=3"});
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->settings.milter_reject_score, std::nullopt);
}

TEST_F(SettingsTest, TrainMarginFromFlagsAndEnvironment) {
  EXPECT_EQ(LoadOk({}).train_margin, 4.0) << "error-driven feedback by default";
  EXPECT_EQ(LoadOk({"--train-margin", "1.5"}).train_margin, 1.5);
  EXPECT_EQ(LoadOk({"--train-margin", "0"}).train_margin, 0.0);
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_TRAIN_MARGIN=2"}).train_margin, 2.0);
  EXPECT_EQ(LoadOk({"--train-margin", ""}, {"NBSPAMD_TRAIN_MARGIN=2"}).train_margin, std::nullopt);
  EXPECT_THAT(LoadError({"--train-margin", "-1"}), HasSubstr("at least 0"));
  EXPECT_EQ(LoadOk({}).score_form, "mean");
  EXPECT_EQ(LoadOk({"--score-form", "log-odds"}).score_form, "log-odds");
  EXPECT_THAT(LoadError({"--score-form", "sum"}), HasSubstr("mean or log-odds"));
  EXPECT_EQ(LoadOk({}).http_hosts, "");
  EXPECT_EQ(LoadOk({"--http-hosts", "filter.lan,mx.example"}).http_hosts, "filter.lan,mx.example");
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_HTTP_HOSTS=*"}).http_hosts, "*");
  EXPECT_EQ(LoadOk({}).verdict_thresholds, "fixed");
  EXPECT_EQ(LoadOk({"--verdict-thresholds", "feedback"}).verdict_thresholds, "feedback");
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_VERDICT_THRESHOLDS=feedback"}).verdict_thresholds, "feedback");
  EXPECT_THAT(LoadError({"--verdict-thresholds", "auto"}), HasSubstr("fixed or feedback"));
  EXPECT_EQ(LoadOk({}).train_warmup, 0u);
  EXPECT_EQ(LoadOk({"--train-warmup", "500"}).train_warmup, 500u);
  EXPECT_THAT(LoadError({"--train-warmup", "-5"}), HasSubstr("train_warmup"));
}

TEST_F(SettingsTest, ByteNgramsFromFlagsEnvironmentAndFile) {
  for (const std::size_t n : {0, 3, 4, 8}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(LoadOk({"--byte-ngrams", std::to_string(n)}).byte_ngrams, n);
  }
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_BYTE_NGRAMS=5"}).byte_ngrams, 5u);
  EXPECT_TRUE(LoadOk({"--fold-lookalikes", "true"}).fold_lookalikes);
  EXPECT_TRUE(LoadOk({}, {"NBSPAMD_FOLD_LOOKALIKES=on"}).fold_lookalikes);
  EXPECT_EQ(LoadOk({"--byte-ngram-head", "64"}).byte_ngram_head, 64u);
  EXPECT_EQ(LoadOk({"--byte-ngram-head=65536"}).byte_ngram_head, 65536u);
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_BYTE_NGRAM_HEAD=4096"}).byte_ngram_head, 4096u);
  const std::string path = WriteToml("ngrams.toml", "byte_ngrams = 4\nbyte_ngram_head = 1000\n");
  const Settings from_file = LoadOk({"--config", path});
  EXPECT_EQ(from_file.byte_ngrams, 4u);
  EXPECT_EQ(from_file.byte_ngram_head, 1000u);
  EXPECT_EQ(LoadError({"--byte-ngrams", "2"}),
            "--byte-ngrams: invalid value '2' for 'byte_ngrams': expected 0 (off) or a whole "
            "number from 3 to 8");
  EXPECT_THAT(LoadError({}, {"NBSPAMD_BYTE_NGRAM_HEAD=10"}),
              AllOf(HasSubstr("NBSPAMD_BYTE_NGRAM_HEAD"), HasSubstr("from 64 to 65536")));
  EXPECT_THAT(LoadError({"--config", WriteToml("bad.toml", "byte_ngrams = 12\n")}),
              AllOf(HasSubstr("config file"), HasSubstr("'byte_ngrams'")));
}

TEST_F(SettingsTest, CharacterNgramsAndTheirShare) {
  for (const std::size_t n : {0, 2, 4, 8}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(LoadOk({"--char-ngrams", std::to_string(n)}).char_ngrams, n);
  }
  EXPECT_EQ(LoadOk({}, {"NBSPAMD_CHAR_NGRAMS=5"}).char_ngrams, 5u);
  EXPECT_EQ(LoadOk({"--char-ngram-share", "0"}).char_ngram_share, 0.0);
  EXPECT_EQ(LoadOk({"--char-ngram-share=0.5"}).char_ngram_share, 0.5);
  const Settings from_file =
      LoadOk({"--config", WriteToml("grams.toml", "char_ngrams = 3\nchar_ngram_share = 0.2\n")});
  EXPECT_EQ(from_file.char_ngrams, 3u);
  EXPECT_EQ(from_file.char_ngram_share, 0.2);
  EXPECT_EQ(LoadError({"--char-ngrams", "1"}),
            "--char-ngrams: invalid value '1' for 'char_ngrams': expected 0 (off) or a whole "
            "number from 2 to 8");
  EXPECT_THAT(LoadError({"--char-ngrams", "9"}), HasSubstr("from 2 to 8"));
  for (const char* share : {"1", "-0.1", "1.5", "nan"}) {
    SCOPED_TRACE(share);
    EXPECT_THAT(LoadError({"--char-ngram-share", share}),
                AllOf(HasSubstr("'char_ngram_share'"), HasSubstr("not including, 1")));
  }
}

TEST_F(SettingsTest, InvalidEnvironmentValueNamesVariableAndKey) {
  EXPECT_EQ(LoadError({}, {"NBSPAMD_THREADS=abc"}),
            "NBSPAMD_THREADS: invalid value 'abc' for 'threads': expected a whole number from 0 "
            "to 256");
  EXPECT_THAT(LoadError({}, {"NBSPAMD_MAX_HEADER_BYTES=10"}),
              AllOf(HasSubstr("NBSPAMD_MAX_HEADER_BYTES"), HasSubstr("'max_header_bytes'"),
                    HasSubstr("from 1024 to 1048576")));
  EXPECT_THAT(LoadError({}, {"NBSPAMD_DATA_DIR="}),
              AllOf(HasSubstr("NBSPAMD_DATA_DIR"), HasSubstr("'data_dir'")));
  EXPECT_THAT(LoadError({}, {"NBSPAMD_LISTEN=nowhere"}),
              AllOf(HasSubstr("NBSPAMD_LISTEN"), HasSubstr("'listen'")));
}

TEST_F(SettingsTest, InvalidTomlValueNamesFileAndKey) {
  const std::string path = WriteToml("bad.toml", "data_dir = \"d\"\nthreads = 300\n");
  EXPECT_THAT(LoadError({"--config", path}),
              AllOf(HasSubstr("config file " + path), HasSubstr("invalid value '300'"),
                    HasSubstr("'threads'"), HasSubstr("line 2")));

  const std::string negative = WriteToml("negative.toml", "max_tokens = -1\n");
  EXPECT_THAT(LoadError({"--config", negative}),
              AllOf(HasSubstr("invalid value '-1'"), HasSubstr("'max_tokens'")));

  const std::string port = WriteToml("port.toml", "listen = \"[::1]:70000\"\n");
  EXPECT_THAT(LoadError({"--config", port}),
              AllOf(HasSubstr("invalid value '[::1]:70000'"), HasSubstr("'listen'")));

  const std::string inf = WriteToml("inf.toml", "spam_threshold = inf\n");
  EXPECT_THAT(LoadError({"--config", inf}),
              AllOf(HasSubstr("invalid value 'inf'"), HasSubstr("'spam_threshold'")));

  const std::string empty = WriteToml("empty_dir.toml", "data_dir = \"\"\n");
  EXPECT_THAT(LoadError({"--config", empty}), HasSubstr("'data_dir'"));
}

TEST_F(SettingsTest, AlphaMustBePositiveAndFinite) {
  for (const std::string bad : {"0", "0.0", "-1", "-0", "nan", "inf", "-inf", "1e999"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(LoadError({"--alpha", bad}),
                AllOf(HasSubstr("--alpha"), HasSubstr("'alpha'"), HasSubstr("greater than 0")));
    EXPECT_THAT(LoadError({}, {"NBSPAMD_ALPHA=" + bad}),
                AllOf(HasSubstr("NBSPAMD_ALPHA"), HasSubstr("'alpha'")));
  }
  for (const std::string toml :
       {"alpha = 0", "alpha = 0.0", "alpha = -0.5", "alpha = nan", "alpha = inf", "alpha = -inf"}) {
    SCOPED_TRACE(toml);
    const std::string path = WriteToml("alpha.toml", toml + "\n");
    EXPECT_THAT(LoadError({"--config", path}),
                AllOf(HasSubstr("config file"), HasSubstr("'alpha'"), HasSubstr("greater than 0")));
  }
  EXPECT_EQ(LoadOk({"--alpha", "1e-9"}).alpha, 1e-9);
}

TEST_F(SettingsTest, BoolParsingVariants) {
  for (const std::string yes : {"true", "1", "yes", "on", "TRUE", "Yes", "On"}) {
    SCOPED_TRACE(yes);
    EXPECT_TRUE(LoadOk({"--word-bigrams", yes}).word_bigrams);
    EXPECT_TRUE(LoadOk({}, {"NBSPAMD_WORD_BIGRAMS=" + yes}).word_bigrams);
  }
  for (const std::string no : {"false", "0", "no", "off", "FALSE", "No", "OFF"}) {
    SCOPED_TRACE(no);
    EXPECT_FALSE(LoadOk({"--header-tokens", no}).header_tokens);
    EXPECT_FALSE(LoadOk({}, {"NBSPAMD_HEADER_TOKENS=" + no}).header_tokens);
  }
  for (const std::string bad : {"", "2", "y", "n", "truee", "enabled", " true"}) {
    SCOPED_TRACE(bad);
    EXPECT_THAT(LoadError({"--boolean-counts", bad}), HasSubstr("'boolean_counts'"));
  }
  // TOML booleans are TOML booleans only.
  const std::string path = WriteToml("bool.toml", "boolean_counts = \"yes\"\n");
  EXPECT_THAT(LoadError({"--config", path}),
              AllOf(HasSubstr("wrong type for 'boolean_counts'"), HasSubstr("expected a boolean"),
                    HasSubstr("got a string")));
}

TEST_F(SettingsTest, UnknownTomlKeyIsNamed) {
  const std::string path = WriteToml("x.toml", "threads = 1\nfoo = 2\n");
  EXPECT_EQ(LoadError({"--config", path}), "config file " + path + ": unknown key 'foo' (line 2)");
}

TEST_F(SettingsTest, UnknownTomlKeysAreReportedInFileOrder) {
  const std::string path = WriteToml("order.toml", "zzz = 1\naaa = 2\n");
  EXPECT_THAT(LoadError({"--config", path}),
              AllOf(HasSubstr("unknown key 'zzz'"), Not(HasSubstr("aaa"))));
}

TEST_F(SettingsTest, TomlSectionIsRejected) {
  const std::string path = WriteToml("section.toml", "threads = 1\n[server]\nlisten = \"x:1\"\n");
  EXPECT_THAT(LoadError({"--config", path}),
              AllOf(HasSubstr("config file " + path), HasSubstr("unknown key 'server'"),
                    HasSubstr("sections are not supported")));

  const std::string dotted = WriteToml("dotted.toml", "server.listen = \"x:1\"\n");
  EXPECT_THAT(LoadError({"--config", dotted}), HasSubstr("unknown key 'server'"));

  const std::string named_like_key = WriteToml("alpha_table.toml", "[alpha]\nx = 1\n");
  EXPECT_THAT(LoadError({"--config", named_like_key}),
              AllOf(HasSubstr("wrong type for 'alpha'"), HasSubstr("got a table")));
}

TEST_F(SettingsTest, WrongTomlTypesAreRejected) {
  struct Case {
    std::string toml;
    std::string key;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"threads = \"4\"", "threads", "expected an integer, got a string"},
      {"threads = 4.0", "threads", "expected an integer, got a floating-point number"},
      {"alpha = \"1\"", "alpha", "expected a number, got a string"},
      {"alpha = true", "alpha", "expected a number, got a boolean"},
      {"listen = 7830", "listen", "expected a string, got an integer"},
      {"data_dir = [\"a\"]", "data_dir", "expected a string, got an array"},
      {"header_tokens = 1", "header_tokens", "expected a boolean, got an integer"},
      {"max_tokens = 1979-05-27", "max_tokens", "expected an integer, got a date"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.toml);
    const std::string path = WriteToml("type.toml", c.toml + "\n");
    EXPECT_THAT(LoadError({"--config", path}),
                AllOf(HasSubstr("config file " + path), HasSubstr("wrong type for '" + c.key + "'"),
                      HasSubstr(c.expected), HasSubstr("line 1")));
  }
}

TEST_F(SettingsTest, MalformedTomlIsRejected) {
  const std::string path = WriteToml("broken.toml", "threads = 1\nalpha = = 2\n");
  EXPECT_THAT(LoadError({"--config", path}), AllOf(HasSubstr("config file " + path),
                                                   HasSubstr("invalid TOML"), HasSubstr("line 2")));

  const std::string duplicate = WriteToml("duplicate.toml", "threads = 1\nthreads = 2\n");
  EXPECT_THAT(LoadError({"--config", duplicate}), HasSubstr("invalid TOML"));
}

TEST_F(SettingsTest, MissingConfigFileFails) {
  const std::string path = (dir_ / "missing.toml").string();
  EXPECT_THAT(LoadError({"--config", path}),
              AllOf(HasSubstr("config file " + path), HasSubstr("no such file")));
  EXPECT_THAT(LoadError({}, {"NBSPAMD_CONFIG=" + path}), HasSubstr("config file " + path));
  EXPECT_THAT(LoadError({"--config", dir_.string()}), HasSubstr("is a folder"));
  EXPECT_THAT(LoadError({"--config", ""}), HasSubstr("--config"));
  EXPECT_THAT(LoadError({}, {"NBSPAMD_CONFIG="}), HasSubstr("NBSPAMD_CONFIG"));
}

TEST_F(SettingsTest, UnknownEnvironmentVariableIsNamed) {
  EXPECT_EQ(LoadError({}, {"NBSPAMD_FOO=1"}), "unknown environment variable 'NBSPAMD_FOO'");
  // Names are exact: the key part is upper case.
  EXPECT_THAT(LoadError({}, {"NBSPAMD_data_dir=x"}), HasSubstr("'NBSPAMD_data_dir'"));
  EXPECT_THAT(LoadError({}, {"NBSPAMD_=x"}), HasSubstr("'NBSPAMD_'"));
}

TEST_F(SettingsTest, UnknownFlagIsNamed) {
  EXPECT_EQ(LoadError({"--foo"}), "unknown flag '--foo'");
  EXPECT_THAT(LoadError({"--foo=1"}), HasSubstr("'--foo'"));
  // No abbreviations, no underscores, no other letter case.
  EXPECT_THAT(LoadError({"--data", "x"}), HasSubstr("unknown flag '--data'"));
  EXPECT_THAT(LoadError({"--data_dir", "x"}), HasSubstr("unknown flag '--data_dir'"));
  EXPECT_THAT(LoadError({"--Threads", "1"}), HasSubstr("unknown flag '--Threads'"));
}

TEST_F(SettingsTest, FlagWithoutValueFails) {
  EXPECT_EQ(LoadError({"--threads"}), "--threads: missing value");
  EXPECT_THAT(LoadError({"--threads="}), HasSubstr("--threads: missing value"));
  EXPECT_THAT(LoadError({"--data-dir", "--threads", "4"}), HasSubstr("--data-dir: missing value"));
  EXPECT_THAT(LoadError({"--config"}), HasSubstr("--config: missing value"));
  EXPECT_THAT(LoadError({"--help=yes"}), HasSubstr("--help: takes no value"));
  // A value starting with "--" can still be given after '='.
  EXPECT_EQ(LoadOk({"--data-dir=--odd"}).data_dir, "--odd");
  // Negative numbers work as separate values.
  EXPECT_EQ(LoadOk({"--spam-threshold", "-1.25"}).spam_threshold, -1.25);
}

TEST_F(SettingsTest, PositionalArgumentsFail) {
  EXPECT_EQ(LoadError({"serve"}), "unexpected argument 'serve'");
  EXPECT_THAT(LoadError({"--threads", "1", "extra"}), HasSubstr("'extra'"));
  EXPECT_THAT(LoadError({"-h"}), HasSubstr("unexpected argument '-h'"));
  EXPECT_THAT(LoadError({"--", "--threads"}), HasSubstr("unexpected argument '--threads'"));
}

TEST_F(SettingsTest, HelpAction) {
  auto loaded = Load({"--help"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->action, LoadResult::Action::kHelp);
  EXPECT_EQ(loaded->help_text, HelpText());
  EXPECT_GE(loaded->settings.threads, 1u);

  // --help wins over bad settings elsewhere and over --version.
  loaded = Load({"--version", "--threads", "999", "--help"}, {"NBSPAMD_FOO=1"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->action, LoadResult::Action::kHelp);

  // But the command line itself must make sense.
  EXPECT_THAT(LoadError({"--help", "--bogus"}), HasSubstr("--bogus"));
}

TEST_F(SettingsTest, VersionAction) {
  auto loaded = Load({"--version"}, {"NBSPAMD_CONFIG=/does/not/exist.toml"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->action, LoadResult::Action::kVersion);
  EXPECT_TRUE(loaded->help_text.empty());
}

TEST_F(SettingsTest, RunHasNoHelpText) {
  auto loaded = Load({});
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->help_text.empty());
}

TEST_F(SettingsTest, HelpTextMentionsEveryKey) {
  const std::string help = HelpText();
  for (const std::string key : {"listen",
                                "data_dir",
                                "threads",
                                "alpha",
                                "spam_threshold",
                                "ham_threshold",
                                "score_min_weight",
                                "max_body_bytes",
                                "max_header_bytes",
                                "idle_timeout_seconds",
                                "shutdown_timeout_seconds",
                                "max_message_bytes",
                                "max_tokens",
                                "max_token_chars",
                                "boolean_counts",
                                "header_tokens",
                                "word_bigrams",
                                "byte_ngrams",
                                "byte_ngram_head",
                                "fold_lookalikes"}) {
    SCOPED_TRACE(key);
    std::string flag = "--" + key;
    std::ranges::replace(flag, '_', '-');
    std::string env = "NBSPAMD_" + key;
    std::ranges::transform(env, env.begin(), [](unsigned char c) { return std::toupper(c); });
    EXPECT_THAT(help, HasSubstr("TOML key " + key + ".\n"));
    EXPECT_THAT(help, HasSubstr("\n  " + flag + " "));
    EXPECT_THAT(help, HasSubstr("environment " + env + ";"));
  }
  EXPECT_THAT(help, HasSubstr("--config FILE"));
  EXPECT_THAT(help, HasSubstr("NBSPAMD_CONFIG"));
  EXPECT_THAT(help, HasSubstr("--help"));
  EXPECT_THAT(help, HasSubstr("--version"));
  EXPECT_THAT(help, HasSubstr("Default: \"127.0.0.1:7830\";"));
  EXPECT_THAT(help, HasSubstr("Default: 20000;"));
  EXPECT_THAT(help, HasSubstr("Default: 1.0;"));
  EXPECT_EQ(help.back(), '\n');
}

TEST_F(SettingsTest, HamThresholdAboveSpamThresholdIsAnError) {
  EXPECT_EQ(LoadError({"--ham-threshold", "1.5"}),
            "ham_threshold (1.5) must not be greater than spam_threshold (0.9): a message is ham "
            "at or below ham_threshold, spam above spam_threshold, unsure between them");
  // Whichever sources the two come from.
  const std::string path = WriteToml("thresholds.toml", "ham_threshold = 0.2\n");
  EXPECT_THAT(LoadError({"--config", path}, {"NBSPAMD_SPAM_THRESHOLD=0.1"}),
              HasSubstr("ham_threshold (0.2) must not be greater than spam_threshold (0.1)"));
  EXPECT_THAT(LoadError({"--spam-threshold", "-1"}, {"NBSPAMD_HAM_THRESHOLD=0"}),
              HasSubstr("ham_threshold (0.0) must not be greater than spam_threshold (-1.0)"));
  EXPECT_THAT(LoadError({"--spam-threshold", "-1"}, {"NBSPAMD_HAM_THRESHOLD=-0.6"}),
              HasSubstr("ham_threshold (-0.6) must not be greater than spam_threshold (-1.0)"));
  EXPECT_THAT(LoadError({"--ham-threshold", "nan"}), HasSubstr("'ham_threshold'"));
  EXPECT_THAT(LoadError({"--ham-threshold", "-inf"}), HasSubstr("'ham_threshold'"));
}

TEST_F(SettingsTest, EqualThresholdsAreTheTwoWayDecision) {
  const Settings settings = LoadOk({"--spam-threshold", "0.1", "--ham-threshold", "0.1"});
  EXPECT_EQ(settings.ham_threshold, 0.1);
  EXPECT_EQ(settings.spam_threshold, 0.1);
}

TEST_F(SettingsTest, AnUnsetHamThresholdFollowsALowerSpamThreshold) {
  // The default, -0.6, when spam_threshold is above it.
  EXPECT_EQ(LoadOk({"--spam-threshold", "0.3"}).ham_threshold, -0.6);
  // spam_threshold itself when that is lower, so a configuration that sets only spam_threshold
  // below the default keeps working (as the two-way decision).
  EXPECT_EQ(LoadOk({"--spam-threshold", "-0.7"}).ham_threshold, -0.7);
  const std::string path = WriteToml("spam_only.toml", "spam_threshold = -1\n");
  EXPECT_EQ(LoadOk({"--config", path}).ham_threshold, -1.0);
  // Given explicitly, it is what it says.
  EXPECT_EQ(LoadOk({"--spam-threshold", "-0.2", "--ham-threshold", "-0.5"}).ham_threshold, -0.5);
}

TEST_F(SettingsTest, UserLayerKeysFromEveryPlaceAndTheirRanges) {
  auto defaults = Load({});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->settings.user_beta, 1000.0);
  EXPECT_EQ(defaults->settings.user_gamma, 1.0);
  EXPECT_EQ(defaults->settings.train_global_from_users, "off");
  EXPECT_EQ(defaults->settings.user_token_limit, 100'000u);
  EXPECT_EQ(defaults->settings.user_cache_bytes, std::size_t{256} << 20);
  EXPECT_EQ(defaults->settings.user_idle_days, 0u);

  const std::string path = WriteToml("users.toml", "user_beta = 250\nuser_gamma = 0.5\n");
  auto loaded = Load({"--config", path, "--train-global-from-users", "on"},
                     {"NBSPAMD_USER_TOKEN_LIMIT=0", "NBSPAMD_USER_CACHE_BYTES=1048576"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->settings.user_beta, 250.0);
  EXPECT_EQ(loaded->settings.user_gamma, 0.5);
  EXPECT_EQ(loaded->settings.train_global_from_users, "on");
  EXPECT_EQ(loaded->settings.user_token_limit, 0u);
  EXPECT_EQ(loaded->settings.user_cache_bytes, 1048576u);
  EXPECT_EQ(LoadOk({"--user-idle-days", "180"}).user_idle_days, 180u);
  EXPECT_NE(LoadError({"--user-idle-days", "-1"}), "");
  EXPECT_EQ(defaults->settings.ledger_retention_days, 0u);
  EXPECT_EQ(LoadOk({"--ledger-retention-days", "365"}).ledger_retention_days, 365u);
  EXPECT_NE(LoadError({"--ledger-retention-days", "36501"}), "");
  EXPECT_EQ(LoadOk({"--ledger-retention-days", "30", "--cluster-redis", "127.0.0.1:6379"})
                .ledger_retention_days,
            30u);  // Through the training stream.
  // The token expiry: off by default, and only with a ledger retention.
  EXPECT_EQ(defaults->settings.token_expiry_days, 0u);
  EXPECT_EQ(defaults->settings.token_expiry_max_count, 1u);
  EXPECT_EQ(defaults->settings.token_expiry_min_messages, 20'000u);
  EXPECT_EQ(defaults->settings.token_keep_weight, 0.0);
  EXPECT_TRUE(defaults->settings.token_keep_ham);
  EXPECT_EQ(defaults->settings.token_cap, 0u);
  const Settings expiring =
      LoadOk({"--ledger-retention-days", "90", "--token-expiry-days", "180",
              "--token-expiry-max-count", "2", "--token-keep-weight", "3.5", "--token-cap",
              "5000000", "--token-keep-ham", "false", "--token-expiry-min-messages", "0"});
  EXPECT_EQ(expiring.token_expiry_days, 180u);
  EXPECT_EQ(expiring.token_expiry_min_messages, 0u);
  EXPECT_EQ(expiring.token_expiry_max_count, 2u);
  EXPECT_EQ(expiring.token_keep_weight, 3.5);
  EXPECT_FALSE(expiring.token_keep_ham);
  EXPECT_EQ(expiring.token_cap, 5000000u);
  EXPECT_THAT(LoadError({"--token-expiry-days", "180"}),
              HasSubstr("token_expiry_days and token_cap need ledger_retention_days"));
  EXPECT_THAT(LoadError({"--token-cap", "1000"}),
              HasSubstr("token_expiry_days and token_cap need ledger_retention_days"));
  EXPECT_NE(LoadError({"--token-expiry-max-count", "0"}), "");
  EXPECT_NE(LoadError({"--token-keep-weight", "-1"}), "");
  EXPECT_NE(LoadError({"--token-expiry-min-messages", "many"}), "");

  EXPECT_EQ(LoadError({"--user-beta", "0"}),
            "--user-beta: invalid value '0' for 'user_beta': expected a finite number greater "
            "than 0");
  EXPECT_EQ(LoadError({"--user-gamma", "-1"}),
            "--user-gamma: invalid value '-1' for 'user_gamma': expected a finite number greater "
            "than 0");
  EXPECT_EQ(LoadError({"--train-global-from-users", "yes"}),
            "--train-global-from-users: invalid value 'yes' for 'train_global_from_users': "
            "expected off, on or sources: and token names separated by commas");
  for (const char* bad : {"sources:", "sources:a,,b", "sources:a b", "sources:a,", "Sources:a"}) {
    EXPECT_FALSE(Load({"--train-global-from-users", bad}).has_value()) << bad;
  }
  const Settings listed = LoadOk({"--train-global-from-users", "sources:mx1,feedback-loop"});
  EXPECT_EQ(listed.train_global_from_users, "sources:mx1,feedback-loop");

  const auto off = ParseTrainGlobalFromUsers("off");
  ASSERT_TRUE(off.has_value());
  EXPECT_FALSE(off->on);
  const auto on = ParseTrainGlobalFromUsers("on");
  ASSERT_TRUE(on.has_value());
  EXPECT_TRUE(on->on);
  EXPECT_TRUE(on->sources.empty());
  const auto sources = ParseTrainGlobalFromUsers("sources:mx1,feedback-loop");
  ASSERT_TRUE(sources.has_value());
  EXPECT_TRUE(sources->on);
  EXPECT_EQ(sources->sources, (std::vector<std::string>{"mx1", "feedback-loop"}));
}

TEST_F(SettingsTest, AutolearnIsOffByDefaultAndItsKeysAreChecked) {
  const Settings defaults = LoadOk({});
  EXPECT_FALSE(defaults.autolearn);
  EXPECT_EQ(defaults.autolearn_spam_confidence, 0.99);
  EXPECT_EQ(defaults.autolearn_ham_confidence, 0.01);
  EXPECT_EQ(defaults.autolearn_max_class_ratio, 3.0);
  EXPECT_EQ(defaults.autolearn_queue_limit, 1000u);

  const std::string path = WriteToml("autolearn.toml",
                                     "autolearn = true\n"
                                     "autolearn_spam_confidence = 0.99\n");
  const Settings loaded =
      LoadOk({"--config", path, "--autolearn-max-class-ratio", "1.5"},
             {"NBSPAMD_AUTOLEARN_HAM_CONFIDENCE=0.02", "NBSPAMD_AUTOLEARN_QUEUE_LIMIT=10"});
  EXPECT_TRUE(loaded.autolearn);
  EXPECT_EQ(loaded.autolearn_spam_confidence, 0.99);
  EXPECT_EQ(loaded.autolearn_ham_confidence, 0.02);
  EXPECT_EQ(loaded.autolearn_max_class_ratio, 1.5);
  EXPECT_EQ(loaded.autolearn_queue_limit, 10u);

  EXPECT_EQ(LoadError({"--autolearn-spam-confidence", "1"}),
            "--autolearn-spam-confidence: invalid value '1' for 'autolearn_spam_confidence': "
            "expected a number greater than 0 and less than 1, greater than "
            "autolearn_ham_confidence");
  EXPECT_FALSE(Load({"--autolearn-ham-confidence", "0"}).has_value());
  EXPECT_FALSE(Load({"--autolearn-max-class-ratio", "0.5"}).has_value());
  EXPECT_FALSE(Load({"--autolearn-queue-limit", "0"}).has_value());
  EXPECT_EQ(LoadError({"--autolearn-spam-confidence", "0.4", "--autolearn-ham-confidence", "0.6"}),
            "autolearn_ham_confidence (0.6) must be less than autolearn_spam_confidence (0.4)");
  EXPECT_THAT(LoadError({"--autolearn", "true", "--cluster-redis", "127.0.0.1:6379"}),
              HasSubstr("autolearn is not available in cluster mode"));
}

// Cluster mode through Redis Sentinel: the sentinels' list is checked item by item, and
// cluster_min_replicas defaults to 1 with sentinels, 0 without.
TEST_F(SettingsTest, SentinelSettingsAndTheDefaultOfMinReplicas) {
  const Settings defaults = LoadOk({});
  EXPECT_EQ(defaults.cluster_sentinels, "");
  EXPECT_EQ(defaults.cluster_sentinel_master, "nbspamd");
  EXPECT_EQ(defaults.cluster_redis_password_file, "");
  EXPECT_EQ(defaults.cluster_sentinel_password_file, "");
  EXPECT_EQ(defaults.cluster_min_replicas, std::nullopt);
  EXPECT_EQ(defaults.cluster_replica_timeout_ms, 1000u);
  EXPECT_FALSE(InClusterMode(defaults));
  EXPECT_EQ(ClusterMinReplicas(defaults), 0u);
  EXPECT_EQ(ClusterMinReplicas(LoadOk({"--cluster-redis", "127.0.0.1:6379"})), 0u);

  const Settings sentinel =
      LoadOk({"--cluster-sentinels", "10.0.0.1:26379, 10.0.0.2:26380,sentinel-3:26379",
              "--cluster-sentinel-master", "mail"});
  EXPECT_TRUE(InClusterMode(sentinel));
  EXPECT_EQ(sentinel.cluster_redis, "");
  EXPECT_EQ(sentinel.cluster_sentinel_master, "mail");
  EXPECT_EQ(ClusterMinReplicas(sentinel), 1u);
  EXPECT_EQ(
      ClusterMinReplicas(LoadOk({"--cluster-sentinels", "s:26379", "--cluster-min-replicas", "0"})),
      0u);
  EXPECT_EQ(LoadOk({"--cluster-min-replicas", "2"}).cluster_min_replicas, 2u);
  EXPECT_EQ(LoadOk({"--cluster-replica-timeout-ms", "250"}).cluster_replica_timeout_ms, 250u);
  EXPECT_EQ(defaults.cluster_read_from, "replica");
  EXPECT_EQ(LoadOk({"--cluster-read-from", "primary"}).cluster_read_from, "primary");
  EXPECT_NE(LoadError({"--cluster-read-from", "replicas"}), "");

  EXPECT_NE(LoadError({"--cluster-sentinels", "10.0.0.1"}), "");
  EXPECT_NE(LoadError({"--cluster-sentinels", "10.0.0.1:26379,"}), "");
  EXPECT_NE(LoadError({"--cluster-sentinels", "10.0.0.1:0"}), "");
  EXPECT_NE(LoadError({"--cluster-sentinel-master", ""}), "");
  EXPECT_NE(LoadError({"--cluster-min-replicas", "17"}), "");
  EXPECT_NE(LoadError({"--cluster-min-replicas", "one"}), "");
  EXPECT_NE(LoadError({"--cluster-replica-timeout-ms", "0"}), "");
  EXPECT_THAT(LoadError({"--autolearn", "true", "--cluster-sentinels", "s:26379"}),
              HasSubstr("autolearn is not available in cluster mode"));
}

TEST_F(SettingsTest, NoTokenMayPassForAutolearn) {
  Settings settings;
  settings.auth_tokens = "mx1:0123456789abcdef0123";
  ASSERT_TRUE(LoadAuthTokens(settings).has_value());
  settings.auth_tokens = "autolearn:0123456789abcdef0123";
  const auto reserved = LoadAuthTokens(settings);
  ASSERT_FALSE(reserved.has_value());
  EXPECT_EQ(reserved.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(reserved.error().message, HasSubstr("reserved"));
}

TEST_F(SettingsTest, FormatSettingsAsTomlRoundTrips) {
  Settings settings;
  settings.listen_host = "::1";
  settings.listen_port = 0;
  settings.data_dir = "we\"ird\\dir\tname";
  settings.threads = 3;
  settings.alpha = 0.1;
  settings.spam_threshold = -1e-300;
  settings.ham_threshold = -2.5e-300;
  settings.max_body_bytes = 12345;
  settings.max_header_bytes = 2048;
  settings.idle_timeout_seconds = 7;
  settings.shutdown_timeout_seconds = 0;
  settings.max_message_bytes = 99;
  settings.max_tokens = 98;
  settings.max_token_chars = 97;
  settings.boolean_counts = false;
  settings.word_bigrams = true;
  settings.byte_ngrams = 5;
  settings.byte_ngram_head = 777;
  settings.header_tokens = false;
  settings.user_beta = 12.5;
  settings.user_gamma = 3;
  settings.train_global_from_users = "on";
  settings.user_token_limit = 0;
  settings.user_cache_bytes = 4096;
  const std::string toml = FormatSettingsAsToml(settings);
  EXPECT_THAT(toml, HasSubstr("listen = \"[::1]:0\"\n"));
  EXPECT_THAT(toml, HasSubstr("alpha = 0.1\n"));
  const std::string path = WriteToml("round.toml", toml);
  EXPECT_EQ(LoadOk({"--config", path}), settings);

  Settings defaults;
  defaults.threads = ResolvedDefaultThreads();
  const std::string default_path = WriteToml("defaults.toml", FormatSettingsAsToml(Settings{}));
  EXPECT_EQ(LoadOk({"--config", default_path}), defaults);
}

TEST_F(SettingsTest, LiveSettingsInTheDataFolderWinOverEverySource) {
  const std::string config = WriteToml("a.toml", "spam_threshold = 0.8\n");
  std::ofstream(dir_ / "live-settings.toml") << "spam_threshold = 0.6\nham_threshold = -0.4\n";
  auto loaded = Load({"--config", config, "--data-dir", dir_.string(), "--spam-threshold", "0.9"});
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message;
  EXPECT_EQ(loaded->settings.spam_threshold, 0.6);
  EXPECT_EQ(loaded->settings.ham_threshold, -0.4);
  EXPECT_EQ(loaded->live.values.size(), 2U);

  // A text given instead of the file (a reload checking a change) replaces it.
  std::vector<const char*> argv = {"nbspamd", "--data-dir", dir_.c_str()};
  auto checked = LoadSettings(argv, {}, std::string("spam_threshold = 0.5\n"));
  ASSERT_TRUE(checked.has_value()) << checked.error().message;
  EXPECT_EQ(checked->settings.spam_threshold, 0.5);
  EXPECT_EQ(checked->settings.ham_threshold, kDefaultHamThreshold);
}

TEST_F(SettingsTest, LiveSettingsHoldOnlyKeysThatCanBeSetLive) {
  std::ofstream(dir_ / "live-settings.toml") << "max_body_bytes = 10\n";
  EXPECT_THAT(
      LoadError({"--data-dir", dir_.string()}),
      AllOf(HasSubstr("live-settings.toml"), HasSubstr("'max_body_bytes' cannot be set live")));
}

TEST_F(SettingsTest, ChangeLiveSettingsChecksKeysAndValues) {
  auto changed = ChangeLiveSettings(
      {}, {.set = {{"spam_threshold", "0.75"}, {"autolearn", "true"}}, .unset = {}});
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  EXPECT_EQ(changed->values.at("spam_threshold"), "0.75");
  EXPECT_EQ(changed->values.at("autolearn"), "true");
  auto unset = ChangeLiveSettings(*changed, {.set = {}, .unset = {"autolearn"}});
  ASSERT_TRUE(unset.has_value());
  EXPECT_FALSE(unset->values.contains("autolearn"));

  EXPECT_THAT(
      ChangeLiveSettings({}, {.set = {{"listen", "0.0.0.0:1"}}, .unset = {}}).error().message,
      HasSubstr("'listen' cannot be set live"));
  EXPECT_THAT(ChangeLiveSettings({}, {.set = {{"nope", "1"}}, .unset = {}}).error().message,
              HasSubstr("unknown setting 'nope'"));
  EXPECT_THAT(
      ChangeLiveSettings({}, {.set = {{"spam_threshold", "x"}}, .unset = {}}).error().message,
      HasSubstr("invalid value 'x' for 'spam_threshold'"));
}

TEST_F(SettingsTest, LiveSettingsAreWrittenWholeAndRemovedWhenEmpty) {
  const std::string path = LiveSettingsPath(dir_.string());
  LiveSettings live;
  live.values["spam_threshold"] = "0.75";
  ASSERT_TRUE(WriteLiveSettings(path, live).has_value());
  auto read = ReadLiveSettings(path);
  ASSERT_TRUE(read.has_value()) << read.error().message;
  EXPECT_EQ(*read, live);
  EXPECT_FALSE(std::filesystem::exists(path + ".new"));
  ASSERT_TRUE(WriteLiveSettings(path, {}).has_value());
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(ReadLiveSettings(path)->values.empty());
  // A folder that cannot be written: an error naming the file, and nothing changes.
  auto failed = WriteLiveSettings((dir_ / "missing" / "live-settings.toml").string(), live);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(failed.error().message, HasSubstr("missing/live-settings.toml"));
}

}  // namespace
}  // namespace nbspamd::config
