// hwplan plot roofline | memory: SVG pictures of where a workload sits on a device's roofline, and of its memory
// breakdown on the devices compared.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <thread>

#include "cli/commands.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "estimators/efficiency.hpp"
#include "estimators/memory.hpp"
#include "estimators/operators.hpp"
#include "estimators/training.hpp"
#include "recommend/recommend.hpp"
#include "report/plots.hpp"
#include "report/svg.hpp"

namespace hwplan::cli {
namespace {

struct PlotOptions {
  GlobalOptions* global = nullptr;
  CLI::App* roofline = nullptr;
  CLI::App* memory = nullptr;
  WorkloadOptions workload;
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
  report::RooflineChart chart = report::roofline_chart(q.input, o.workload.task, o.workload.precision);
  write(o, report::render_roofline_svg(chart));
  return 0;
}


int run_memory(const PlotOptions& o) {
  io::Registry registry = make_registry(*o.global);
  report::MemoryChart chart;
  chart.title = fmt::format("{} {} ({}): memory per device", o.workload.model, o.workload.task, o.workload.precision);
  std::vector<std::string> ids = o.devices;
  if (ids.empty() && !o.workload.device.empty()) ids.push_back(o.workload.device);
  if (ids.empty()) {
    // From a recommend run: the top candidates, each at its chosen count.
    RecommendSpec spec;
    spec.top = 6;
    Recommendation r = recommend(registry, o.workload, spec, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    for (std::size_t i = 0; i < r.candidates.size() && i < 6; ++i)
      chart.bars.push_back(report::memory_bar(fmt::format("{} x{}", r.candidates[i].device->id, r.candidates[i].count), r.candidates[i].estimate));
  }
  for (const auto& id : ids) {
    const Device& d = registry.device(id);
    Query q = resolve_query(registry, o.workload, &d);
    Outcome out = run_query(q);
    chart.bars.push_back(report::memory_bar(fmt::format("{} x{}", d.id, q.input.system.count), out.estimate));
  }
  write(o, report::render_memory_svg(chart));
  return 0;
}

}  // namespace

Command plot_command() {
  auto o = std::make_shared<PlotOptions>();
  Command c;
  c.name = "plot";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    auto* plot = app.add_subcommand("plot", "SVG pictures: roofline of a device with the workload's operators; memory breakdown");
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
  };
  c.parsed = [o] { return o->roofline->parsed() || o->memory->parsed(); };
  c.run = [o] { return o->roofline->parsed() ? run_roofline(*o) : run_memory(*o); };
  return c;
}

}  // namespace hwplan::cli
