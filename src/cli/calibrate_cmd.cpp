// hwplan calibrate: measure the local device(s) and write a profile the estimators use; hwplan doctor: the local
// environment, with hints.
#include <fmt/format.h>

#include <filesystem>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "calibrate/calibrate.hpp"
#include "calibrate/doctor.hpp"
#include "cli/commands.hpp"
#include "report/json.hpp"
#include "core/strings.hpp"
#include "core/units.hpp"
#include "io/atomic_file.hpp"
#include "io/profile_io.hpp"

namespace hwplan::cli {
namespace {

using nlohmann::json;

struct CalibrateCliOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
  std::string backend = "auto";
  std::optional<int> device_index;
  bool quick = false;
  std::string output;
};

std::string rate(double v, const std::string& unit) {
  if (unit == "GB/s") return fmt::format("{:.1f} GB/s", v / kGB);
  if (unit == "TFLOP/s") return fmt::format("{:.3g} TFLOP/s", v / kTera);
  if (unit == "us") return fmt::format("{:.1f} us", v * 1e6);
  return fmt::format("{:.3g}", v);
}

// The JSON carries the raw SI value: its unit is the SI one (the table converts to the unit the summary names).
std::string si_unit(const std::string& unit) {
  if (unit == "GB/s") return "B/s";
  if (unit == "TFLOP/s") return "FLOP/s";
  if (unit == "us") return "s";
  return unit;
}

int run_calibrate(CalibrateCliOptions& o) {
  io::Registry registry = make_registry(*o.global);
  // Where the profile goes is checked before minutes of measuring, not after.
  if (!o.output.empty()) {
    namespace fs = std::filesystem;
    const fs::path parent = fs::path(o.output).parent_path();
    std::error_code ec;
    if (!parent.empty() && !fs::is_directory(parent, ec))
      throw InputError({}, "--output", "cannot write " + o.output + ": " + parent.string() + " is not a directory");
  }
  calibrate::CalibrateOptions co;
  co.backend = o.backend;
  co.device_index = o.device_index;
  co.quick = o.quick;
  co.progress = [](const std::string& line) { std::fprintf(stderr, "hwplan: %s\n", line.c_str()); };
  auto runs = calibrate::run_calibration(registry, co);
  report::Table t;
  t.header = {"device", "measurement", "measured", "catalog peak", "fraction"};
  t.right_align = {false, false, true, true, true};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    for (const auto& s : run.summary)
      t.rows.push_back({run.profile.device_name, s.what, rate(s.measured, s.unit), s.catalog_peak > 0 ? rate(s.catalog_peak, s.unit) : "-",
                        s.catalog_peak > 0 ? fmt::format("{:.0f}%", 100 * s.measured / s.catalog_peak) : "-"});
    if (!o.output.empty()) {
      std::string path = o.output;
      if (runs.size() > 1) {
        auto dot = path.rfind(".yaml");
        path = (dot == std::string::npos ? path : path.substr(0, dot)) + "-gpu" + std::to_string(i) + ".yaml";
      }
      io::save_profile(run.profile, path);
      std::fprintf(stderr, "hwplan: wrote profile %s\n", path.c_str());
      if (!run.catalog_stub.empty()) {
        std::string stub = path.substr(0, path.rfind(".yaml") == std::string::npos ? path.size() : path.rfind(".yaml")) + ".catalog-stub.yaml";
        io::write_file_atomically(stub, run.catalog_stub);
        std::fprintf(stderr, "hwplan: '%s' is not in the catalog; wrote a stub to complete: %s\n", run.profile.device_name.c_str(),
                     stub.c_str());
      }
    }
  }
  report::Format format = format_of(*o.global);
  if (format == report::Format::kJson) {
    json j = {{"schema_version", report::kSchemaVersion}, {"devices", json::array()}};
    for (const auto& run : runs) {
      json d = {{"device", run.profile.device_name},
                {"catalog_id", run.profile.catalog_id.empty() ? json(nullptr) : json(run.profile.catalog_id)},
                {"backend", run.profile.backend},
                {"summary", json::array()}};
      for (const auto& s : run.summary)
        d["summary"].push_back({{"measurement", s.what}, {"measured", s.measured}, {"catalog_peak", s.catalog_peak}, {"unit", si_unit(s.unit)}});
      j["devices"].push_back(d);
    }
    emit(*o.global, j.dump(2) + "\n");
  } else {
    emit(*o.global, report::render(t, format));
  }
  return 0;
}

struct DoctorOptions {
  GlobalOptions* global = nullptr;
  CLI::App* app = nullptr;
};

