// How fast two MIME libraries read the same mail, one thread: GMime 3 (the tokenizer's reader)
// and mimetic (Debian's libmimetic), a first measurement for issue 63's reader
// (docs/PERFORMANCE.md, "Issue 63 at a glance"). Each message is parsed from memory, every
// header value of every entity is read, and every leaf part's body is decoded from its transfer
// encoding (base64, quoted-printable) into bytes. GMime also decodes RFC 2047 words in the header
// values and handles more malformed input; mimetic does neither, so its figure is an upper bound
// for a reader built on it. The messages' mbox "From " line is left out for both (mimetic reads
// it as a body). Not part of the build: bench/mime/run compiles and runs it.
//   library_probe LIST_FILE [ROUNDS]   (one message path a line)
#include <gmime/gmime.h>
#include <mimetic/mimetic.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

static size_t sink = 0;

static void GmimeWalk(GMimeObject* object) {
  if (!object) return;
  GMimeHeaderList* headers = g_mime_object_get_header_list(object);
  for (int i = 0; i < g_mime_header_list_get_count(headers); ++i) {
    GMimeHeader* h = g_mime_header_list_get_header_at(headers, i);
    const char* v = g_mime_header_get_value(h);
    if (v) sink += strlen(v);
  }
  if (GMIME_IS_MULTIPART(object)) {
    GMimeMultipart* mp = GMIME_MULTIPART(object);
    for (int i = 0; i < g_mime_multipart_get_count(mp); ++i)
      GmimeWalk(g_mime_multipart_get_part(mp, i));
  } else if (GMIME_IS_MESSAGE_PART(object)) {
    GMimeMessage* m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(object));
    if (m) GmimeWalk(g_mime_message_get_mime_part(m));
  } else if (GMIME_IS_PART(object)) {
    GMimeDataWrapper* content = g_mime_part_get_content(GMIME_PART(object));
    if (!content) return;
    GMimeStream* out = g_mime_stream_mem_new();
    g_mime_data_wrapper_write_to_stream(content, out);
    sink += g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out))->len;
    g_object_unref(out);
  }
}

static void Gmime(const std::string& text) {
  GMimeStream* stream = g_mime_stream_mem_new_with_buffer(text.data(), text.size());
  GMimeParser* parser = g_mime_parser_new_with_stream(stream);
  GMimeMessage* message = g_mime_parser_construct_message(parser, nullptr);
  if (message) {
    GMimeHeaderList* headers = g_mime_object_get_header_list(GMIME_OBJECT(message));
    for (int i = 0; i < g_mime_header_list_get_count(headers); ++i) {
      const char* v = g_mime_header_get_value(g_mime_header_list_get_header_at(headers, i));
      if (v) sink += strlen(v);
    }
    GmimeWalk(g_mime_message_get_mime_part(message));
    g_object_unref(message);
  }
  g_object_unref(parser);
  g_object_unref(stream);
}

static void MimeticWalk(mimetic::MimeEntity& e) {
  for (const auto& field : e.header()) sink += field.value().size();
  auto& parts = e.body().parts();
  if (!parts.empty()) {
    for (mimetic::MimeEntity* p : parts) MimeticWalk(*p);
    return;
  }
  const std::string& body = e.body();
  const std::string cte = e.header().contentTransferEncoding().mechanism();
  std::string out;
  if (strcasecmp(cte.c_str(), "base64") == 0) {
    mimetic::Base64::Decoder d;
    mimetic::decode(body.begin(), body.end(), d, std::back_inserter(out));
  } else if (strcasecmp(cte.c_str(), "quoted-printable") == 0) {
    mimetic::QP::Decoder d;
    mimetic::decode(body.begin(), body.end(), d, std::back_inserter(out));
  } else {
    out = body;
  }
  sink += out.size();
}

static void Mimetic(const std::string& text) {
  mimetic::MimeEntity e(text.begin(), text.end());
  MimeticWalk(e);
}

int main(int argc, char** argv) {
  g_mime_init();
  std::vector<std::string> messages;
  size_t bytes = 0;
  std::string path;
  std::ifstream list(argv[1]);
  while (std::getline(list, path)) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    // The mbox "From " line, which mimetic takes for a body: left out for both.
    if (text.rfind("From ", 0) == 0) text.erase(0, text.find('\n') + 1);
    messages.push_back(text);
    bytes += messages.back().size();
  }
  const int rounds = argc > 2 ? atoi(argv[2]) : 5;
  std::vector<double> g, m;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (auto& s : messages) Gmime(s);
    auto t1 = std::chrono::steady_clock::now();
    for (auto& s : messages) Mimetic(s);
    auto t2 = std::chrono::steady_clock::now();
    g.push_back(bytes / std::chrono::duration<double>(t1 - t0).count() / 1e6);
    m.push_back(bytes / std::chrono::duration<double>(t2 - t1).count() / 1e6);
  }
  std::sort(g.begin(), g.end());
  std::sort(m.begin(), m.end());
  printf("%zu messages, %.1f MB; MB/s medians of %d rounds: GMime %.1f, mimetic %.1f (sink %zu)\n",
         messages.size(), bytes / 1e6, rounds, g[rounds / 2], m[rounds / 2], sink);
}
