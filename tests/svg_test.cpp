// SVG charts: well-formed XML, the expected series, escaped text, and never a NaN or inf.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "report/svg.hpp"

using namespace hwplan::report;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
}

// Checks an entity reference starting at s[i] == '&'; returns the index after it, or npos.
std::size_t entity_end(const std::string& s, std::size_t i) {
  std::size_t semi = s.find(';', i);
  if (semi == std::string::npos || semi - i > 10) return std::string::npos;
  std::string body = s.substr(i + 1, semi - i - 1);
  static const std::set<std::string> kNamed = {"amp", "lt", "gt", "quot", "apos"};
  if (kNamed.count(body)) return semi + 1;
  if (body.size() > 1 && body[0] == '#') {
    bool hex = body[1] == 'x';
    std::size_t digits = 0;
    for (std::size_t k = hex ? 2 : 1; k < body.size(); ++k, ++digits)
      if (!(hex ? std::isxdigit(static_cast<unsigned char>(body[k])) : std::isdigit(static_cast<unsigned char>(body[k]))))
        return std::string::npos;
    if (digits > 0) return semi + 1;
  }
  return std::string::npos;
}

// A small well-formedness checker: XML declaration, one root element, balanced tags, quoted and unique
// attributes, no raw '<' or bare '&' in text or attribute values. Returns "" when well formed.
std::string xml_problem(const std::string& s) {
  if (s.rfind("<?xml ", 0) != 0) return "no XML declaration at the start";
  std::size_t i = s.find("?>");
  if (i == std::string::npos) return "unterminated XML declaration";
  i += 2;
  std::vector<std::string> open;
  bool root_done = false, root_seen = false;
  while (i < s.size()) {
    char c = s[i];
    if (c == '<') {
      if (s.compare(i, 4, "<!--") == 0) {
        std::size_t e = s.find("-->", i + 4);
        if (e == std::string::npos) return "unterminated comment";
        i = e + 3;
        continue;
      }
      if (root_done) return "markup after the root element at " + std::to_string(i);
      if (i + 1 < s.size() && s[i + 1] == '/') {
        std::size_t j = i + 2;
        while (j < s.size() && name_char(s[j])) ++j;
        std::string name = s.substr(i + 2, j - i - 2);
        while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        if (j >= s.size() || s[j] != '>') return "bad end tag at " + std::to_string(i);
        if (open.empty() || open.back() != name) return "end tag </" + name + "> does not match at " + std::to_string(i);
        open.pop_back();
        if (open.empty()) root_done = true;
        i = j + 1;
        continue;
      }
      std::size_t j = i + 1;
      if (j >= s.size() || !(std::isalpha(static_cast<unsigned char>(s[j])) || s[j] == '_')) return "bad tag name at " + std::to_string(i);
      while (j < s.size() && name_char(s[j])) ++j;
      std::string name = s.substr(i + 1, j - i - 1);
      std::set<std::string> attrs;
      for (;;) {
        std::size_t ws = j;
        while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
        if (j >= s.size()) return "unterminated tag <" + name + ">";
        if (s.compare(j, 2, "/>") == 0) {
          j += 2;
          if (open.empty()) root_done = true;
          root_seen = true;
          break;
        }
        if (s[j] == '>') {
          open.push_back(name);
          root_seen = true;
          ++j;
          break;
        }
        if (ws == j) return "attributes not separated by space in <" + name + ">";
        std::size_t a = j;
        while (j < s.size() && name_char(s[j])) ++j;
        std::string attr = s.substr(a, j - a);
        if (attr.empty()) return "bad attribute in <" + name + "> at " + std::to_string(j);
        if (!attrs.insert(attr).second) return "duplicate attribute " + attr + " in <" + name + ">";
        if (j >= s.size() || s[j] != '=') return "attribute " + attr + " without value";
        ++j;
        if (j >= s.size() || (s[j] != '"' && s[j] != '\'')) return "unquoted attribute " + attr;
        char q = s[j++];
        while (j < s.size() && s[j] != q) {
          if (s[j] == '<') return "'<' in attribute " + attr;
          if (s[j] == '&') {
            std::size_t e = entity_end(s, j);
            if (e == std::string::npos) return "bare '&' in attribute " + attr;
            j = e;
          } else {
            ++j;
          }
        }
        if (j >= s.size()) return "unterminated attribute " + attr;
        ++j;
      }
      if (open.empty() && !root_seen) return "no root";
      i = j;
      continue;
    }
    if (open.empty()) {
      if (!std::isspace(static_cast<unsigned char>(c))) return "text outside the root element at " + std::to_string(i);
      ++i;
      continue;
    }
    if (c == '&') {
      std::size_t e = entity_end(s, i);
      if (e == std::string::npos) return "bare '&' in text at " + std::to_string(i);
      i = e;
      continue;
    }
    if (c == '>') return "raw '>' in text at " + std::to_string(i);  // legal, but our writer escapes it
    ++i;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (!root_seen) return "no root element";
  return "";
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t i = haystack.find(needle); i != std::string::npos; i = haystack.find(needle, i + needle.size())) ++n;
  return n;
}

