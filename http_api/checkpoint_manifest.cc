#include "http_api/checkpoint_manifest.h"

#include <boost/json.hpp>
#include <charconv>
#include <set>
#include <utility>

#include "common/sha256.h"

namespace nbspamd::http_api {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxCheckpointFileName = 128;
// A RocksDB checkpoint has a handful of files per level; far more is not one of ours.
constexpr std::size_t kMaxCheckpointFiles = 100000;

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool IsDecimal(std::string_view text) {
  if (text.empty() || text.size() > 20) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::unexpected<Error> ManifestError(const std::string& what) {
  return MakeError(ErrorCode::kInvalidArgument, "not a checkpoint manifest: " + what);
}

}  // namespace

std::uint64_t CheckpointManifest::TotalBytes() const {
  std::uint64_t total = 0;
  for (const CheckpointFile& file : files) total += file.size;
  return total;
}

bool IsCheckpointId(std::string_view id) {
  if (id.size() != 32) return false;
  for (const char c : id) {
    if (!IsLowerHex(c)) return false;
  }
  return true;
}

bool IsCheckpointFileName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCheckpointFileName || name.front() == '.') return false;
  for (const char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsStreamPositionText(std::string_view position) {
  if (position.empty()) return true;
  const std::size_t dash = position.find('-');
  if (dash == std::string_view::npos) return false;
  return IsDecimal(position.substr(0, dash)) && IsDecimal(position.substr(dash + 1));
}

std::optional<std::uint64_t> ParseRangeFrom(std::string_view range) {
  constexpr std::string_view kPrefix = "bytes=";
  if (!range.starts_with(kPrefix) || !range.ends_with('-')) return std::nullopt;
  const std::string_view digits = range.substr(kPrefix.size(), range.size() - kPrefix.size() - 1);
  if (!IsDecimal(digits)) return std::nullopt;
  std::uint64_t from = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), from);
  if (error != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  return from;
}

std::string CheckpointManifestJson(const CheckpointManifest& manifest) {
  json::array files;
  files.reserve(manifest.files.size());
  for (const CheckpointFile& file : manifest.files) {
    files.push_back(
        json::object{{"name", file.name}, {"size", file.size}, {"sha256", file.sha256}});
  }
  return json::serialize(json::object{
      {"id", manifest.id}, {"position", manifest.position}, {"files", std::move(files)}});
}

std::expected<CheckpointManifest, Error> ParseCheckpointManifest(std::string_view text) {
  boost::system::error_code ec;
  const json::value value = json::parse(text, ec);
  if (ec) return ManifestError("not JSON (" + ec.message() + ")");
  const json::object* object = value.if_object();
  if (object == nullptr) return ManifestError("not a JSON object");
  CheckpointManifest manifest;
  const json::value* id = object->if_contains("id");
  if (id == nullptr || !id->is_string() || !IsCheckpointId(id->get_string())) {
    return ManifestError("\"id\" is not 32 lower-case hex digits");
  }
  manifest.id = std::string(id->get_string());
  const json::value* position = object->if_contains("position");
  if (position == nullptr || !position->is_string() ||
      !IsStreamPositionText(position->get_string())) {
    return ManifestError("\"position\" is not a stream entry id or \"\"");
  }
  manifest.position = std::string(position->get_string());
  const json::value* files = object->if_contains("files");
  if (files == nullptr || !files->is_array()) return ManifestError("\"files\" is not an array");
  if (files->get_array().size() > kMaxCheckpointFiles) return ManifestError("too many files");
  std::set<std::string, std::less<>> names;
  for (const json::value& entry : files->get_array()) {
    const json::object* file = entry.if_object();
    const json::value* name = file ? file->if_contains("name") : nullptr;
    const json::value* size = file ? file->if_contains("size") : nullptr;
    const json::value* sha256 = file ? file->if_contains("sha256") : nullptr;
    if (name == nullptr || !name->is_string() || !IsCheckpointFileName(name->get_string())) {
      return ManifestError("a file's \"name\" is not a plain file name");
    }
    const std::string file_name(name->get_string());
    if (size == nullptr || !(size->is_uint64() || (size->is_int64() && size->get_int64() >= 0))) {
      return ManifestError("the \"size\" of " + file_name + " is not a byte count");
    }
    if (sha256 == nullptr || !sha256->is_string() || !IsSha256Hex(sha256->get_string())) {
      return ManifestError("the \"sha256\" of " + file_name + " is not 64 lower-case hex digits");
    }
    if (!names.insert(file_name).second) return ManifestError(file_name + " is listed twice");
    manifest.files.push_back(
        CheckpointFile{.name = file_name,
                       .size = size->is_uint64() ? size->get_uint64()
                                                 : static_cast<std::uint64_t>(size->get_int64()),
                       .sha256 = std::string(sha256->get_string())});
  }
  if (!names.contains("CURRENT")) return ManifestError("it lists no CURRENT file");
  return manifest;
}

}  // namespace nbspamd::http_api
