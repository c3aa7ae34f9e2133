// The flags of hwplan serve and plot serve, and their resolution into a serving question over candidate layouts.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "serve/plan.hpp"

namespace hwplan::cli {

struct ServeOptions {
  WorkloadOptions workload;
  std::optional<double> rate;
  std::string arrival = "poisson";
  std::optional<double> burstiness;
  std::optional<long long> concurrency;
  std::optional<std::string> trace;
  std::optional<long long> requests;
  long long seed = 1;
  std::optional<std::string> prompt_dist, generate_dist;
  double prefix_cache_hit = 0;
  serve::Targets targets;
  std::optional<long long> block_size, max_batched_tokens, max_sequences;
  std::optional<double> kv_memory_fraction, step_overhead_ms;
  std::optional<std::string> chunked_prefill;
  int threads = 0;
  double own_years = 3;  // the owned cost per million tokens over this horizon (serve --own-years; recommend's)
};

// `threads_flag`: also register --threads (recommend has its own).
void add_serve_options(CLI::App& app, ServeOptions& o, bool threads_flag = true);
// Any flag that only serving reads was given (other tasks reject them).
bool serve_flags_given(const ServeOptions& o);

// A resolved serving question: the model, the device, the candidate layouts (each a validated query) and the
// traffic, targets and engine. Owns what the layouts point at.
struct ServeSetup {
  Model model;
  const Device* device = nullptr;
  std::deque<Query> queries;
  std::vector<const EstimateInput*> layouts;
  serve::ServeQuestion question;
  std::string traffic;                 // in words
  std::vector<std::string> warnings;
};
// Validates every flag (exit-2 errors name the flag or the trace's file:line). `device_override` replaces --device.
ServeSetup prepare_serve(const io::Registry& registry, ServeOptions& o, const Device* device_override = nullptr);
int threads_of(const ServeOptions& o);
// recommend --task serve: the catalog ranked by cost (or devices, or energy) per million output tokens among the
// devices that meet the targets.
int run_recommend_serve(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                        const RecommendSpec& spec, int threads);
// The same ranking as the document `--format json` prints (the API facade).
CommandResult recommend_serve_result(GlobalOptions& g, const WorkloadOptions& w, const ServeOptions& serve_flags,
                                     const RecommendSpec& spec, int threads);

}  // namespace hwplan::cli
