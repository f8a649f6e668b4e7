#include "http_server/head_response.h"

#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace nbspamd::http_server {

namespace http = boost::beast::http;

std::uint64_t BodyFileOffset(const http_api::Response& response) {
  const auto field = response.find(http_api::kBodyFileOffsetField);
  if (field == response.end()) return 0;
  const std::string_view text = field->value();
  std::uint64_t offset = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), offset);
  return error == std::errc{} && end == text.data() + text.size() ? offset : 0;
}

http_api::Response HeadOf(http_api::Response response) {
  std::uint64_t length = response.body().size();
  if (const auto file = response.find(http_api::kBodyFileField); file != response.end()) {
    const std::string path(file->value());
    std::error_code error;
    length = std::filesystem::file_size(path, error);
    const std::uint64_t offset = BodyFileOffset(response);
    length = length > offset ? length - offset : 0;
    ::unlink(path.c_str());
    response.erase(http_api::kBodyFileField);
    response.erase(http_api::kBodyFileOffsetField);
    if (error) {
      response =
          http_api::ErrorResponse(http::status::internal_server_error, "internal",
                                  "the response's body could not be read", response.version());
      length = response.body().size();
    }
  }
  response.content_length(length);
  response.body().clear();
  return response;
}

}  // namespace nbspamd::http_server
