#include "tests/support/message_pool.h"

#include <iterator>
#include <random>

namespace nbspamd::testing {
namespace {

// A word list built from syllables, with a few non-ASCII words so ICU's path is taken too.
std::vector<std::string> MakeVocabulary(std::mt19937& rng) {
  static const char* const kSyllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                           "ze", "pa", "qu", "xi", "do", "fe", "gu", "ha"};
  static const char* const kExtra[] = {"café",  "naïve",   "straße",  "日本語", "данные", "ÜBER",
                                       "prize", "meeting", "invoice", "viagra", "lunch",  "free"};
  std::vector<std::string> words(std::begin(kExtra), std::end(kExtra));
  std::uniform_int_distribution<int> syllable(0, 15);
  std::uniform_int_distribution<int> length(1, 4);
  while (words.size() < 400) {
    std::string word;
    for (int n = length(rng); n > 0; --n) word += kSyllables[syllable(rng)];
    words.push_back(word);
  }
  return words;
}

std::string Words(std::mt19937& rng, const std::vector<std::string>& vocabulary, int count) {
  // Skewed towards the first words, so messages share tokens and counts pile up.
  std::uniform_int_distribution<std::size_t> pick(0, vocabulary.size() - 1);
  std::string text;
  for (int i = 0; i < count; ++i) {
    std::size_t index = pick(rng);
    if (i % 2 == 0) index %= 40;
    if (!text.empty()) text += ' ';
    text += vocabulary[index];
  }
  return text;
}

}  // namespace

// Plain texts and RFC 5322 mails (so GMime runs concurrently too), all from `seed`.
std::vector<std::string> MakeMessages(std::uint32_t seed, int count) {
  std::mt19937 rng(seed);
  const std::vector<std::string> vocabulary = MakeVocabulary(rng);
  std::uniform_int_distribution<int> length(3, 40);
  std::vector<std::string> messages;
  for (int i = 0; i < count; ++i) {
    std::string body = Words(rng, vocabulary, length(rng));
    if (i % 3 == 0) {
      body = "From: Sender " + std::to_string(i % 7) + " <user" + std::to_string(i % 11) + "@host" +
             std::to_string(i % 5) + ".example>\r\nSubject: " + Words(rng, vocabulary, 3) +
             "\r\nMessage-ID: <m" + std::to_string(i) +
             "@pool.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + body +
             "\r\nsee https://www" + std::to_string(i % 4) + ".example.org/x\r\n";
    }
    messages.push_back(std::move(body));
  }
  return messages;
}

// An id in Message-ID form, owned by one client.
std::string IdOf(int client, int n) {
  return "<c" + std::to_string(client) + ".n" + std::to_string(n) + "@clients.example>";
}

std::string QueryEncode(const std::string& text) {
  static const char* const kHex = "0123456789ABCDEF";
  std::string encoded;
  for (unsigned char c : text) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
        c == '-' || c == '_' || c == '@') {
      encoded += static_cast<char>(c);
    } else {
      encoded += '%';
      encoded += kHex[c >> 4];
      encoded += kHex[c & 15];
    }
  }
  return encoded;
}

}  // namespace nbspamd::testing
