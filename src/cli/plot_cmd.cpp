// hwplan plot roofline | memory | serve: SVG pictures of where a workload sits on a device's roofline, and of its memory
// breakdown on the devices compared.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

#include "cli/commands.hpp"
#include "cli/serve_setup.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/memory.hpp"
#include "estimators/operators.hpp"
#include "estimators/training.hpp"
#include "recommend/recommend.hpp"
#include "recommend/front_end.hpp"
#include "report/plots.hpp"
#include "report/svg.hpp"

namespace hwplan::cli {
namespace {

struct PlotOptions {
  GlobalOptions* global = nullptr;
  CLI::App* roofline = nullptr;
  CLI::App* memory = nullptr;
  CLI::App* serve = nullptr;
  WorkloadOptions workload;
  ServeOptions serve_options;
  std::vector<std::string> devices;
  std::string output;
};

void write(const PlotOptions& o, const std::string& svg) {
  if (o.output.empty()) throw InputError({}, "-o", "give the SVG file to write with -o FILE.svg");
  GlobalOptions g = *o.global;
  g.output = o.output;
  emit(g, svg);
  std::fprintf(stderr, "hwplan: wrote %s\n", o.output.c_str());
}

int run_roofline(const PlotOptions& o) {
  io::Registry registry = make_registry(*o.global);
  Query q = resolve_query(registry, o.workload);
  Outcome out = run_query(q);
  q.input.plan = out.estimate.plan;
  report::RooflineChart chart = report::roofline_chart(q.input, o.workload.task);
  write(o, report::render_roofline_svg(chart));
  return 0;
}


// The devices a plot draws: --device first, then --devices, each once whatever name or alias gave it.
std::vector<const Device*> devices_to_draw(const io::Registry& registry, const std::string& one,
                                           const std::vector<std::string>& list) {
  std::vector<const Device*> out;
  auto add = [&](const std::string& name, const char* flag) {
    const Device* d = nullptr;
    try {
      d = &registry.device(name);
    } catch (const InputError& e) {
      throw InputError({}, flag, e.detail());
    }
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  if (!one.empty()) add(one, "--device");
  for (const auto& name : list) add(name, "--devices");
  return out;
}

int run_memory(const PlotOptions& o) {
  io::Registry registry = make_registry(*o.global);
  report::MemoryChart chart;
  chart.title = fmt::format("{} {} ({}): memory per device", o.workload.model, o.workload.task, o.workload.precision);
  // --device with --devices: one more bar (as plot serve and recommend take them), not one left out.
  const std::vector<const Device*> drawn = devices_to_draw(registry, o.workload.device, o.devices);
  if (drawn.empty()) {
    // From a recommend run: the top candidates, each at its chosen count.
    RecommendSpec spec;
    spec.top = 6;
    Recommendation r = recommend(registry, o.workload, spec, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    for (std::size_t i = 0; i < r.candidates.size() && i < 6; ++i)
      chart.bars.push_back(report::memory_bar(fmt::format("{} x{}", r.candidates[i].device->id, r.candidates[i].count), r.candidates[i].estimate));
  }
  const Model model = registry.model(o.workload.model);
  for (const Device* device : drawn) {
    const Device& d = *device;
    Query q = resolve_query(model, d, o.workload, o.workload.count, profile_scope(registry, o.workload, d));
    Outcome out = run_query(q);
    chart.bars.push_back(report::memory_bar(fmt::format("{} x{}", d.id, q.input.system.count), out.estimate));
  }
  write(o, report::render_memory_svg(chart));
  return 0;
}

// p95 TTFT and TPOT of one replica against its load, per device: the chosen layout (with targets: the one that
// serves the asked load on the fewest devices, its highest load within the targets marked as the knee).
int run_serve_plot(PlotOptions& o) {
  io::Registry registry = make_registry(*o.global);
  // --device with --devices: one more device to draw (as recommend takes them), not one left out.
  const std::vector<const Device*> drawn = devices_to_draw(registry, o.serve_options.workload.device, o.devices);
  if (drawn.empty()) throw InputError({}, "--device", "give --device or --devices");
  const serve::Targets& targets = o.serve_options.targets;
  if (targets.e2e_p95 || targets.e2e_p99)
    std::fprintf(stderr, "warning: the end-to-end target is not drawn (the panels are TTFT and TPOT); the knee counts it\n");
  std::vector<report::LatencySeries> series;
  std::string model_id;
  std::optional<serve::ServeQuestion> first;
  for (const Device* device : drawn) {
    const Device& d = *device;
    // A device refused names the flag that gave it (--device is drawn first), and which device it was.
    const char* flag = device == drawn.front() && !o.serve_options.workload.device.empty() ? "--device" : "--devices";
    std::optional<ServeSetup> prepared;
    try {
      prepared.emplace(prepare_serve(registry, o.serve_options, &d));
    } catch (const InputError& e) {
      if (e.key() != "--device") throw;
      throw InputError(e.where(), flag, e.detail());
    }
    ServeSetup& setup = *prepared;
    const serve::ServeQuestion& q = setup.question;
    serve::ServeAnswer a = serve::plan_serving(setup.layouts, q, threads_of(o.serve_options));
    auto s = report::serve_latency_series(setup.layouts, q, a, d.id);
    if (!s) throw InputError({}, flag, q.engine.preset + ": " + setup.model.id + " does not fit " + d.id);
    series.push_back(std::move(*s));
    if (!first) {
      first = q;
      model_id = setup.model.id;
    }
  }
  report::LatencyChart chart = report::serve_latency_chart(model_id, std::move(series), *first);
  write(o, report::render_latency_svg(chart));
  return 0;
}

}  // namespace

Command plot_command() {
  auto o = std::make_shared<PlotOptions>();
  Command c;
  c.name = "plot";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    auto* plot = app.add_subcommand("plot", "SVG pictures: roofline of a device with the workload's operators; memory breakdown; serving latency against load");
    plot->require_subcommand(1);
    o->roofline = plot->add_subcommand("roofline", "Log-log roofline with the workload's operators as points.")->footer(R"(Example:
  hwplan plot roofline --device h100-sxm --model llama-2-7b --seq 4096 -o roofline.svg)");
    add_workload_options(*o->roofline, o->workload);
    o->roofline->add_option("-o,--output", o->output, "SVG file to write")->required();
    o->memory = plot->add_subcommand("memory", "Stacked memory breakdown per device against capacity.")->footer(R"(Examples:
  hwplan plot memory --model llama-2-13b --task lora --devices rtx-4090,a100-80gb-sxm,h100-sxm -o memory.svg
  hwplan plot memory --model llama-2-7b --task lora -o memory.svg     # the top candidates of a recommend run)");
    add_workload_options(*o->memory, o->workload, /*device_required=*/false);
    o->memory->add_option("--devices", o->devices, "Devices to compare (comma-separated)")->delimiter(',');
    o->memory->add_option("-o,--output", o->output, "SVG file to write")->required();
    o->serve = plot->add_subcommand("serve", "p95 TTFT and TPOT against request rate per device, targets drawn, knee marked.")->footer(R"(Examples:
  hwplan plot serve --model llama-3-8b --devices h100-sxm,l40s --prompt 2000 --generate 300 --rate 20 --ttft-p95 1 --tpot-p95 0.05 -o serve.svg
  hwplan plot serve --model llama-3-8b --device rtx-4090 --concurrency 16 --prompt 512 --generate 256 -o knee.svg)");
    o->serve_options.workload.task = "infer";
    add_workload_options(*o->serve, o->serve_options.workload, /*device_required=*/false);
    add_serve_options(*o->serve, o->serve_options);
    describe_serving_engines(*o->serve);
    o->serve->add_option("--devices", o->devices, "Devices to compare (comma-separated)")->delimiter(',');
    o->serve->add_option("-o,--output", o->output, "SVG file to write")->required();
  };
  c.parsed = [o] { return o->roofline->parsed() || o->memory->parsed() || o->serve->parsed(); };
  c.run = [o] { return o->roofline->parsed() ? run_roofline(*o) : o->memory->parsed() ? run_memory(*o) : run_serve_plot(*o); };
  return c;
}

}  // namespace hwplan::cli
