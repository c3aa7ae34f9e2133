// The table of subcommands: each file registers its flags (setup) and runs (run), CLI11-example style.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace hwplan::cli {

// The answer of a command as data: the JSON document `--format json` prints, and the exit code.
struct CommandResult {
  nlohmann::json json;
  int exit_code = kExitOk;
};

struct Command {
  std::string name;  // as typed after `hwplan`
  std::function<void(CLI::App&, GlobalOptions&)> setup;
  std::function<bool()> parsed;
  std::function<int()> run;
  // Set for the commands the API facade (src/api) offers: the same computation and JSON as `run` with
  // --format json, returned instead of printed.
  std::function<CommandResult()> result;
  // Puts the options `setup` bound back to their defaults, so that the facade can parse again with the same
  // CLI::App (building one costs more than most estimates).
  std::function<void()> reset;
};

Command catalog_command();
Command models_command();
Command estimate_command();
Command validate_command();
Command recommend_command();
Command fit_command();
Command compare_command();
Command batch_command();
Command plot_command();
Command calibrate_command();
Command doctor_command();
Command serve_command();
Command tco_command();
Command assumptions_command();
std::vector<Command> all_commands();

}  // namespace hwplan::cli
