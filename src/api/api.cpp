#include "api/api.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <map>
#include <sstream>

#include "cli/commands.hpp"
#include "core/error.hpp"

namespace hwplan::api {

Session::Session(io::RegistryOptions options) {
  io::add_environment(options);
  auto registry = std::make_shared<io::Registry>(options);
  // Parse now: the registry loads lazily, and later calls may come from several threads at once.
  registry->devices();
  registry->models();
  registry_ = std::move(registry);
}

std::string flag_name(const std::string& name) {
  std::string s = name;
  while (!s.empty() && s.front() == '-') s.erase(s.begin());
  std::replace(s.begin(), s.end(), '_', '-');
  return "--" + s;
}

std::vector<std::string> commands() {
  std::vector<std::string> out;
  for (const auto& c : cli::all_commands())
    if (c.result) out.push_back(c.name);
  return out;
}

namespace {

// One command's parser, set up once per thread and cleared between calls (building the CLI::App of a
// command with 50 options costs several times more than an estimate).
struct Parser {
  cli::Command command;
  CLI::App app{"hwplan", "hwplan"};
  cli::GlobalOptions global;
};

Parser* parser_for(const std::string& name) {
  thread_local std::map<std::string, std::unique_ptr<Parser>> parsers;
  auto found = parsers.find(name);
  if (found != parsers.end()) return found->second.get();
  for (auto& c : cli::all_commands()) {
    if (c.name != name || !c.result) continue;
    auto p = std::make_unique<Parser>();
    p->command = std::move(c);
    p->command.setup(p->app, p->global);
    return parsers.emplace(name, std::move(p)).first->second.get();
  }
  return nullptr;
}

}  // namespace

Result Session::run(const std::string& command, const Options& options) const {
  std::vector<std::string> words;
  std::istringstream in(command);
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) throw InputError({}, "command", "empty command");
  Parser* parser = parser_for(words[0]);
  if (!parser) {
    std::string known;
    for (const auto& n : commands()) known += (known.empty() ? "" : ", ") + n;
    throw InputError({}, "command", "'" + words[0] + "' is not one of: " + known);
  }
  CLI::App& app = parser->app;
  app.clear();
  parser->command.reset();
  parser->global = cli::GlobalOptions{};
  parser->global.registry = registry_;
  CLI::App* sub = &app;
  for (const auto& w : words) {
    auto found = sub->get_subcommands([&](const CLI::App* a) { return a->get_name() == w; });
    if (!found.empty()) sub = found.front();
  }
  // As they would be typed: a plain flag alone ("true") or with its value ("--buy=false"), others "--name value".
  std::vector<std::string> args = words;
  for (const auto& [name, value] : options) {
    std::string flag = flag_name(name);
    const CLI::Option* option = sub->get_option_no_throw(flag);
    if (option && option->get_expected_max() == 0) {
      args.push_back(value == "true" ? flag : flag + "=" + value);
    } else {
      args.push_back(flag);
      args.push_back(value);
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw InputError(e.what());
  }
  if (!parser->command.parsed()) throw InputError({}, "command", "'" + command + "' needs a subcommand");
  cli::CommandResult r = parser->command.result();
  return {std::move(r.json), r.exit_code};
}

}  // namespace hwplan::api
