// hwplan: which hardware for this model and task, will it fit, how long, how fast, and why.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli/commands.hpp"
#include "io/assumptions_io.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace {

constexpr const char* kDescription = R"(hwplan - plan deep-learning hardware: fit, time, throughput, cost.

Examples:
  hwplan recommend --model llama-2-7b --task lora --budget-usd 3000 --buy
  hwplan estimate --model llama-3-8b --device h100-sxm --count 8 --seq 8192 --global-batch 128
  hwplan estimate --model llama-2-70b --device a100-80gb-sxm --task infer --weights int4 --batch 8
  hwplan fit --model llama-2-13b --device rtx-4090 --task finetune
  hwplan serve --model llama-3-8b --device h100-sxm --rate 20 --prompt 2000 --generate 300 --ttft-p95 1 --tpot-p95 0.05
  hwplan catalog list --class consumer
  hwplan models show mixtral-8x7b --format json
  hwplan validate --measurements data/measurements/step-latency-neusight.yaml

Exit codes: 0 ok, 1 internal error, 2 bad input (file:line:column and key named), 3 nothing feasible.
Errors go to stderr as 'hwplan: error: <where>: key '<key>': <message>'.)";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{kDescription, "hwplan"};
  app.set_version_flag("--version", std::string("hwplan ") + HWPLAN_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global options (--catalog, --models) also work after the subcommand
  app.get_formatter()->column_width(34);
  hwplan::cli::GlobalOptions global;
  hwplan::cli::add_global_options(app, global);
  for (int i = 0; i < argc; ++i) {
    std::string arg = i == 0 ? std::string("hwplan") : std::string(argv[i]);
    bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    global.command_line += (i ? " " : "") + (quote ? "'" + arg + "'" : arg);
  }

  std::vector<hwplan::cli::Command> commands = hwplan::cli::all_commands();
  for (auto& c : commands) c.setup(app, global);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const hwplan::InputError& e) {
    // An option's own check (an on|off switch given something else) while parsing.
    std::fprintf(stderr, "hwplan: error: %s\n", e.what());
    return hwplan::kExitBadInput;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "hwplan: error: %s\n", e.what());
    // A misspelt subcommand or flag: name the nearest one.
    std::vector<std::string> names;
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      auto near = hwplan::nearest(argv[1], names);
      std::fprintf(stderr, "hwplan: error: '%s' is not a command%s\n", argv[1],
                   near ? (" (did you mean '" + *near + "'?)").c_str() : "; the commands are listed by 'hwplan --help'");
    } else {
      const CLI::App* sub = nullptr;
      for (const auto* c : app.get_subcommands([](const CLI::App*) { return true; }))
        if (argc > 1 && c->get_name() == argv[1]) sub = c;
      if (sub) {
        std::vector<std::string> flags;
        for (const auto* opt : sub->get_options())
          for (const auto& n : opt->get_lnames()) flags.push_back("--" + n);
        for (const auto* sub2 : sub->get_subcommands([](const CLI::App*) { return true; }))
          for (const auto* opt : sub2->get_options())
            for (const auto& n : opt->get_lnames()) flags.push_back("--" + n);
        for (int i = 2; i < argc; ++i) {
          std::string arg = argv[i];
          if (arg.rfind("--", 0) != 0) continue;
          arg = arg.substr(0, arg.find('='));
          if (std::find(flags.begin(), flags.end(), arg) != flags.end()) continue;
          if (app.get_option_no_throw(arg) != nullptr) continue;
          if (auto near = hwplan::nearest(arg, flags))
            std::fprintf(stderr, "hwplan: error: unknown flag '%s' (did you mean '%s'?)\n", arg.c_str(), near->c_str());
        }
      }
    }
    std::fprintf(stderr, "Run 'hwplan --help' or 'hwplan <command> --help' for usage.\n");
    return hwplan::kExitBadInput;
  }
  try {
    // Physics constants overridden for this run: the environment's files, then --assumptions, later ones winning.
    std::vector<std::string> files = hwplan::io::assumption_files_from_environment();
    files.insert(files.end(), global.assumption_files.begin(), global.assumption_files.end());
    if (!files.empty()) hwplan::set_assumptions(hwplan::io::apply_assumption_files(hwplan::Assumptions{}, files));
    for (auto& c : commands)
      if (c.parsed()) return c.run();
    return hwplan::kExitBadInput;
  } catch (const hwplan::InputError& e) {
    std::fprintf(stderr, "hwplan: error: %s\n", e.what());
    return hwplan::kExitBadInput;
  } catch (const hwplan::Infeasible& e) {
    std::fprintf(stderr, "hwplan: nothing feasible: %s\n", e.what());
    return hwplan::kExitNothingFeasible;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hwplan: internal error: %s\n", e.what());
    return hwplan::kExitInternal;
  }
}
