// The Python module `hwplan` (the native part, hwplan._native): Session::run from src/api with the GIL released,
// results converted from the JSON document to plain Python objects, and the sweep over all cores. The Python
// layer (python/hwplan/__init__.py) adds keyword arguments, docstrings and the DataFrame helper.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <thread>

#include "api/api.hpp"
#include "core/error.hpp"
#include "io/profile_io.hpp"
#include "core/assumptions.hpp"
#include "io/assumptions_io.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace {

py::object to_python(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return py::none();
    case json::value_t::boolean: return py::bool_(j.get<bool>());
    case json::value_t::number_integer: return py::int_(j.get<long long>());
    case json::value_t::number_unsigned: return py::int_(j.get<unsigned long long>());
    case json::value_t::number_float: return py::float_(j.get<double>());
    case json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case json::value_t::array: {
      py::list out(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) out[i] = to_python(j[i]);
      return out;  // moved (C++20 implicit move into py::object)
    }
    case json::value_t::object: {
      py::dict out;
      for (auto it = j.begin(); it != j.end(); ++it) out[py::str(it.key())] = to_python(it.value());
      return out;  // moved (C++20 implicit move into py::object)
    }
    default: return py::none();
  }
}

const hwplan::api::Session& session() {
  static const hwplan::api::Session s;  // the catalog and zoo, parsed once per process
  return s;
}

// One call: (command, options) -> (result JSON, exit code) or the error message. No Python objects: runs without the GIL.
struct Outcome {
  json result;
  int exit_code = 0;
  std::string error;
  bool input_error = false;
};

Outcome run_one(const std::string& command, const hwplan::api::Options& options) {
  Outcome o;
  try {
    hwplan::api::Result r = session().run(command, options);
    o.result = std::move(r.json);
    o.exit_code = r.exit_code;
  } catch (const hwplan::InputError& e) {
    o.error = e.what();
    o.input_error = true;
  } catch (const hwplan::Infeasible& e) {  // nothing feasible and no document (tco of a workload that does not fit)
    o.error = e.what();
    o.exit_code = hwplan::kExitNothingFeasible;
  } catch (const std::exception& e) {
    o.error = std::string("internal error: ") + e.what();
  }
  return o;
}

py::tuple outcome_tuple(Outcome& o) {
  return py::make_tuple(o.error.empty() ? to_python(o.result) : py::none(), o.exit_code,
                        o.error.empty() ? py::none() : py::object(py::str(o.error)), o.input_error);
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "hwplan's C++ core; use the `hwplan` package.";
  m.attr("version") = HWPLAN_VERSION;
  // HWPLAN_ASSUMPTIONS applies to the module as to the command line (a bad file fails the import, naming it).
  if (auto files = hwplan::io::assumption_files_from_environment(); !files.empty())
    hwplan::set_assumptions(hwplan::io::apply_assumption_files(hwplan::Assumptions{}, files));

  m.def(
      "run",
      [](const std::string& command, const hwplan::api::Options& options) {
        Outcome o;
        {
          py::gil_scoped_release release;
          o = run_one(command, options);
        }
        return outcome_tuple(o);
      },
      py::arg("command"), py::arg("options"),
      "run(command, options) -> (result, exit_code, error, is_input_error): one command, as the CLI runs it "
      "(error set and exit_code 3: nothing feasible, without a document).");

  m.def(
      "run_many",
      [](const std::vector<std::pair<std::string, hwplan::api::Options>>& calls, int threads) {
        std::vector<Outcome> out(calls.size());
        {
          py::gil_scoped_release release;
          int n = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
          n = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(n), std::max<std::size_t>(1, calls.size())));
          session();  // load the catalog before the workers start
          std::atomic<std::size_t> next{0};
          auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < calls.size();) out[i] = run_one(calls[i].first, calls[i].second);
          };
          std::vector<std::thread> pool;
          for (int t = 1; t < n; ++t) pool.emplace_back(work);
          work();
          for (auto& t : pool) t.join();
        }
        py::list results(out.size());
        for (std::size_t i = 0; i < out.size(); ++i) results[i] = outcome_tuple(out[i]);
        return results;
      },
      py::arg("calls"), py::arg("threads") = 0,
      "run_many([(command, options), ...], threads=0) -> list of run() tuples, in order, on `threads` workers (0: all cores).");

  m.def(
      "load_profile",
      [](const std::string& path) {
        hwplan::Profile p;
        std::string error;
        {
          py::gil_scoped_release release;
          try {
            p = hwplan::io::load_profile(path);
          } catch (const hwplan::InputError& e) {
            error = e.what();
          }
        }
        if (!error.empty()) return py::make_tuple(py::none(), py::str(error));
        py::dict d;
        d["path"] = path;
        d["device_name"] = p.device_name;
        d["catalog_id"] = p.catalog_id;
        d["backend"] = p.backend;
        d["host"] = p.host;
        d["date"] = p.date;
        d["kernel_launch_seconds"] = p.kernel_launch_seconds;
        d["bandwidth_points"] = p.bandwidth.size();
        py::list precisions;
        for (const auto& [precision, curve] : p.gemm) precisions.append(hwplan::to_string(precision));
        d["gemm_precisions"] = precisions;
        return py::make_tuple(d, py::none());
      },
      py::arg("path"), "load_profile(path) -> (summary dict, error): reads and validates a calibration profile.");

  m.def(
      "set_assumptions",
      [](const std::map<std::string, double>& values, const std::vector<std::string>& files) -> py::object {
        // From the defaults: the files in order, then the values by name, each range-checked.
        hwplan::Assumptions a;
        try {
          // HWPLAN_ASSUMPTIONS's files first, as the command line reads them, then the ones given.
          std::vector<std::string> all = hwplan::io::assumption_files_from_environment();
          all.insert(all.end(), files.begin(), files.end());
          a = hwplan::io::apply_assumption_files(a, all);
        } catch (const hwplan::InputError& e) {
          return py::str(e.what());
        }
        for (const auto& [name, value] : values) {
          auto info = hwplan::find_assumption(name);
          if (!info) return py::str("'" + name + "' is not an assumption (hwplan.run(\"assumptions\") lists them)");
          if (!(value >= info->min && value <= info->max))
            return py::str("assumption '" + name + "' must be in [" + std::to_string(info->min) + ", " + std::to_string(info->max) + "]");
          hwplan::set_assumption(a, name, value);
        }
        hwplan::set_assumptions(a);
        return py::none();
      },
      py::arg("values"), py::arg("files"),
      "set_assumptions(values, files) -> error or None: the physics constants for the following calls (process-wide).");

  m.def("commands", &hwplan::api::commands, "The commands run() answers.");
}
