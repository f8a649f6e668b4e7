// What binding a scan to its message costs each classify with the history on (history/
// body_digest.h, history/scan_signature.h): the body's digest and the scan's signature, over the
// corpus as it is stored (LF line ends) and as it comes over SMTP (the milter, an MTA's HTTP
// client: CRLF). BM_Sha256OfMessage, one SHA-256 of each whole message in one call, is the
// floor the digest cannot go below.
//
//   NBSPAMD_BENCH_CORPUS=bench/accuracy/corpus build/release/bench/scan_signing_benchmark
//       [--benchmark_repetitions=5 --benchmark_report_aggregates_only=true]
//
// Each iteration is one pass over every corpus message; bytes/s are of the raw messages, items/s
// messages a second.
#include <benchmark/benchmark.h>
#include <openssl/evp.h>

#include <array>
#include <string>
#include <vector>

#include "bench/corpus_files.h"
#include "history/body_digest.h"
#include "history/scan_signature.h"

namespace {

using nbspamd::bench::CorpusMessages;

// The corpus with every LF made CRLF, as a message arrives over SMTP.
const std::vector<std::string>& CrlfMessages() {
  static const std::vector<std::string> messages = [] {
    std::vector<std::string> out;
    for (const std::string& message : CorpusMessages()) {
      std::string crlf;
      crlf.reserve(message.size() + message.size() / 32);
      for (const char c : message) {
        if (c == '\n') crlf.push_back('\r');
        crlf.push_back(c);
      }
      out.push_back(std::move(crlf));
    }
    return out;
  }();
  return messages;
}

std::int64_t BytesOf(const std::vector<std::string>& messages) {
  std::int64_t bytes = 0;
  for (const std::string& message : messages) bytes += static_cast<std::int64_t>(message.size());
  return bytes;
}

void BM_BodyDigest(benchmark::State& state) {
  const std::vector<std::string>& messages =
      state.range(0) == 0 ? CorpusMessages() : CrlfMessages();
  for (auto _ : state) {
    for (const std::string& message : messages) {
      benchmark::DoNotOptimize(nbspamd::history::BodyDigest(message));
    }
  }
  state.SetBytesProcessed(state.iterations() * BytesOf(messages));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(messages.size()));
}
BENCHMARK(BM_BodyDigest)->ArgName("crlf")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_Sha256OfMessage(benchmark::State& state) {
  const std::vector<std::string>& messages = CorpusMessages();
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  for (auto _ : state) {
    for (const std::string& message : messages) {
      EVP_DigestInit_ex(context, md, nullptr);
      EVP_DigestUpdate(context, message.data(), message.size());
      EVP_DigestFinal_ex(context, digest.data(), &size);
      benchmark::DoNotOptimize(digest);
    }
  }
  EVP_MD_CTX_free(context);
  EVP_MD_free(md);
  state.SetBytesProcessed(state.iterations() * BytesOf(messages));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(messages.size()));
}
BENCHMARK(BM_Sha256OfMessage)->Unit(benchmark::kMillisecond);

void BM_SignScan(benchmark::State& state) {
  const nbspamd::history::ScanKey key = nbspamd::history::NewScanKey();
  const std::string digest(nbspamd::history::kBodyDigestBytes, 'd');
  for (auto _ : state) {
    benchmark::DoNotOptimize(nbspamd::history::SignScan(key, "018bcfe568001a2b0003", digest));
  }
}
BENCHMARK(BM_SignScan);

}  // namespace

BENCHMARK_MAIN();
