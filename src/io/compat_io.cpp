#include "io/compat_io.hpp"

#include <sstream>

#include "io/embedded.hpp"
#include "io/yaml_map.hpp"

namespace hwplan::io {

CompatTable parse_compat(const std::string& text, const std::string& file) {
  YamlMap top(parse_document(text, file), file);
  CompatTable t;
  top.str("source", false);
  auto list = [&](const char* key) {
    YAML::Node n = top.node()[key];
    if (!n.IsSequence()) top.fail(key, "expected a list");
    return n;
  };
  for (const auto& item : list("cuda")) {
    YamlMap m(item, file, "cuda[].");
    CudaRelease r;
    r.version = *m.str("version", true);
    r.toolkit_driver_linux = *m.str("toolkit_driver_linux", true);
    r.minor_compat_driver_linux = *m.str("minor_compat_driver_linux", true);
    m.finish({"toolkit_driver_windows", "source", "note"});
    t.cuda.push_back(r);
  }
  for (const auto& item : list("pytorch")) {
    YamlMap m(item, file, "pytorch[].");
    PytorchRelease r;
    r.version = *m.str("version", true);
    r.released = m.str("released", false).value_or("");
    r.cuda = *m.string_list("cuda", true);
    m.finish({"source", "note"});
    t.pytorch.push_back(r);
  }
  if (top.has("wheel_arch")) {
    for (const auto& item : list("wheel_arch")) {
      YamlMap m(item, file, "wheel_arch[].");
      WheelArch w;
      w.pytorch = *m.str("pytorch", true);
      w.cuda = *m.str("cuda", true);
      w.sm = *m.string_list("sm", true);
      w.ptx = m.boolean("ptx", false).value_or(false);
      m.finish({"source", "note", "ptx_arch"});
      t.wheel_arch.push_back(w);
    }
  }
  top.finish({"cuda", "pytorch", "wheel_arch"});
  return t;
}

CompatTable builtin_compat() { return parse_compat(builtin_compat_text(), "data/compat/cuda-pytorch.yaml"); }

int compare_versions(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string pa, pb;
  while (true) {
    bool ha = static_cast<bool>(std::getline(sa, pa, '.')), hb = static_cast<bool>(std::getline(sb, pb, '.'));
    if (!ha && !hb) return 0;
    long va = ha ? std::strtol(pa.c_str(), nullptr, 10) : 0, vb = hb ? std::strtol(pb.c_str(), nullptr, 10) : 0;
    if (va != vb) return va < vb ? -1 : 1;
  }
}

}  // namespace hwplan::io
