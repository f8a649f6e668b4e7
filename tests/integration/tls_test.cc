// HTTPS on the HTTP listener (tls_cert_file, tls_key_file) through the real daemon and a real
// client: curl (Debian's, over OpenSSL) with a certificate made for the test by the openssl
// command, trusted as its own CA.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/daemon_process.h"
#include "tests/support/http_client.h"
#include "tests/support/temp_dir.h"

namespace nbspamd::testing {
namespace {

namespace http = boost::beast::http;

struct CommandResult {
  int status = -1;
  std::string output;
};

// Runs a shell command (stderr joined to stdout).
CommandResult Shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> chunk;
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
    result.output.append(chunk.data(), n);
  }
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cert_ = dir_.Join("cert.pem");
    key_ = dir_.Join("key.pem");
    const CommandResult made = Shell(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        key_ + " -out " + cert_);
    ASSERT_EQ(made.status, 0) << made.output;
  }

  DaemonProcess StartTls() {
    return StartTestDaemon(dir_.Join("model"), {"--tls-cert-file", cert_, "--tls-key-file", key_});
  }

  TempDir dir_;
  std::string cert_;
  std::string key_;
};

TEST_F(TlsTest, CurlTrainsAndClassifiesOverHttps) {
  DaemonProcess daemon = StartTls();
  for (const auto& [label, text] : std::vector<std::pair<std::string, std::string>>{
           {"spam", "cheap pills buy now"}, {"ham", "meeting notes for tuesday"}}) {
    const CommandResult learned = Shell(
        "curl -sS --cacert " + cert_ + " -w '\\n%{http_code}' --data-binary '" + text +
        "' 'https://127.0.0.1:" + std::to_string(daemon.port()) + "/train?label=" + label + "'");
    EXPECT_EQ(learned.status, 0) << learned.output;
    EXPECT_NE(learned.output.find("\"status\":\"learned\""), std::string::npos) << learned.output;
  }
  const CommandResult classified = Shell(
      "curl -sS --cacert " + cert_ + " -w '\\n%{http_code}' --data-binary 'buy cheap pills' " +
      "https://127.0.0.1:" + std::to_string(daemon.port()) + "/classify");
  EXPECT_EQ(classified.status, 0) << classified.output;
  EXPECT_NE(classified.output.find("\"verdict\":\"spam\""), std::string::npos) << classified.output;
  EXPECT_TRUE(classified.output.ends_with("\n200")) << classified.output;
  // The console is served over HTTPS too.
  const CommandResult console =
      Shell("curl -sS --cacert " + cert_ + " -o /dev/null -w '%{http_code}' https://127.0.0.1:" +
            std::to_string(daemon.port()) + "/ui/");
  EXPECT_EQ(console.output, "200");
  // A body sent after "100 Continue", and a response whose body is a file (the model's dump).
  const CommandResult continued =
      Shell("printf 'Subject: pills\\n\\n%03000d' 0 | curl -sS --cacert " + cert_ +
            " -H 'Expect: 100-continue' -w '\\n%{http_code}' --data-binary @- https://127.0.0.1:" +
            std::to_string(daemon.port()) + "/classify");
  EXPECT_EQ(continued.status, 0) << continued.output;
  EXPECT_NE(continued.output.find("\"verdict\""), std::string::npos) << continued.output;
  EXPECT_TRUE(continued.output.ends_with("\n200")) << continued.output;
  const CommandResult dumped =
      Shell("curl -sS --cacert " + cert_ + " https://127.0.0.1:" + std::to_string(daemon.port()) +
            "/admin/dump");
  EXPECT_EQ(dumped.status, 0) << dumped.output;
  EXPECT_TRUE(dumped.output.starts_with("nbspamd-dump 1\n")) << dumped.output.substr(0, 200);
  EXPECT_NE(dumped.output.find("\ndocuments 1 1\n"), std::string::npos) << dumped.output;
  EXPECT_NE(dumped.output.find("\nend 1 "), std::string::npos) << dumped.output;
}

TEST_F(TlsTest, AClientThatDoesNotTrustTheCertificateOrSpeaksPlainHttpGetsNothing) {
  DaemonProcess daemon = StartTls();
  const std::string url = "https://127.0.0.1:" + std::to_string(daemon.port()) + "/stats";
  // Without the CA, curl refuses the certificate (exit 60: peer certificate cannot be
  // authenticated): the daemon really presents the configured one.
  EXPECT_EQ(Shell("curl -sS " + url).status, 60);
  // Plain HTTP to the HTTPS port: no answer, the connection is closed; the daemon serves on.
  HttpClient plain(daemon.port());
  EXPECT_ANY_THROW((void)plain.Send(http::verb::get, "/stats", ""));
  const CommandResult after = Shell("curl -sS --cacert " + cert_ + " " + url);
  EXPECT_EQ(after.status, 0) << after.output;
  EXPECT_NE(after.output.find("\"documents\":0"), std::string::npos) << after.output;
}

TEST_F(TlsTest, ABadTlsSettingStopsTheStartWithAClearError) {
  const ProcessExit lone = RunToExit(
      {"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("model"), "--tls-cert-file", cert_});
  EXPECT_EQ(lone.status, 1);
  EXPECT_NE(lone.output.find("tls_cert_file and tls_key_file go together"), std::string::npos)
      << lone.output;
  std::ofstream(dir_.Join("junk.pem")) << "not a certificate\n";
  const ProcessExit junk =
      RunToExit({"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("model"), "--tls-cert-file",
                 dir_.Join("junk.pem"), "--tls-key-file", key_});
  EXPECT_EQ(junk.status, 1);
  EXPECT_NE(junk.output.find("tls_cert_file '" + dir_.Join("junk.pem") + "'"), std::string::npos)
      << junk.output;
  // A key that is not the certificate's.
  ASSERT_EQ(Shell("openssl genrsa -out " + dir_.Join("other.pem") + " 2048").status, 0);
  const ProcessExit other =
      RunToExit({"--listen", "127.0.0.1:0", "--data-dir", dir_.Join("model"), "--tls-cert-file",
                 cert_, "--tls-key-file", dir_.Join("other.pem")});
  EXPECT_EQ(other.status, 1);
  EXPECT_NE(other.output.find("tls_key_file"), std::string::npos) << other.output;
}

}  // namespace
}  // namespace nbspamd::testing