// No NaN or inf anywhere (the test labels avoid these letter sequences).
bool has_non_finite(const std::string& svg) {
  std::string lower;
  for (char c : svg) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("nan") != std::string::npos || lower.find("inf") != std::string::npos;
}

// The value of attribute `attr` in the first element after `from` that has it.
std::string attr_after(const std::string& svg, std::size_t from, const std::string& attr) {
  std::size_t i = svg.find(" " + attr + "=\"", from);
  if (i == std::string::npos) return "";
  i += attr.size() + 3;
  return svg.substr(i, svg.find('"', i) - i);
}

void check_svg_shell(const std::string& svg) {
  CHECK(xml_problem(svg) == "");
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("viewBox=\"0 0 ") != std::string::npos);
  CHECK(svg.find("font-family=\"sans-serif\"") != std::string::npos);
  CHECK(svg.find("fill=\"#ffffff\"") != std::string::npos);  // white background
  CHECK_FALSE(has_non_finite(svg));
}

RooflineChart h100_chart() {
  // H100 SXM datasheet: 3.35 TB/s HBM3, 989 TFLOP/s dense bf16; the "measured" values are made up.
  RooflineChart c;
  c.title = "H100 SXM <bf16> & friends";
  c.bandwidth_bytes_per_s = 3.35e12;
  c.measured_bandwidth_bytes_per_s = 2.9e12;
  c.ceilings = {{"bf16 peak 989 TFLOP/s", 989e12}, {"bf16 measured", 720e12}};
  c.points = {{"matmul <4096>", 1365, 610e12},
              {"attention", 120, 300e12},
              {"softmax", 1.25, 3.1e12},
              {"layernorm", 2.0, 4.8e12},
              {"gelu", 1.1, 2.9e12},
              {"embedding", 0.25, 0.5e12}};
  return c;
}

}  // namespace

TEST_CASE("xml_escape replaces markup characters and forbidden control characters") {
  CHECK(xml_escape("a<b & \"c\" > 'd'") == "a&lt;b &amp; &quot;c&quot; &gt; &apos;d&apos;");
  CHECK(xml_escape(std::string("x\x01y\tz", 5)) == "x?y\tz");
  CHECK(xml_escape("plain ü") == "plain ü");
}

TEST_CASE("the well-formedness checker rejects broken markup") {
  CHECK(xml_problem("<?xml version=\"1.0\"?><a><b/></a>") == "");
  CHECK(xml_problem("<?xml version=\"1.0\"?><a><b></a>") != "");
  CHECK(xml_problem("<?xml version=\"1.0\"?><a x=1/>") != "");
  CHECK(xml_problem("<?xml version=\"1.0\"?><a>x & y</a>") != "");
  CHECK(xml_problem("<?xml version=\"1.0\"?><a x=\"a<b\"/>") != "");
  CHECK(xml_problem("<?xml version=\"1.0\"?><a/><b/>") != "");
}

TEST_CASE("roofline: roofs, ceilings and one circle per operator") {
  RooflineChart c = h100_chart();
  std::string svg = render_roofline_svg(c);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"point\"") == c.points.size());
  CHECK(count(svg, "class=\"roof-memory\"") == 2);
  CHECK(count(svg, "class=\"roof-memory\" data-kind=\"measured\"") == 1);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(count(svg, "class=\"roof-compute\"") == 2);
  CHECK(svg.find("data-label=\"bf16 peak 989 TFLOP/s\"") != std::string::npos);
  CHECK(svg.find("data-label=\"matmul &lt;4096&gt;\"") != std::string::npos);
  CHECK(svg.find("matmul <4096>") == std::string::npos);
  CHECK(svg.find("H100 SXM &lt;bf16&gt; &amp; friends") != std::string::npos);
  for (const auto& p : c.points) CHECK(svg.find("data-label=\"" + xml_escape(p.label) + "\"") != std::string::npos);
  // Axis titles and decade labels; 989 TFLOP/s and 0.5 TFLOP/s are inside the y axis.
  CHECK(svg.find("Arithmetic intensity (FLOP/byte)") != std::string::npos);
  CHECK(svg.find("Performance (TFLOP/s)") != std::string::npos);
  CHECK(svg.find(">1000</text>") != std::string::npos);
  CHECK(svg.find(">0.1</text>") != std::string::npos);
  CHECK(svg.find("no data") == std::string::npos);
}

TEST_CASE("roofline: non-finite and non-positive values are skipped") {
  RooflineChart c = h100_chart();
  c.measured_bandwidth_bytes_per_s = kNaN;
  c.ceilings.push_back({"broken", kInf});
  c.ceilings.push_back({"zero", 0});
  c.points.push_back({"bad intensity", kNaN, 1e12});
  c.points.push_back({"bad perf", 10, -kInf});
  c.points.push_back({"zero perf", 10, 0});
  c.points.push_back({"negative", -3, 1e12});
  std::string svg = render_roofline_svg(c);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"point\"") == 6);
  CHECK(count(svg, "class=\"roof-memory\"") == 1);
  CHECK(count(svg, "class=\"roof-compute\"") == 2);
  CHECK(svg.find("bad intensity") == std::string::npos);
}

