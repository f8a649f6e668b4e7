// FileFrom: a Beast File (the File of http::basic_file_body) that reads a file from a byte offset
// on, so that a body in a file (http_api::kBodyFileField) can be the part of it a Range request
// asks for (http_api::kBodyFileOffsetField), streamed from disk like the whole.
//
// Thread safety: one thread at a time, as Beast's own file. Errors: those of the file under it;
// an offset past the end gives an empty body.
#ifndef NBSPAMD_HTTP_SERVER_FILE_FROM_H_
#define NBSPAMD_HTTP_SERVER_FILE_FROM_H_

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/file.hpp>
#include <cstddef>
#include <cstdint>

namespace nbspamd::http_server {

class FileFrom {
 public:
  FileFrom() = default;
  explicit FileFrom(std::uint64_t offset) : offset_(offset) {}

  [[nodiscard]] bool is_open() const { return file_.is_open(); }
  void close(boost::beast::error_code& ec) { file_.close(ec); }
  // Opens `path` and moves to the offset.
  void open(char const* path, boost::beast::file_mode mode, boost::beast::error_code& ec) {
    file_.open(path, mode, ec);
    if (!ec && offset_ > 0) file_.seek(offset_, ec);
  }
  // What follows the offset.
  std::uint64_t size(boost::beast::error_code& ec) const {
    const std::uint64_t whole = file_.size(ec);
    return whole > offset_ ? whole - offset_ : 0;
  }
  std::uint64_t pos(boost::beast::error_code& ec) const {
    const std::uint64_t at = file_.pos(ec);
    return at > offset_ ? at - offset_ : 0;
  }
  void seek(std::uint64_t offset, boost::beast::error_code& ec) {
    file_.seek(offset_ + offset, ec);
  }
  std::size_t read(void* buffer, std::size_t n, boost::beast::error_code& ec) const {
    return file_.read(buffer, n, ec);
  }
  std::size_t write(void const* buffer, std::size_t n, boost::beast::error_code& ec) {
    return file_.write(buffer, n, ec);
  }

 private:
  boost::beast::file file_;
  std::uint64_t offset_ = 0;
};

}  // namespace nbspamd::http_server

#endif  // NBSPAMD_HTTP_SERVER_FILE_FROM_H_
