// The peers a joining daemon fetches its model from (cluster_join_from) and the settings around
// them.
#include "config/join_peers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/settings.h"

namespace nbspamd::config {
namespace {

// The settings of `args` (after "nbspamd"), or the error's message.
std::expected<Settings, std::string> JoinSettings(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"nbspamd"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  auto loaded = LoadSettings(argv, std::vector<std::string>{});
  if (!loaded) return std::unexpected(loaded.error().message);
  return loaded->settings;
}

TEST(JoinPeersTest, ReadsHttpUrlsOfHostsAndPorts) {
  const auto peers =
      ParseJoinPeers("http://10.0.0.5:7830, http://nbspamd-b.internal/,http://[::1]:9");
  ASSERT_TRUE(peers.has_value());
  ASSERT_EQ(peers->size(), 3u);
  EXPECT_EQ((*peers)[0],
            (JoinPeer{.host = "10.0.0.5", .port = 7830, .url = "http://10.0.0.5:7830"}));
  EXPECT_EQ(
      (*peers)[1],
      (JoinPeer{.host = "nbspamd-b.internal", .port = 80, .url = "http://nbspamd-b.internal:80"}));
  EXPECT_EQ((*peers)[2], (JoinPeer{.host = "::1", .port = 9, .url = "http://[::1]:9"}));
}

TEST(JoinPeersTest, ReadsHttpsUrlsToo) {
  const auto peers = ParseJoinPeers("https://nbspamd-a.example, https://127.0.0.1:7830");
  ASSERT_TRUE(peers.has_value());
  ASSERT_EQ(peers->size(), 2u);
  EXPECT_EQ((*peers)[0], (JoinPeer{.host = "nbspamd-a.example",
                                   .port = 443,
                                   .tls = true,
                                   .url = "https://nbspamd-a.example:443"}));
  EXPECT_EQ(
      (*peers)[1],
      (JoinPeer{.host = "127.0.0.1", .port = 7830, .tls = true, .url = "https://127.0.0.1:7830"}));
}

TEST(JoinPeersTest, RefusesWhatIsNotAPlainHttpUrlOfAHost) {
  for (const char* bad : {"", "10.0.0.5:7830", "ftp://10.0.0.5:7830", "https://", "httpss://a:1",
                          "http://", "http://:7830", "http://a:0", "http://a:65536", "http://a:",
                          "http://a:78x", "http://a/admin", "http://u@a:1", "http://a:1,",
                          "http://::1:7830", "http://[::1", "http://[]:1", "http://a b:1"}) {
    EXPECT_FALSE(ParseJoinPeers(bad).has_value()) << bad;
  }
}

TEST(JoinPeersTest, TheSettingNeedsClusterModeAndAValidList) {
  const auto joined =
      JoinSettings({"--cluster-redis", "127.0.0.1:6379", "--cluster-join-from",
                    "http://127.0.0.1:7830", "--cluster-join-token-file", "/etc/nbspamd/join.token",
                    "--cluster-join-timeout-seconds", "60"});
  ASSERT_TRUE(joined.has_value()) << joined.error();
  EXPECT_EQ(joined->cluster_join_from, "http://127.0.0.1:7830");
  EXPECT_EQ(joined->cluster_join_token_file, "/etc/nbspamd/join.token");
  EXPECT_EQ(joined->cluster_join_timeout_seconds, 60u);

  const auto defaults = JoinSettings({});
  ASSERT_TRUE(defaults.has_value());
  EXPECT_EQ(defaults->cluster_join_from, "");
  EXPECT_EQ(defaults->cluster_join_token_file, "");
  EXPECT_EQ(defaults->cluster_join_timeout_seconds, 600u);

  const auto standalone = JoinSettings({"--cluster-join-from", "http://127.0.0.1:7830"});
  ASSERT_FALSE(standalone.has_value());
  EXPECT_NE(standalone.error().find("cluster_join_from needs cluster mode"), std::string::npos)
      << standalone.error();
  const auto malformed =
      JoinSettings({"--cluster-redis", "127.0.0.1:6379", "--cluster-join-from", "127.0.0.1:7830"});
  ASSERT_FALSE(malformed.has_value());
  EXPECT_NE(malformed.error().find("cluster_join_from"), std::string::npos) << malformed.error();
  EXPECT_FALSE(JoinSettings({"--cluster-join-timeout-seconds", "5"}).has_value());
}

}  // namespace
}  // namespace nbspamd::config