TEST_CASE("roofline: partial and empty inputs still make valid SVG") {
  RooflineChart empty;
  std::string svg = render_roofline_svg(empty);
  check_svg_shell(svg);
  CHECK(svg.find("no data") != std::string::npos);

  RooflineChart only_bad;
  only_bad.title = "bad";
  only_bad.bandwidth_bytes_per_s = -1;
  only_bad.points = {{"x", kNaN, kNaN}};
  svg = render_roofline_svg(only_bad);
  check_svg_shell(svg);
  CHECK(svg.find("no data") != std::string::npos);

  RooflineChart ceilings_only;
  ceilings_only.ceilings = {{"", 312e12}};
  svg = render_roofline_svg(ceilings_only);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"roof-compute\"") == 1);
  CHECK(svg.find("312 TFLOP/s") != std::string::npos);  // an unlabelled ceiling shows its value

  RooflineChart bandwidth_only;
  bandwidth_only.bandwidth_bytes_per_s = 1e12;
  svg = render_roofline_svg(bandwidth_only);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"roof-memory\"") == 1);

  RooflineChart points_only;
  points_only.points = {{"a", 1e-30, 1e-30}, {"b", 1e30, 1e30}, {"c", 5e-324, 1.7e308}};
  svg = render_roofline_svg(points_only);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"point\"") == 3);

  RooflineChart extreme = points_only;  // ranges of hundreds of decades, down to underflow
  extreme.bandwidth_bytes_per_s = 1e12;
  extreme.ceilings = {{"huge", 1e300}};
  svg = render_roofline_svg(extreme);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"point\"") == 3);
}

TEST_CASE("memory chart: stacked bars, consistent colours, capacity and overflow") {
  MemoryChart c;
  c.title = "7B training: memory per device";
  c.bars = {
      {"rtx-4090 x1", 24 * kGiB, {{"weights", 13 * kGiB}, {"gradients", 13 * kGiB}, {"optimizer", 52 * kGiB}}},
      {"a100-80gb x1", 80 * kGiB, {{"weights", 13 * kGiB}, {"gradients", 13 * kGiB}, {"activations", 20 * kGiB}}},
      {"h100 <zero-3> & co", 80 * kGiB, {{"weights", 1.6 * kGiB}, {"optimizer", 6.5 * kGiB}}},
  };
  std::string svg = render_memory_svg(c);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"bar\"") == 3);
  CHECK(count(svg, "class=\"segment\"") == 8);
  CHECK(count(svg, "class=\"segment\" data-name=\"weights\"") == 3);
  CHECK(count(svg, "class=\"capacity\"") == 3);
  CHECK(count(svg, "data-fits=\"false\"") == 1);
  CHECK(count(svg, "does not fit") >= 1);
  CHECK(count(svg, "class=\"overflow\"") == 1);
  CHECK(svg.find("data-label=\"rtx-4090 x1\"") != std::string::npos);
  CHECK(svg.find("data-label=\"h100 &lt;zero-3&gt; &amp; co\"") != std::string::npos);
  CHECK(svg.find("80 GiB") != std::string::npos);
  CHECK(svg.find("Memory (GiB)") != std::string::npos);

  // One colour per segment name in every bar, and different names get different colours.
  std::set<std::string> weight_fills, optimizer_fills;
  for (std::size_t i = svg.find("data-name=\"weights\""); i != std::string::npos;
       i = svg.find("data-name=\"weights\"", i + 1))
    weight_fills.insert(attr_after(svg, i, "fill"));
  for (std::size_t i = svg.find("data-name=\"optimizer\""); i != std::string::npos;
       i = svg.find("data-name=\"optimizer\"", i + 1))
    optimizer_fills.insert(attr_after(svg, i, "fill"));
  CHECK(weight_fills.size() == 1);
  CHECK(optimizer_fills.size() == 1);
  CHECK(*weight_fills.begin() != *optimizer_fills.begin());
}

TEST_CASE("memory chart: long labels, bad values and empty input") {
  MemoryChart c;
  c.bars = {{"a-device-with-a-rather-long-name-for-a-label x8", 80 * kGiB, {{"weights", kNaN}, {"kv cache", 10 * kGiB}}},
            {"no capacity", kNaN, {{"weights", -5}, {"kv cache", kInf}, {"activations", 4 * kGiB}}},
            {"empty", 16 * kGiB, {}}};
  std::string svg = render_memory_svg(c);
  check_svg_shell(svg);
  CHECK(count(svg, "class=\"bar\"") == 3);
  CHECK(count(svg, "class=\"segment\"") == 2);
  CHECK(count(svg, "class=\"capacity\"") == 2);
  CHECK(svg.find("rotate(-35") != std::string::npos);

  MemoryChart empty;
  empty.title = "nothing";
  svg = render_memory_svg(empty);
  check_svg_shell(svg);
  CHECK(svg.find("no data") != std::string::npos);

  MemoryChart zeros;
  zeros.bars = {{"x", 0, {{"weights", 0}}}};
  svg = render_memory_svg(zeros);
  check_svg_shell(svg);
  CHECK(svg.find("no data") != std::string::npos);
}
