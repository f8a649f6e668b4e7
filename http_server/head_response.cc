#include "http_server/head_response.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

namespace nbspamd::http_server {

namespace http = boost::beast::http;

http_api::Response HeadOf(http_api::Response response) {
  std::uint64_t length = response.body().size();
  if (const auto file = response.find(http_api::kBodyFileField); file != response.end()) {
    const std::string path(file->value());
    std::error_code error;
    length = std::filesystem::file_size(path, error);
    ::unlink(path.c_str());
    response.erase(http_api::kBodyFileField);
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
