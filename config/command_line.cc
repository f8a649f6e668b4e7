#include "config/command_line.h"

#include <algorithm>
#include <boost/program_options.hpp>

namespace nbspamd::config {

namespace po = boost::program_options;

std::expected<CommandLine, Error> ParseCommandLine(std::span<const char* const> argv) {
  std::vector<std::string> args;
  for (std::size_t i = 1; i < argv.size() && argv[i] != nullptr; ++i) args.emplace_back(argv[i]);

  po::options_description description;
  description.add_options()("config", po::value<std::string>(), "")("help", "")("version", "");
  for (const Key& key : Keys()) {
    description.add_options()(FlagName(key.name).substr(2).c_str(), po::value<std::string>(), "");
  }

  // Long flags only, spelt out in full, case-sensitive; the value follows after '=' or as the
  // next argument.
  constexpr int kStyle = po::command_line_style::allow_long |
                         po::command_line_style::long_allow_adjacent |
                         po::command_line_style::long_allow_next;
  po::parsed_options parsed(&description);
  try {
    parsed = po::command_line_parser(args).options(description).style(kStyle).run();
  } catch (const po::unknown_option& e) {
    // For "--foo=1" the parser names "--foo=1"; the flag is "--foo".
    const std::string name = e.get_option_name();
    return InvalidArgument("unknown flag '" + name.substr(0, name.find('=')) + "'");
  } catch (const po::invalid_command_line_syntax& e) {
    switch (e.kind()) {
      case po::invalid_syntax::missing_parameter:
      case po::invalid_syntax::empty_adjacent_parameter:
        return InvalidArgument(e.get_option_name() + ": missing value");
      case po::invalid_syntax::extra_parameter:
        return InvalidArgument(e.get_option_name() + ": takes no value");
      default:
        return InvalidArgument(std::string("invalid command line: ") + e.what());
    }
  } catch (const po::error& e) {
    return InvalidArgument(std::string("invalid command line: ") + e.what());
  }

  CommandLine command_line;
  for (const po::option& option : parsed.options) {
    if (option.string_key.empty() || option.position_key >= 0) {
      const std::string argument = option.original_tokens.empty() ? "" : option.original_tokens[0];
      return InvalidArgument("unexpected argument '" + argument + "'");
    }
    const std::string flag = "--" + option.string_key;
    if (option.string_key == "help") {
      command_line.help = true;
      continue;
    }
    if (option.string_key == "version") {
      command_line.version = true;
      continue;
    }
    if (option.value.size() != 1) return InvalidArgument(flag + ": missing value");
    const std::string& text = option.value.front();
    // "--listen --threads 4": the flag lacks its value rather than having "--threads" as one.
    if (option.original_tokens.size() == 2 && text.starts_with("--")) {
      return InvalidArgument(flag + ": missing value (write " + flag + "=VALUE for a value " +
                             "beginning with '--')");
    }
    if (option.string_key == "config") {
      command_line.config = text;
      continue;
    }
    const std::span<const Key> keys = Keys();
    const auto key =
        std::ranges::find_if(keys, [&](const Key& k) { return FlagName(k.name) == flag; });
    if (key == keys.end()) return InvalidArgument("unknown flag '" + flag + "'");
    command_line.values.push_back(TextValue{&*key, text, flag});
  }
  return command_line;
}

}  // namespace nbspamd::config
