// The front end shared by the CLI's JSON output, batch-style sweeps and the Python module: a command and its
// options as the CLI flags spell them, resolved by the CLI's own option table, answered with the JSON document
// `hwplan <command> ... --format json` prints. One path: the facade runs the command's own `result` function.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "io/registry.hpp"

namespace hwplan::api {

// One option: the flag's name (`--grad-accum`, `grad-accum` or `grad_accum`) and its value as it would be typed
// ("4", "2e10", "on"; "true"/"false" for plain flags such as --buy). A name may repeat (--class a --class b).
using Option = std::pair<std::string, std::string>;
using Options = std::vector<Option>;

struct Result {
  nlohmann::json json;  // the document `--format json` prints
  int exit_code = 0;    // the CLI's exit code (0 ok, 3 nothing feasible)
};

class Session {
 public:
  // Loads the built-in catalog and zoo (and HWPLAN_CATALOG / HWPLAN_MODELS, and the extra directories) once.
  explicit Session(io::RegistryOptions options = {});

  // `command` is what follows `hwplan` up to the flags: "estimate", "recommend", "fit", "compare",
  // "catalog list", "catalog show h100-sxm", "models list", "models show 7b". Bad input throws InputError with
  // the message the CLI prints after "hwplan: error: ". Safe to call from several threads at once.
  Result run(const std::string& command, const Options& options = {}) const;

  const io::Registry& registry() const { return *registry_; }

 private:
  std::shared_ptr<const io::Registry> registry_;
};

// The commands Session::run answers: those whose cli::Command sets `result`. A new subcommand (serve, tco)
// joins the facade, and with it the Python module, by setting `result` in its src/cli/*_cmd.cpp.
std::vector<std::string> commands();

// "--grad-accum", "grad_accum" -> "--grad-accum".
std::string flag_name(const std::string& name);

}  // namespace hwplan::api
