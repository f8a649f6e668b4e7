#include "config/toml_source.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "config/keys.h"

namespace nbspamd::config {
namespace {

std::string_view TomlTypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

std::string_view ExpectedTomlType(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "a boolean";
    case Kind::kUnsigned:
      return "an integer";
    case Kind::kDouble:
      return "a number";
    case Kind::kString:
      return "a string";
  }
  return "a value";
}

std::string LineSuffix(const toml::source_region& source) {
  if (source.begin.line == 0) return {};
  return " (line " + std::to_string(source.begin.line) + ")";
}

// Stores the TOML `node` found under `key`; `where` is "config file <path>".
std::expected<void, Error> ApplyToml(Settings& settings, const Key& key, const toml::node& node,
                                     std::string_view where) {
  const std::string line = LineSuffix(node.source());
  std::optional<Value> value;
  std::string shown;
  switch (key.kind) {
    case Kind::kBool:
      if (const auto* b = node.as_boolean()) {
        value = b->get();
        shown = b->get() ? "true" : "false";
      }
      break;
    case Kind::kUnsigned:
      if (const auto* i = node.as_integer()) {
        shown = std::to_string(i->get());
        if (i->get() < 0) return InvalidValue(where, shown, key, line);
        value = static_cast<std::uint64_t>(i->get());
      }
      break;
    case Kind::kDouble:
      if (const auto* f = node.as_floating_point()) {
        value = f->get();
        shown = FormatDouble(f->get());
      } else if (const auto* i = node.as_integer()) {
        value = static_cast<double>(i->get());
        shown = std::to_string(i->get());
      }
      break;
    case Kind::kString:
      if (const auto* s = node.as_string()) {
        value = s->get();
        shown = s->get();
      }
      break;
  }
  if (!value) {
    return InvalidArgument(std::string(where) + ": wrong type for '" + std::string(key.name) +
                           "': expected " + std::string(ExpectedTomlType(key.kind)) + ", got " +
                           std::string(TomlTypeName(node.type())) + line);
  }
  if (!key.set(settings, *value)) return InvalidValue(where, shown, key, line);
  return {};
}

}  // namespace

namespace {

// The entries of `text` in the order they appear in it (the table is sorted by key), each a
// known key. Errors: invalid TOML; an unknown key or a section.
std::expected<std::vector<std::pair<const Key*, const toml::node*>>, Error> Entries(
    const toml::table& table, const std::string& where) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (const auto& [name, node] : table) entries.emplace_back(&name, &node);
  std::ranges::stable_sort(entries, {}, [](const auto& entry) {
    const auto& begin = entry.first->source().begin;
    return std::pair(begin.line, begin.column);
  });
  std::vector<std::pair<const Key*, const toml::node*>> known;
  for (const auto& [name, node] : entries) {
    const Key* key = FindKey(name->str());
    if (key == nullptr) {
      std::vector<std::string> notes;
      if (const auto line = name->source().begin.line; line != 0) {
        notes.push_back("line " + std::to_string(line));
      }
      if (node->is_table()) notes.emplace_back("the file is flat, sections are not supported");
      std::string message = where + ": unknown key '" + std::string(name->str()) + "'";
      for (std::size_t i = 0; i < notes.size(); ++i) {
        message += (i == 0 ? " (" : "; ") + notes[i] + (i + 1 == notes.size() ? ")" : "");
      }
      return InvalidArgument(std::move(message));
    }
    known.emplace_back(key, node);
  }
  return known;
}

std::expected<toml::table, Error> ParseToml(std::string_view text, const std::string& where,
                                            const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return InvalidArgument(where + ": invalid TOML: " + std::string(e.description()) + " (line " +
                           std::to_string(begin.line) + ", column " + std::to_string(begin.column) +
                           ")");
  }
}

}  // namespace

std::expected<std::string, Error> ReadTomlText(const std::string& path) {
  const std::string where = "config file " + path;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) return InvalidArgument(where + ": no such file");
  if (std::filesystem::is_directory(status)) return InvalidArgument(where + ": is a folder");
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return InvalidArgument(where + ": cannot open: " + std::strerror(errno));
  }
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return InvalidArgument(where + ": cannot read");
  return std::move(contents).str();
}

std::expected<void, Error> ApplyTomlText(Settings& settings, std::string_view text,
                                         const std::string& where, const std::string& source) {
  auto table = ParseToml(text, where, source);
  if (!table) return std::unexpected(std::move(table.error()));
  auto entries = Entries(*table, where);
  if (!entries) return std::unexpected(std::move(entries.error()));
  for (const auto& [key, node] : *entries) {
    if (auto applied = ApplyToml(settings, *key, *node, where); !applied) return applied;
  }
  return {};
}

std::expected<std::vector<std::pair<std::string, std::string>>, Error> TomlValues(
    std::string_view text, const std::string& where) {
  auto table = ParseToml(text, where, where);
  if (!table) return std::unexpected(std::move(table.error()));
  auto entries = Entries(*table, where);
  if (!entries) return std::unexpected(std::move(entries.error()));
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& [key, node] : *entries) {
    Settings scratch;
    if (auto applied = ApplyToml(scratch, *key, *node, where); !applied) {
      return std::unexpected(std::move(applied.error()));
    }
    values.emplace_back(key->name, key->format(scratch));
  }
  return values;
}

std::expected<void, Error> ApplyTomlFile(Settings& settings, const std::string& path) {
  auto text = ReadTomlText(path);
  if (!text) return std::unexpected(std::move(text.error()));
  return ApplyTomlText(settings, *text, "config file " + path, path);
}

}  // namespace nbspamd::config