int run_doctor_cmd(const DoctorOptions& o) {
  io::Registry registry = make_registry(*o.global);
  calibrate::DoctorReport r = calibrate::run_doctor(registry);
  if (format_of(*o.global) == report::Format::kJson) {
    json j = {{"schema_version", report::kSchemaVersion},
              {"cpu", r.cpu},
              {"cores", r.cores},
              {"threads", r.threads},
              {"load_average_1min", r.load_average},
              {"memory_bytes", r.memory_bytes},
              {"memory_available_bytes", r.memory_available_bytes},
              {"cuda_backend", r.cuda_backend},
              {"driver_version", r.driver_version.empty() ? json(nullptr) : json(r.driver_version)},
              {"gpus", json::array()},
              {"pytorch_wheels", json::array()},
              {"hints", r.hints}};
    for (const auto& g : r.gpus)
      j["gpus"].push_back({{"name", g.name}, {"catalog_id", g.catalog_id.empty() ? json(nullptr) : json(g.catalog_id)}, {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)},
                           {"memory_bytes", g.memory_bytes}});
    for (const auto& w : r.wheels)
      j["pytorch_wheels"].push_back({{"pytorch", w.pytorch}, {"cuda", w.cuda}, {"driver_ok", w.driver_ok}, {"full_features", w.full_features},
                                     {"arch_ok", w.arch_ok}, {"note", w.note}});
    emit(*o.global, j.dump(2) + "\n");
    return 0;
  }
  std::string out;
  out += fmt::format("CPU:     {} ({} cores, {} threads), load average {:.1f}\n", r.cpu, r.cores, r.threads, r.load_average);
  out += fmt::format("Memory:  {} total, {} available\n", human_bytes(r.memory_bytes), human_bytes(r.memory_available_bytes));
  out += fmt::format("NVIDIA:  driver {}; hwplan CUDA backend {}\n", r.driver_version.empty() ? "not found" : r.driver_version,
                     r.cuda_backend ? "built in" : "not built");
  if (r.gpus.empty()) out += "GPUs:    none visible\n";
  for (const auto& g : r.gpus)
    out += fmt::format("GPU:     {} (compute capability {}.{}, {}){}\n", g.name, g.cc_major, g.cc_minor, human_bytes(g.memory_bytes),
                       g.catalog_id.empty() ? " - not in the catalog" : " = catalog " + g.catalog_id);
  if (!r.wheels.empty()) {
    out += "\nPyTorch wheels with this driver:\n";
    report::Table t;
    t.header = {"pytorch", "cuda", "runs", "note"};
    for (const auto& w : r.wheels) {
      std::string tag = "cu";
      for (char ch : w.cuda)
        if (ch != '.') tag += ch;
      t.rows.push_back({w.pytorch, tag, w.driver_ok && w.arch_ok ? "yes" : "no", w.note});
    }
    out += report::render(t, report::Format::kTable);
  }
  out += "\nHints:\n";
  for (const auto& h : r.hints) out += "- " + h + "\n";
  emit(*o.global, out);
  return 0;
}

}  // namespace

Command calibrate_command() {
  auto o = std::make_shared<CalibrateCliOptions>();
  Command c;
  c.name = "calibrate";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("calibrate", "Measure what this machine's devices achieve (bandwidth, GEMM, launch) and write a profile.")->footer(R"(Examples:
  hwplan calibrate --quick -o cpu.yaml
  hwplan calibrate --backend cuda --device-index 0 -o h200.yaml
  hwplan estimate --model llama-2-7b --device h200-sxm --profile h200.yaml)");
    o->app->add_option("--backend", o->backend, "auto | cpu | cuda (auto: every CUDA GPU, else the CPU)")->capture_default_str();
    o->app->add_option("--device-index", o->device_index, "Only this CUDA device");
    o->app->add_flag("--quick", o->quick, "Small sizes, few repetitions");
    o->app->add_option("-o,--output", o->output, "Profile YAML to write (atomically)");
    o->app->add_option("--format", g.format, "Summary format")->check(CLI::IsMember({"table", "json", "csv", "markdown"}));
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_calibrate(*o); };
  return c;
}

Command doctor_command() {
  auto o = std::make_shared<DoctorOptions>();
  Command c;
  c.name = "doctor";
  c.setup = [o](CLI::App& app, GlobalOptions& g) {
    o->global = &g;
    o->app = app.add_subcommand("doctor", "The local environment: devices, driver, which PyTorch builds run, and hints");
    o->app->add_option("--format", g.format, "table | json")->check(CLI::IsMember({"table", "json"}));
  };
  c.parsed = [o] { return o->app->parsed(); };
  c.run = [o] { return run_doctor_cmd(*o); };
  return c;
}

}  // namespace hwplan::cli
