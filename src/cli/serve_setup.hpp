// The flags of hwplan serve and plot serve (resolved into a serving question by recommend/serve_setup.hpp), and
// recommend --task serve.
#pragma once

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "recommend/serve_setup.hpp"

namespace hwplan::cli {

// The serving flags' values, as WorkloadOptions holds the workload flags'.
using ServeOptions = ServeSpec;

// `threads_flag`: also register --threads (recommend has its own).
void add_serve_options(CLI::App& app, ServeOptions& o, bool threads_flag = true);
// serve and plot serve: --engine lists the engines the simulation has (the shared workload flag lists every
// inference preset).
void describe_serving_engines(CLI::App& app);
// Any flag that only serving reads was given (other tasks reject them).
bool serve_flags_given(const ServeOptions& o);
int threads_of(const ServeOptions& o);
// recommend --task serve: the catalog ranked by cost (or devices, or energy) per million output tokens among the
// devices that meet the targets.
int run_recommend_serve(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                        const RecommendSpec& spec, int threads);
// The same ranking as the document `--format json` prints (the API facade).
CommandResult recommend_serve_result(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                                     const RecommendSpec& spec, int threads);

}  // namespace hwplan::cli
