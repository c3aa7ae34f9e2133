// The table of subcommands: each file registers its flags (setup) and runs (run), CLI11-example style.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

#include "cli/common.hpp"

namespace hwplan::cli {

struct Command {
  std::function<void(CLI::App&, GlobalOptions&)> setup;
  std::function<bool()> parsed;
  std::function<int()> run;
};

Command catalog_command();
Command models_command();
Command estimate_command();
Command validate_command();
Command recommend_command();
Command fit_command();
Command batch_command();
Command plot_command();
Command calibrate_command();
Command doctor_command();
Command tco_command();
std::vector<Command> all_commands();

}  // namespace hwplan::cli
