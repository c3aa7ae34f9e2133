#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

namespace hwplan::report {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kTera = 1e12;
constexpr double kPi = 3.14159265358979323846;
// Average advance of a sans-serif glyph per pixel of font size; layout estimates only.
constexpr double kCharWidthPerPx = 0.55;

// Tableau 10: distinct on white, and the same segment name always gets the same colour.
constexpr std::array<std::string_view, 10> kPalette = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::array<std::string_view, 5> kCeilingColours = {"#d62728", "#ff7f0e", "#2ca02c", "#9467bd",
                                                             "#8c564b"};
constexpr std::string_view kMemoryRoofColour = "#1f77b4";
constexpr std::string_view kPointColour = "#222222";
constexpr std::string_view kOverColour = "#d62728";
constexpr std::string_view kGridColour = "#dddddd";
constexpr std::string_view kMinorGridColour = "#f0f0f0";

bool positive(double v) { return std::isfinite(v) && v > 0; }

// A coordinate or length for an attribute; never NaN or inf.
std::string px(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s == "-0.0") s = "0.0";
  return s;
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

double text_width(std::string_view s, double font_px) {
  return static_cast<double>(code_points(s)) * font_px * kCharWidthPerPx;
}

// At most `max_chars` code points, ending in an ellipsis when cut.
std::string truncate(const std::string& s, std::size_t max_chars) {
  if (code_points(s) <= max_chars || max_chars < 2) return s;
  std::size_t kept = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (kept == max_chars - 1) break;
      ++kept;
    }
  }
  return s.substr(0, i) + "\xE2\x80\xA6";
}

// Three significant digits without an exponent: 989, 3.35, 0.412, 1979.
std::string sig3(double v) {
  if (!std::isfinite(v)) return "-";
  double a = std::fabs(v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

// "24", "79.6": one decimal, none when it is zero.
std::string one_decimal(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string bandwidth_text(double bytes_per_s) {
  if (bytes_per_s >= kTera) return sig3(bytes_per_s / kTera) + " TB/s";
  return sig3(bytes_per_s / 1e9) + " GB/s";
}

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool inside(const Box& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
};

// The box a single line of text occupies, given its anchor point, baseline and anchor mode.
Box text_box(double x, double baseline, std::string_view s, double font_px, std::string_view anchor) {
  double w = text_width(s, font_px);
  double left = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
  return {left - 1, baseline - font_px * 0.78, left + w + 1, baseline + font_px * 0.22};
}

struct Segment {
  double x0, y0, x1, y1;
};

// Whether a segment passes through a box (Liang-Barsky clipping).
bool crosses(const Segment& s, const Box& b) {
  double t0 = 0, t1 = 1, dx = s.x1 - s.x0, dy = s.y1 - s.y0;
  const std::array<double, 4> p = {-dx, dx, -dy, dy};
  const std::array<double, 4> q = {s.x0 - b.x0, b.x1 - s.x0, s.y0 - b.y0, b.y1 - s.y0};
  for (std::size_t i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

// What a new label should not cover: operators, labels placed before it, and roof lines.
struct Obstacles {
  std::vector<Box> points;
  std::vector<Box> labels;
  std::vector<Segment> lines;
  static int count(const std::vector<Box>& boxes, const Box& b) {
    return static_cast<int>(std::count_if(boxes.begin(), boxes.end(), [&](const Box& o) { return o.overlaps(b); }));
  }
  // Covering another label is worst, then covering a point, then crossing a line.
  int cost(const Box& b) const {
    return 5 * count(labels, b) + 3 * count(points, b) +
           2 * static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const Segment& s) { return crosses(s, b); }));
  }
  // A leader line from a point to its label should not cut through other labels.
  int leader_cost(const Segment& leader) const {
    return 2 * static_cast<int>(std::count_if(labels.begin(), labels.end(), [&](const Box& o) { return crosses(leader, o); }));
  }
};

class Svg {
 public:
  Svg(double width, double height, const std::string& title) {
    fmt::format_to(std::back_inserter(out_),
                   "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
                   "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                   width, height);
    if (!title.empty()) out_ += "<title>" + xml_escape(title) + "</title>\n";
    fmt::format_to(std::back_inserter(out_), "<rect x=\"0\" y=\"0\" width=\"{0:.0f}\" height=\"{1:.0f}\" fill=\"#ffffff\"/>\n",
                   width, height);
    if (!title.empty()) {
      double font = 15;
      auto max_chars = static_cast<std::size_t>(std::max(8.0, (width - 20) / (font * kCharWidthPerPx)));
      text(width / 2, 26, truncate(title, max_chars), "class=\"title\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\"");
    }
  }

  // Raw markup; the caller has escaped any text in it.
  void raw(std::string_view s) { out_ += s; }

  // One line of text; `attrs` are extra, already-escaped attributes.
  void text(double x, double y, const std::string& content, std::string_view attrs = {}) {
    fmt::format_to(std::back_inserter(out_), "<text x=\"{}\" y=\"{}\"{}{}>{}</text>\n", px(x), px(y),
                   attrs.empty() ? "" : " ", attrs, xml_escape(content));
  }

  // Text on a translucent white box, readable over lines and bars.
  void boxed_text(double x, double y, const std::string& content, double font_px, std::string_view anchor,
                  std::string_view attrs) {
    Box b = text_box(x, y, content, font_px, anchor);
    fmt::format_to(std::back_inserter(out_),
                   "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>\n",
                   px(b.x0), px(b.y0), px(b.x1 - b.x0), px(b.y1 - b.y0));
    text(x, y, content,
         fmt::format("text-anchor=\"{}\" font-size=\"{}\"{}{}", anchor, px(font_px), attrs.empty() ? "" : " ", attrs));
  }

  // Text with a white outline drawn underneath it (SVG 1.1 has no paint-order): readable over gridlines
  // and roofs while hiding only what lies under the glyphs. `transform` is an attribute value, e.g. "rotate(-45 10 20)".
  void halo_text(double x, double y, const std::string& content, double font_px, std::string_view anchor,
                 std::string_view attrs, std::string_view transform = {}) {
    std::string common = fmt::format("text-anchor=\"{}\" font-size=\"{}\"", anchor, px(font_px));
    if (!transform.empty()) common += fmt::format(" transform=\"{}\"", transform);
    text(x, y, content,
         common + " class=\"halo\" fill=\"#ffffff\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\"");
    text(x, y, content, common + (attrs.empty() ? "" : " ") + std::string(attrs));
  }

  void line(double x0, double y0, double x1, double y1, std::string_view attrs) {
    fmt::format_to(std::back_inserter(out_), "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", px(x0), px(y0),
                   px(x1), px(y1), attrs);
  }

  // An empty buffer for a layer of markup that is appended to a chart later.
  static Svg layer() { return Svg(); }
  const std::string& markup() const { return out_; }

  std::string finish() && {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  Svg() = default;
  std::string out_;
};

std::string no_data_svg(const std::string& title) {
  Svg svg(600, 300, title);
  svg.text(300, 160, "no data", "class=\"no-data\" text-anchor=\"middle\" font-size=\"16\" fill=\"#888888\"");
  return std::move(svg).finish();
}

// ---------------------------------------------------------------------------------------------------------
// Roofline

// A log10 axis between two (not necessarily decade) ends, mapped onto a pixel interval.
struct LogScale {
  double lo_log, hi_log;  // log10 of the values at the axis ends
  double px_lo, px_hi;    // pixel positions of those ends
  double operator()(double v) const {
    return px_lo + (std::log10(v) - lo_log) / (hi_log - lo_log) * (px_hi - px_lo);
  }
  double lo() const { return std::pow(10.0, lo_log); }
  double hi() const { return std::pow(10.0, hi_log); }
};

// log10 of the largest of 1, 2, 5 x 10^k at or below 10^l, or the smallest at or above it.
double snap_log(double l, bool down) {
  static constexpr std::array<double, 4> kSteps = {0.0, 0.30103, 0.69897, 1.0};
  double k = std::floor(l), frac = l - k;
  if (down) {
    double best = 0;
    for (double s : kSteps)
      if (s <= frac + 1e-9) best = s;
    return k + best;
  }
  for (double s : kSteps)
    if (s >= frac - 1e-9) return k + s;
  return k + 1;
}

// Axis ends around [min_v, max_v], padded, snapped to 1/2/5, spanning at least two decades.
std::pair<double, double> log_range(double min_v, double max_v, double pad_lo, double pad_hi) {
  double lo = std::log10(min_v) - pad_lo, hi = std::log10(max_v) + pad_hi;
  if (hi - lo < 2) {
    double mid = (lo + hi) / 2;
    lo = mid - 1;
    hi = mid + 1;
  }
  return {snap_log(lo, true), snap_log(hi, false)};
}

// 10^e as a plain number where that stays short: 0.001, 1, 1000, 1e-06.
std::string decade_label(int e) {
  if (e >= 0 && e <= 6) return fmt::format("{:.0f}", std::pow(10.0, e));
  if (e < 0 && e >= -4) return fmt::format("{:.{}f}", std::pow(10.0, e), -e);
  return fmt::format("1e{}", e);
}

// Gridlines, decade tick labels (10^(e + label_shift)) and an axis title for one log axis.
void draw_log_axis(Svg& svg, const LogScale& s, bool horizontal, int label_shift, double other_lo, double other_hi) {
  int first = static_cast<int>(std::floor(s.lo_log)), last = static_cast<int>(std::ceil(s.hi_log));
  int decades = last - first;
  bool minor = decades <= 6;
  // Decade gridlines and labels thin out so that labels never touch (about 45 px apart on x, 22 on y).
  double extent = std::fabs(s.px_hi - s.px_lo);
  int max_labels = std::max(2, static_cast<int>(extent / (horizontal ? 45.0 : 22.0)));
  int label_every = std::max(1, (decades + max_labels - 1) / max_labels);
  auto in_range = [&](double l) { return l >= s.lo_log - 1e-9 && l <= s.hi_log + 1e-9; };
  for (int e = first; e <= last; ++e) {
    if (minor) {
      for (int m = 2; m <= 9; ++m) {
        double l = e + std::log10(static_cast<double>(m));
        if (!in_range(l)) continue;
        double p = s(std::pow(10.0, l));
        if (horizontal) svg.line(p, other_lo, p, other_hi, fmt::format("stroke=\"{}\"", kMinorGridColour));
        else svg.line(other_lo, p, other_hi, p, fmt::format("stroke=\"{}\"", kMinorGridColour));
      }
    }
    if (!in_range(e) || (e - first) % label_every != 0) continue;
    double p = s(std::pow(10.0, e));
    if (horizontal) svg.line(p, other_lo, p, other_hi, fmt::format("stroke=\"{}\"", kGridColour));
    else svg.line(other_lo, p, other_hi, p, fmt::format("stroke=\"{}\"", kGridColour));
    std::string label = decade_label(e + label_shift);
    if (horizontal) svg.text(p, other_hi + 16, label, "class=\"tick\" text-anchor=\"middle\"");
    else svg.text(other_lo - 6, p + 4, label, "class=\"tick\" text-anchor=\"end\"");
  }
}

struct Ceiling {
  std::string label;
  double flops_per_s;
  std::string_view colour;
};

// What a roofline draws: the chart's values that can be drawn on log axes, ceilings coloured.
struct RooflineData {
  double peak_bw = 0, measured_bw = 0;  // bytes/s, 0 = none
  std::string peak_bw_name = "memory roof";
  double max_ceiling = 0;               // FLOP/s
  std::vector<Ceiling> ceilings;
  std::vector<const RooflinePoint*> points;
  bool empty() const { return ceilings.empty() && points.empty() && peak_bw == 0 && measured_bw == 0; }
};

RooflineData roofline_data(const RooflineChart& chart) {
  RooflineData d;
  d.peak_bw = positive(chart.bandwidth_bytes_per_s) ? chart.bandwidth_bytes_per_s : 0;
  d.peak_bw_name = chart.bandwidth_name;
  d.measured_bw = positive(chart.measured_bandwidth_bytes_per_s) ? chart.measured_bandwidth_bytes_per_s : 0;
  for (const auto& c : chart.ceilings) {
    if (!positive(c.flops_per_s)) continue;
    std::string label = c.label.empty() ? sig3(c.flops_per_s / kTera) + " TFLOP/s" : c.label;
    d.ceilings.push_back({label, c.flops_per_s, kCeilingColours[d.ceilings.size() % kCeilingColours.size()]});
    d.max_ceiling = std::max(d.max_ceiling, c.flops_per_s);
  }
  for (const auto& p : chart.points)
    if (positive(p.intensity_flop_per_byte) && positive(p.achieved_flops_per_s)) d.points.push_back(&p);
  return d;
}

// The plot area, the legend column to its right, and the two log axes mapped onto it.
struct RooflineLayout {
  double width = 900, height = 600;
  double left = 78, top = 48, right = 0, bottom = 0;
  LogScale x{}, y{};
  Box plot() const { return {left, top, right, bottom}; }
};

// Axis ranges cover the operators, the ridge points and the ceilings; the height grows with the legend.
RooflineLayout roofline_layout(const RooflineData& d) {
  std::vector<double> xs, ys;
  for (const auto* p : d.points) {
    xs.push_back(p->intensity_flop_per_byte);
    ys.push_back(p->achieved_flops_per_s);
  }
  for (const auto& c : d.ceilings) {
    ys.push_back(c.flops_per_s);
    for (double bw : {d.peak_bw, d.measured_bw})
      if (bw > 0) xs.push_back(c.flops_per_s / bw);
  }
  std::pair<double, double> x_range{-1.0, 3.0};  // 0.1 .. 1000 FLOP/byte when the data says nothing
  if (!xs.empty()) {
    auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    x_range = log_range(*lo, *hi, 0.15, 0.15);
  }
  std::pair<double, double> y_range;
  if (!ys.empty()) {
    auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
    y_range = log_range(*lo, *hi, 0.15, 0.3);
  } else {  // only a memory roof: show it across the x range
    double bw = std::max(d.peak_bw, d.measured_bw);
    y_range = log_range(bw * std::pow(10.0, x_range.first), bw * std::pow(10.0, x_range.second), 0, 0.3);
  }
  RooflineLayout l;
  const double legend_w = 230;
  l.right = l.width - legend_w - 20;
  int legend_rows = 1 + (d.measured_bw > 0 ? 1 : 0) + static_cast<int>(d.ceilings.size()) * 2 + (d.points.empty() ? 0 : 1);
  l.height = std::max(600.0, l.top + 40 + legend_rows * 20.0 + 60);
  l.bottom = l.height - 62;
  l.x = LogScale{x_range.first, x_range.second, l.left, l.right};
  l.y = LogScale{y_range.first, y_range.second, l.bottom, l.top};
  return l;
}

// Grid, ticks, the plot frame, the axis titles and the clip path of the plot area.
void draw_roofline_axes(Svg& svg, const RooflineLayout& l) {
  draw_log_axis(svg, l.x, true, 0, l.top, l.bottom);
  draw_log_axis(svg, l.y, false, -12, l.left, l.right);
  svg.raw(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#888888\"/>\n", px(l.left),
                      px(l.top), px(l.right - l.left), px(l.bottom - l.top)));
  svg.text((l.left + l.right) / 2, l.bottom + 40, "Arithmetic intensity (FLOP/byte)",
           "class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\"");
  svg.text(20, (l.top + l.bottom) / 2, "Performance (TFLOP/s)",
           fmt::format("class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 20 {})\"",
                       px((l.top + l.bottom) / 2)));
  svg.raw(fmt::format("<defs><clipPath id=\"roofline-plot-area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
                      "</clipPath></defs>\n",
                      px(l.left), px(l.top), px(l.right - l.left), px(l.bottom - l.top)));
}

struct Roof {
  double bw;
  bool measured;
  Segment seg;  // the visible part, in pixels
};

// The roof lines in pixels. Memory roofs: min(bw * I, highest ceiling), clipped to the plot; compute roofs
// (one per ceiling, in its order): horizontal from the ridge point (at peak bandwidth) to the right edge.
struct RoofLines {
  std::vector<Roof> memory;
  std::vector<Segment> compute;
};

RoofLines roof_lines(const RooflineData& d, const RooflineLayout& l) {
  RoofLines r;
  for (auto [bw, measured] : {std::pair{d.peak_bw, false}, std::pair{d.measured_bw, true}}) {
    if (bw <= 0) continue;
    double x_end = std::min(d.max_ceiling > 0 ? d.max_ceiling / bw : l.x.hi(), l.x.hi());
    double x_start = std::max(l.x.lo(), l.y.lo() / bw);
    if (x_start >= x_end) continue;  // entirely below the plot
    r.memory.push_back({bw, measured, {l.x(x_start), l.y(bw * x_start), l.x(x_end), l.y(bw * x_end)}});
  }
  for (const auto& c : d.ceilings) {
    double ridge = d.peak_bw > 0 ? c.flops_per_s / d.peak_bw : d.measured_bw > 0 ? c.flops_per_s / d.measured_bw : 0;
    double x0 = ridge > 0 ? std::max(l.x(ridge), l.left) : l.left;
    double y = l.y(c.flops_per_s);
    r.compute.push_back({x0, y, l.right, y});
  }
  return r;
}

void draw_roofs(Svg& svg, const RooflineData& d, const RoofLines& roofs) {
  svg.raw("<g clip-path=\"url(#roofline-plot-area)\">\n");
  for (const auto& r : roofs.memory)
    svg.raw(fmt::format("<path class=\"roof-memory\" data-kind=\"{}\" d=\"M {} {} L {} {}\" fill=\"none\" stroke=\"{}\" "
                        "stroke-width=\"{}\"{}/>\n",
                        r.measured ? "measured" : "peak", px(r.seg.x0), px(r.seg.y0), px(r.seg.x1), px(r.seg.y1),
                        kMemoryRoofColour, r.measured ? "2" : "2.5", r.measured ? " stroke-dasharray=\"7 4\"" : ""));
  for (std::size_t i = 0; i < d.ceilings.size(); ++i) {
    const Segment& s = roofs.compute[i];
    svg.line(s.x0, s.y0, s.x1, s.y1,
             fmt::format("class=\"roof-compute\" data-label=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"",
                         xml_escape(d.ceilings[i].label), d.ceilings[i].colour));
  }
  svg.raw("</g>\n");
}

constexpr int kOutside = 1000;  // label placement: penalty for a label that would leave the plot

// Memory roof labels along the line: peak above it, measured below it.
void place_memory_roof_labels(Svg& labels, Obstacles& taken, const std::vector<Roof>& roofs, const Box& plot) {
  for (const auto& r : roofs) {
    double dx = r.seg.x1 - r.seg.x0, dy = r.seg.y1 - r.seg.y0, len = std::hypot(dx, dy);
    if (len < 80) continue;
    std::string label = bandwidth_text(r.bw) + (r.measured ? " measured" : "");
    double ux = dx / len, uy = dy / len;
    double nx = uy, ny = -ux;  // unit normal pointing up-left, away from the area under the roof
    double offset = r.measured ? -13 : 5;
    double half_w = text_width(label, 11) / 2;
    // The rotated text as a row of small squares along it, so that its footprint follows the slope.
    auto footprint = [&](double t) {
      double bx = r.seg.x0 + dx * t + nx * offset, by = r.seg.y0 + dy * t + ny * offset;  // baseline centre
      int n = std::max(1, static_cast<int>(std::ceil(2 * half_w / 10)));
      std::vector<Box> parts;
      for (int k = 0; k < n; ++k) {
        double along = -half_w + (k + 0.5) * (2 * half_w / n);
        double qx = bx + ux * along + nx * 4, qy = by + uy * along + ny * 4;
        parts.push_back({qx - 6, qy - 6, qx + 6, qy + 6});
      }
      return parts;
    };
    double best_t = 0;
    int best_cost = kOutside;
    for (double t : {0.3, 0.35, 0.25, 0.4, 0.2, 0.45, 0.5, 0.15, 0.55, 0.6, 0.1, 0.65, 0.7, 0.75}) {
      auto parts = footprint(t);
      if (!std::all_of(parts.begin(), parts.end(), [&](const Box& q) { return q.inside(plot); })) continue;
      int cost = 0;
      for (const auto& q : parts) cost += taken.cost(q);
      if (cost < best_cost) {
        best_cost = cost;
        best_t = t;
      }
    }
    if (best_cost == kOutside) continue;  // no room inside the plot
    for (const auto& q : footprint(best_t)) taken.labels.push_back(q);
    double cx = r.seg.x0 + dx * best_t + nx * offset, cy = r.seg.y0 + dy * best_t + ny * offset;
    labels.halo_text(cx, cy, label, 11, "middle", fmt::format("class=\"roof-label\" fill=\"{}\"", kMemoryRoofColour),
                  fmt::format("rotate({} {} {})", px(std::atan2(dy, dx) * 180 / kPi), px(cx), px(cy)));
  }
}

// Ceiling labels, highest first: at the right end or just after the ridge, above or below the line.
void place_ceiling_labels(Svg& labels, Obstacles& taken, const RooflineData& d, const std::vector<Segment>& lines,
                          const RooflineLayout& l) {
  const Box plot = l.plot();
  std::vector<std::size_t> order(d.ceilings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return d.ceilings[a].flops_per_s > d.ceilings[b].flops_per_s; });
  auto max_chars = static_cast<std::size_t>((l.right - l.left - 20) / (11 * kCharWidthPerPx));
  for (std::size_t i : order) {
    const Ceiling& c = d.ceilings[i];
    std::string label = truncate(c.label, max_chars);
    double y = lines[i].y0, ridge_x = lines[i].x0;
    struct Place {
      double x, baseline;
      std::string_view anchor;
    };
    std::vector<Place> places = {{l.right - 6, y - 5, "end"}, {ridge_x + 8, y - 5, "start"},
                                 {l.right - 6, y + 14, "end"}, {ridge_x + 8, y + 14, "start"}};
    for (int k = 1; k <= 6; ++k) places.push_back({l.right - 6, y + 14 + 13.0 * k, "end"});
    Place best = places.front();
    int best_hits = kOutside * 2;
    for (const auto& p : places) {
      Box b = text_box(p.x, p.baseline, label, 11, p.anchor);
      int hits = taken.cost(b) + (b.inside(plot) ? 0 : kOutside);
      if (hits < best_hits) {
        best_hits = hits;
        best = p;
      }
      if (hits == 0) break;
    }
    taken.labels.push_back(text_box(best.x, best.baseline, label, 11, best.anchor));
    labels.halo_text(best.x, best.baseline, label, 11, best.anchor,
                  fmt::format("class=\"roof-label\" fill=\"{}\"", c.colour));
  }
}

// Operator labels: the preferred side alternates from one operator to the next; when the spots next to
// the point are taken, further ones get a leader line (drawn on `svg`, under the labels).
void place_operator_labels(Svg& svg, Svg& labels, Obstacles& taken, const std::vector<const RooflinePoint*>& points,
                           const RooflineLayout& l) {
  const Box plot = l.plot();
  struct Spot {
    double dx, dy;
    std::string_view anchor;
  };
  std::vector<Spot> spots = {{8, -6, "start"}, {8, 13, "start"}, {-8, -6, "end"},    {-8, 13, "end"},
                             {0, -10, "middle"}, {0, 19, "middle"}, {8, 4, "start"}, {-8, 4, "end"}};
  for (int ring = 1; ring <= 4; ++ring) {
    double up = -6 - 14.0 * ring, down = 13 + 14.0 * ring;
    for (const Spot& s : {Spot{10, up, "start"}, Spot{10, down, "start"}, Spot{-10, up, "end"}, Spot{-10, down, "end"}})
      spots.push_back(s);
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto* p = points[i];
    if (p->label.empty()) continue;
    std::string label = truncate(p->label, 28);
    double cx = l.x(p->intensity_flop_per_byte), cy = l.y(p->achieved_flops_per_s);
    std::size_t best = 0;
    int best_hits = kOutside * 2;
    for (std::size_t k = 0; k < spots.size(); ++k) {
      std::size_t j = k < 2 ? (k + i) % 2 : k;
      Box b = text_box(cx + spots[j].dx, cy + spots[j].dy, label, 11, spots[j].anchor);
      int hits = taken.cost(b) + (b.inside(plot) ? 0 : kOutside);
      if (k >= 8) hits += taken.leader_cost({cx, cy, std::clamp(cx, b.x0, b.x1), std::clamp(cy, b.y0, b.y1)});
      if (hits < best_hits) {
        best_hits = hits;
        best = j;
      }
      if (hits == 0) break;
    }
    const Spot& s = spots[best];
    Box b = text_box(cx + s.dx, cy + s.dy, label, 11, s.anchor);
    taken.labels.push_back(b);
    double lx = std::clamp(cx, b.x0, b.x1), ly = std::clamp(cy, b.y0, b.y1);
    if (std::hypot(lx - cx, ly - cy) > 12)
      svg.line(cx, cy, lx, ly, "class=\"leader\" stroke=\"#999999\" stroke-width=\"0.8\"");
    labels.halo_text(cx + s.dx, cy + s.dy, label, 11, s.anchor, "class=\"point-label\" fill=\"#222222\"");
  }
}

void draw_operators(Svg& svg, const std::vector<const RooflinePoint*>& points, const RooflineLayout& l) {
  for (const auto* p : points) {
    double cx = l.x(p->intensity_flop_per_byte), cy = l.y(p->achieved_flops_per_s);
    svg.raw(fmt::format("<circle class=\"point\" data-label=\"{}\" cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\" "
                        "stroke=\"#ffffff\" stroke-width=\"1\"><title>{}</title></circle>\n",
                        xml_escape(p->label), px(cx), px(cy), kPointColour,
                        xml_escape(fmt::format("{}: {} FLOP/byte, {} TFLOP/s", p->label,
                                               sig3(p->intensity_flop_per_byte),
                                               sig3(p->achieved_flops_per_s / kTera)))));
  }
}

void draw_roofline_legend(Svg& svg, const RooflineData& d, const RooflineLayout& l) {
  double x = l.right + 24, y = l.top + 8;
  auto max_chars = static_cast<std::size_t>((l.width - x - 40) / (11 * kCharWidthPerPx));
  svg.text(x, y, "Legend", "class=\"legend\" font-weight=\"bold\" font-size=\"12\"");
  y += 22;
  auto entry = [&](std::string_view sample, const std::string& label, const std::string& note) {
    svg.raw(sample);
    svg.text(x + 34, y + 4, truncate(label, max_chars), "class=\"legend\"");
    if (!note.empty()) {
      y += 15;
      svg.text(x + 34, y + 4, note, "class=\"legend\" fill=\"#666666\" font-size=\"10\"");
    }
    y += 22;
  };
  auto sample_line = [&](std::string_view colour, std::string_view extra) {
    return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>\n",
                       px(x), px(y), px(x + 26), px(y), colour, extra);
  };
  if (d.peak_bw > 0) entry(sample_line(kMemoryRoofColour, ""), d.peak_bw_name + " " + bandwidth_text(d.peak_bw), "");
  if (d.measured_bw > 0)
    entry(sample_line(kMemoryRoofColour, " stroke-dasharray=\"7 4\""),
          "measured memory " + bandwidth_text(d.measured_bw), "");
  for (const auto& c : d.ceilings) {
    double bw = d.peak_bw > 0 ? d.peak_bw : d.measured_bw;
    std::string note = bw > 0 ? "ridge at " + sig3(c.flops_per_s / bw) + " FLOP/byte" : "";
    entry(sample_line(c.colour, ""), c.label, note);
  }
  if (!d.points.empty()) {
    std::string marker = fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4.5\" fill=\"{}\"/>\n", px(x + 13), px(y),
                                     kPointColour);
    entry(marker, d.points.size() == 1 ? "operator" : fmt::format("operators ({})", d.points.size()), "");
  }
}

}  // namespace

std::string render_roofline_svg(const RooflineChart& chart) {
  const RooflineData d = roofline_data(chart);
  if (d.empty()) return no_data_svg(chart.title);
  const RooflineLayout l = roofline_layout(d);
  Svg svg(l.width, l.height, chart.title);
  draw_roofline_axes(svg, l);
  const RoofLines roofs = roof_lines(d, l);
  draw_roofs(svg, d, roofs);

  // Labels go where they cover the fewest operators, roof lines and labels placed before them, on a layer above
  // the leader lines, so that a leader never strikes through text.
  Obstacles taken;
  for (const auto* p : d.points) {
    double cx = l.x(p->intensity_flop_per_byte), cy = l.y(p->achieved_flops_per_s);
    taken.points.push_back({cx - 5, cy - 5, cx + 5, cy + 5});
  }
  for (const auto& r : roofs.memory) taken.lines.push_back(r.seg);
  for (const auto& s : roofs.compute) taken.lines.push_back(s);
  Svg labels = Svg::layer();
  place_memory_roof_labels(labels, taken, roofs.memory, l.plot());
  place_ceiling_labels(labels, taken, d, roofs.compute, l);
  place_operator_labels(svg, labels, taken, d.points, l);
  svg.raw(labels.markup());

  draw_operators(svg, d.points, l);  // last, so that no label hides one
  draw_roofline_legend(svg, d, l);
  return std::move(svg).finish();
}

// ---------------------------------------------------------------------------------------------------------
// Memory bars

namespace {

// A round tick step giving about `target` intervals up to `max_v`: 1, 2, 2.5 or 5 x 10^k.
double nice_step(double max_v, int target) {
  double raw = max_v / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw - 1e-12 * mag) return m * mag;
  return 10 * mag;
}

// White or near-black text, whichever reads better on `hex` (#rrggbb).
std::string_view text_colour_on(std::string_view hex) {
  auto channel = [&](std::size_t i) { return std::stoi(std::string(hex.substr(i, 2)), nullptr, 16) / 255.0; };
  double luminance = 0.299 * channel(1) + 0.587 * channel(3) + 0.114 * channel(5);
  return luminance > 0.6 ? "#222222" : "#ffffff";
}

}  // namespace

std::string render_memory_svg(const MemoryChart& chart) {
  // Segment names in order of first appearance; each keeps its colour in every bar.
  std::vector<std::string> names;
  double max_gib = 0;
  for (const auto& bar : chart.bars) {
    double total = 0;
    for (const auto& [name, bytes] : bar.segments) {
      if (!positive(bytes)) continue;
      total += bytes;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    max_gib = std::max(max_gib, total / kGiB);
    if (positive(bar.capacity_bytes)) max_gib = std::max(max_gib, bar.capacity_bytes / kGiB);
  }
  if (chart.bars.empty() || !positive(max_gib)) return no_data_svg(chart.title);
  auto colour_of = [&](const std::string& name) {
    auto i = static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    return kPalette[i % kPalette.size()];
  };

  // Layout.
  const double n_bars = static_cast<double>(chart.bars.size());
  const double plot_w = std::max(240.0, 100 * n_bars);
  const double slot = plot_w / n_bars, bar_w = 50, plot_h = 380, top = 56, font = 11;
  const std::size_t label_chars = 36;
  double max_label_w = 0;
  for (const auto& bar : chart.bars) max_label_w = std::max(max_label_w, text_width(truncate(bar.label, label_chars), font));
  const bool rotate = max_label_w > slot - 8;
  constexpr double kAngle = 35.0;
  const double cos_a = std::cos(kAngle * kPi / 180), sin_a = std::sin(kAngle * kPi / 180);
  const double left = std::max(72.0, rotate ? max_label_w * cos_a + 8 - slot / 2 : 0.0);
  const double right = left + plot_w;
  const double bottom = top + plot_h;
  const double label_h = rotate ? max_label_w * sin_a + font + 10 : 30;
  double legend_text_w = text_width("over capacity", font);
  for (const auto& n : names) legend_text_w = std::max(legend_text_w, text_width(truncate(n, 28), font));
  const double legend_x = right + 28;
  // Wide enough for the title too, within reason.
  const double width =
      std::ceil(std::max(legend_x + 30 + legend_text_w + 20, std::min(1200.0, text_width(chart.title, 15) + 40)));
  const double legend_h = 40 + 20.0 * static_cast<double>(names.size() + 2);
  const double height = std::ceil(std::max(bottom + label_h + 12, top + legend_h));

  const double step = nice_step(max_gib * 1.12, 6);
  const double axis_top = std::ceil(max_gib * 1.12 / step - 1e-9) * step;
  auto y_of = [&](double gib) { return bottom - gib / axis_top * plot_h; };

  Svg svg(width, height, chart.title);
  // Gridlines and the y axis.
  for (int i = 0; i * step <= axis_top + step * 1e-9; ++i) {
    double v = i * step, y = y_of(v);
    svg.line(left, y, right, y, fmt::format("stroke=\"{}\"", i == 0 ? std::string_view("#888888") : kGridColour));
    svg.text(left - 6, y + 4, fmt::format("{:g}", v), "class=\"tick\" text-anchor=\"end\"");
  }
  svg.line(left, top, left, bottom, "stroke=\"#888888\"");
  const double axis_title_x = left - 50;
  svg.text(axis_title_x, (top + bottom) / 2, "Memory (GiB)",
           fmt::format("class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 {} {})\"",
                       px(axis_title_x), px((top + bottom) / 2)));

  bool any_over = false, any_capacity = false;
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const MemoryBar& bar = chart.bars[i];
    const double cx = left + slot * (static_cast<double>(i) + 0.5), x0 = cx - bar_w / 2;
    double total_gib = 0;
    for (const auto& seg : bar.segments)
      if (positive(seg.second)) total_gib += seg.second / kGiB;
    const bool has_capacity = positive(bar.capacity_bytes);
    const double cap_gib = has_capacity ? bar.capacity_bytes / kGiB : 0;
    const bool over = has_capacity && total_gib > cap_gib;
    any_over = any_over || over;
    any_capacity = any_capacity || has_capacity;

    std::string summary = has_capacity ? fmt::format("{}: {} GiB of {} GiB{}", bar.label, one_decimal(total_gib),
                                                     one_decimal(cap_gib), over ? ", does not fit" : "")
                                       : fmt::format("{}: {} GiB", bar.label, one_decimal(total_gib));
    svg.raw(fmt::format("<g class=\"bar\" data-label=\"{}\"><title>{}</title>\n", xml_escape(bar.label),
                        xml_escape(summary)));

    // The capacity label goes above its line, or below it when the bar top's labels need that room.
    const double y_cap = has_capacity ? y_of(cap_gib) : 0;
    const double y_total = y_of(total_gib);
    std::string cap_label = one_decimal(cap_gib) + " GiB";
    double cap_baseline = y_cap - 4;
    if (over && y_cap - y_total < 16) cap_baseline = y_cap + 13;
    Box cap_box = has_capacity ? text_box(cx, cap_baseline, cap_label, 10, "middle") : Box{0, 0, 0, 0};

    double cum = 0;
    for (const auto& [name, bytes] : bar.segments) {
      if (!positive(bytes)) continue;
      double gib = bytes / kGiB;
      double y1 = y_of(cum), y0 = y_of(cum + gib);
      cum += gib;
      std::string_view colour = colour_of(name);
      svg.raw(fmt::format("<rect class=\"segment\" data-name=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
                          "fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"0.5\"><title>{}</title></rect>\n",
                          xml_escape(name), px(x0), px(y0), px(bar_w), px(y1 - y0), colour,
                          xml_escape(fmt::format("{}: {} GiB", name, one_decimal(gib)))));
      std::string value = one_decimal(gib);
      Box vb = text_box(cx, (y0 + y1) / 2 + 3.5, value, 10, "middle");
      if (y1 - y0 >= 14 && text_width(value, 10) < bar_w - 4 && !(has_capacity && vb.overlaps(cap_box)))
        svg.text(cx, (y0 + y1) / 2 + 3.5, value,
                 fmt::format("class=\"segment-value\" text-anchor=\"middle\" font-size=\"10\" fill=\"{}\"",
                             text_colour_on(colour)));
    }

    // Above the bar: its total, and "does not fit" when it exceeds the capacity.
    // A fitting bar's total is left out when it would sit under the capacity label.
    std::optional<double> label_y = y_total - 5;
    if (has_capacity && !over && y_total - y_cap < 17) label_y.reset();
    if (over) label_y = std::min(*label_y, cap_baseline - 14);
    if (label_y) {
      svg.text(cx, *label_y, over ? "needs " + one_decimal(total_gib) + " GiB" : one_decimal(total_gib) + " GiB",
               "class=\"total\" text-anchor=\"middle\" font-size=\"10\" fill=\"#333333\"");
      if (over)
        svg.text(cx, *label_y - 13, "does not fit",
                 fmt::format("class=\"overflow\" text-anchor=\"middle\" font-size=\"11\" font-weight=\"bold\" fill=\"{}\"",
                             kOverColour));
    }
    if (has_capacity) {
      svg.line(x0 - 8, y_cap, x0 + bar_w + 8, y_cap,
               fmt::format("class=\"capacity\" data-fits=\"{}\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"5 3\"",
                           over ? "false" : "true", over ? kOverColour : std::string_view("#333333")));
      svg.boxed_text(cx, cap_baseline, cap_label, 10, "middle",
                     fmt::format("class=\"capacity-label\" fill=\"{}\"", over ? kOverColour : std::string_view("#333333")));
    }
    svg.raw("</g>\n");

    // The device name under the axis, rotated when any name is too long to sit flat.
    std::string label = truncate(bar.label, label_chars);
    if (rotate)
      svg.text(cx + 4, bottom + 14, label,
               fmt::format("class=\"bar-label\" text-anchor=\"end\" transform=\"rotate(-{} {} {})\"", px(kAngle),
                           px(cx + 4), px(bottom + 14)));
    else
      svg.text(cx, bottom + 18, label, "class=\"bar-label\" text-anchor=\"middle\"");
  }

  // Legend: segments top of stack first, as they appear in the bars, then the capacity lines.
  double x = legend_x, y = top + 4;
  svg.text(x, y, "Legend", "class=\"legend\" font-weight=\"bold\" font-size=\"12\"");
  y += 20;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    svg.raw(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"12\" fill=\"{}\"/>\n", px(x), px(y - 6),
                        colour_of(*it)));
    svg.text(x + 30, y + 4, truncate(*it, 28), "class=\"legend\"");
    y += 20;
  }
  if (any_capacity) {
    svg.line(x, y, x + 20, y, "stroke=\"#333333\" stroke-width=\"2\" stroke-dasharray=\"5 3\"");
    svg.text(x + 30, y + 4, "capacity", "class=\"legend\"");
    y += 20;
  }
  if (any_over) {
    svg.line(x, y, x + 20, y,
             fmt::format("stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"5 3\"", kOverColour));
    svg.text(x + 30, y + 4, "over capacity", "class=\"legend\"");
  }
  return std::move(svg).finish();
}

// ---------------------------------------------------------------------------------------------------------
// Serving latency against load

std::string render_latency_svg(const LatencyChart& chart) {
  double max_load = 0, ttft_lo = INFINITY, ttft_hi = 0, tpot_lo = INFINITY, tpot_hi = 0;
  for (const auto& s : chart.series)
    for (const auto& p : s.points) {
      if (!positive(p.load)) continue;
      max_load = std::max(max_load, p.load);
      if (positive(p.ttft_seconds)) ttft_lo = std::min(ttft_lo, p.ttft_seconds), ttft_hi = std::max(ttft_hi, p.ttft_seconds);
      if (positive(p.tpot_seconds)) tpot_lo = std::min(tpot_lo, p.tpot_seconds), tpot_hi = std::max(tpot_hi, p.tpot_seconds);
    }
  // Answers of one token have no time between tokens: the TTFT panel is drawn and the TPOT panel says so.
  if (!positive(max_load) || !positive(ttft_hi)) return no_data_svg(chart.title);
  const bool have_tpot = positive(tpot_hi);
  if (!have_tpot) tpot_lo = tpot_hi = chart.tpot_target_seconds > 0 ? chart.tpot_target_seconds : 0.01;
  if (positive(chart.ttft_target_seconds)) ttft_lo = std::min(ttft_lo, chart.ttft_target_seconds), ttft_hi = std::max(ttft_hi, chart.ttft_target_seconds);
  if (positive(chart.tpot_target_seconds)) tpot_lo = std::min(tpot_lo, chart.tpot_target_seconds), tpot_hi = std::max(tpot_hi, chart.tpot_target_seconds);

  const double left = 80, plot_w = 560, right = left + plot_w, top = 56, panel_h = 220, gap = 56, font = 11;
  double legend_w = 0;
  for (const auto& s : chart.series) legend_w = std::max(legend_w, text_width(truncate(s.label, 28), font));
  const double width = std::ceil(std::max(right + 40 + legend_w + 40, std::min(1200.0, text_width(chart.title, 15) + 40)));
  const double height = top + 2 * panel_h + gap + 60;
  const double step = nice_step(max_load * 1.05, 6);
  const double x_top = std::ceil(max_load * 1.05 / step - 1e-9) * step;
  auto x_of = [&](double v) { return left + v / x_top * plot_w; };

  Svg svg(width, height, chart.title);
  struct Panel {
    const char* metric;
    const char* title;
    double lo, hi, target, scale;  // scale: seconds -> axis unit
  };
  const std::string ttft_title = fmt::format("p{} TTFT (s)", chart.ttft_percentile),
                    tpot_title = fmt::format("p{} TPOT (ms)", chart.tpot_percentile);
  const Panel panels[2] = {{"ttft", ttft_title.c_str(), ttft_lo, ttft_hi, chart.ttft_target_seconds, 1},
                           {"tpot", tpot_title.c_str(), tpot_lo * 1000, tpot_hi * 1000, chart.tpot_target_seconds, 1000}};
  for (int k = 0; k < 2; ++k) {
    const Panel& pn = panels[k];
    const double ptop = top + k * (panel_h + gap), pbottom = ptop + panel_h;
    if (k == 1 && !have_tpot) {
      svg.line(left, ptop, left, pbottom, "stroke=\"#888888\"");
      svg.line(left, pbottom, right, pbottom, "stroke=\"#888888\"");
      svg.text((left + right) / 2, (ptop + pbottom) / 2, "no TPOT: no answer has a second token",
               "class=\"no-data\" data-metric=\"tpot\" text-anchor=\"middle\" font-size=\"14\" fill=\"#888888\"");
      continue;
    }
    auto [lo_log, hi_log] = log_range(pn.lo, pn.hi, 0.1, 0.1);
    LogScale y{lo_log, hi_log, pbottom, ptop};
    draw_log_axis(svg, y, false, 0, left, right);
    svg.line(left, ptop, left, pbottom, "stroke=\"#888888\"");
    svg.line(left, pbottom, right, pbottom, "stroke=\"#888888\"");
    for (int i = 0; i * step <= x_top + step * 1e-9; ++i) {
      double v = i * step, x = x_of(v);
      svg.line(x, pbottom, x, pbottom + 4, "stroke=\"#888888\"");
      svg.text(x, pbottom + 16, fmt::format("{:g}", v), "class=\"tick\" text-anchor=\"middle\"");
    }
    const double title_x = left - 56, mid = (ptop + pbottom) / 2;
    svg.text(title_x, mid, pn.title,
             fmt::format("class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 {} {})\"", px(title_x), px(mid)));
    if (positive(pn.target)) {
      double ty = y(pn.target * pn.scale);
      svg.line(left, ty, right, ty, fmt::format("class=\"target\" data-metric=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"", pn.metric, kOverColour));
      svg.boxed_text(right - 4, ty - 5, fmt::format("target {}", sig3(pn.target * pn.scale)), 10, "end", fmt::format("fill=\"{}\"", kOverColour));
    }
    for (std::size_t i = 0; i < chart.series.size(); ++i) {
      const LatencySeries& s = chart.series[i];
      std::string_view colour = kPalette[i % kPalette.size()];
      std::string points;
      for (const auto& p : s.points) {
        double v = (k == 0 ? p.ttft_seconds : p.tpot_seconds) * pn.scale;
        if (!positive(p.load) || !positive(v)) continue;
        v = std::clamp(v, y.lo(), y.hi());
        points += fmt::format("{},{} ", px(x_of(p.load)), px(y(v)));
      }
      svg.raw(fmt::format("<polyline class=\"series\" data-label=\"{}\" data-metric=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                          xml_escape(s.label), pn.metric, points, colour));
      if (positive(s.knee_load) && s.knee_load <= x_top) {
        double kx = x_of(s.knee_load);
        svg.line(kx, ptop, kx, pbottom, fmt::format("class=\"knee\" data-label=\"{}\" stroke=\"{}\" stroke-dasharray=\"2 3\"", xml_escape(s.label), colour));
        if (k == 0) svg.boxed_text(kx + 4, ptop + 14 + 14 * static_cast<double>(i), fmt::format("knee {}", sig3(s.knee_load)), 10, "start", fmt::format("fill=\"{}\"", colour));
      }
    }
  }
  const double bottom = top + 2 * panel_h + gap;
  svg.text((left + right) / 2, bottom + 40, chart.load_label, "class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\"");
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    double ly = top + 10 + 20 * static_cast<double>(i);
    svg.line(right + 28, ly, right + 48, ly, fmt::format("stroke=\"{}\" stroke-width=\"2\"", kPalette[i % kPalette.size()]));
    svg.text(right + 54, ly + 4, truncate(chart.series[i].label, 28));
  }
  return std::move(svg).finish();
}

// Cost over time

std::string render_cost_svg(const CostChart& chart) {
  double max_month = 0, max_usd = 0;
  for (const auto& s : chart.series)
    for (const auto& [m, usd] : s.points) {
      if (!std::isfinite(m) || !std::isfinite(usd)) continue;
      max_month = std::max(max_month, m);
      max_usd = std::max(max_usd, usd);
    }
  if (!positive(max_month) || !positive(max_usd)) return no_data_svg(chart.title);
  const double left = 96, top = 56, plot_w = 560, plot_h = 340, font = 11;
  const double right = left + plot_w, bottom = top + plot_h;
  double legend_w = 0;
  for (const auto& s : chart.series) legend_w = std::max(legend_w, text_width(truncate(s.label, 48), font));
  const double width = std::ceil(std::max(right + 40 + legend_w + 30, std::min(1200.0, text_width(chart.title, 15) + 40)));
  const double height = bottom + 56;
  const double y_step = nice_step(max_usd * 1.08, 6), y_top = std::ceil(max_usd * 1.08 / y_step - 1e-9) * y_step;
  const double x_step = nice_step(max_month, 8), x_end = std::ceil(max_month / x_step - 1e-9) * x_step;
  auto x_of = [&](double m) { return left + m / x_end * plot_w; };
  auto y_of = [&](double usd) { return bottom - usd / y_top * plot_h; };

  Svg svg(width, height, chart.title);
  for (int i = 0; i * y_step <= y_top + y_step * 1e-9; ++i) {
    double v = i * y_step, y = y_of(v);
    svg.line(left, y, right, y, fmt::format("stroke=\"{}\"", i == 0 ? std::string_view("#888888") : kGridColour));
    std::string label = v >= 1e6 ? fmt::format("${:g}M", v / 1e6) : v >= 1e3 ? fmt::format("${:g}k", v / 1e3) : fmt::format("${:g}", v);
    svg.text(left - 6, y + 4, label, "class=\"tick\" text-anchor=\"end\"");
  }
  for (int i = 0; i * x_step <= x_end + x_step * 1e-9; ++i) {
    double m = i * x_step, x = x_of(m);
    svg.line(x, bottom, x, bottom + 4, "stroke=\"#888888\"");
    svg.text(x, bottom + 16, fmt::format("{:g}", m), "class=\"tick\" text-anchor=\"middle\"");
  }
  svg.line(left, top, left, bottom, "stroke=\"#888888\"");
  svg.text((left + right) / 2, bottom + 36, "Months", "class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\"");
  const double axis_title_x = left - 70;
  svg.text(axis_title_x, (top + bottom) / 2, "Cumulative cost (USD)",
           fmt::format("class=\"axis-title\" text-anchor=\"middle\" font-size=\"13\" transform=\"rotate(-90 {} {})\"",
                       px(axis_title_x), px((top + bottom) / 2)));

  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const CostSeries& s = chart.series[i];
    std::string pts;
    for (const auto& [m, usd] : s.points)
      if (std::isfinite(m) && std::isfinite(usd) && m >= 0 && usd >= 0) pts += px(x_of(m)) + "," + px(y_of(usd)) + " ";
    std::string_view colour = kPalette[i % kPalette.size()];
    svg.raw(fmt::format("<polyline class=\"series\" data-name=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\" "
                        "points=\"{}\"><title>{}</title></polyline>\n",
                        xml_escape(s.name), colour, pts, xml_escape(s.label)));
    double ly = top + 10 + 22.0 * static_cast<double>(i);
    svg.line(right + 20, ly, right + 40, ly, fmt::format("stroke=\"{}\" stroke-width=\"2.5\"", colour));
    svg.text(right + 46, ly + 4, truncate(s.label, 48), "class=\"legend\"");
  }
  if (chart.break_even_months >= 0 && chart.break_even_months <= x_end) {
    double x = x_of(chart.break_even_months);
    svg.raw(fmt::format("<g class=\"break-even\" data-months=\"{}\">\n", px(chart.break_even_months)));
    svg.line(x, top, x, bottom, "stroke=\"#333333\" stroke-dasharray=\"5,4\"");
    // Near the right edge the label goes left of the line, clear of the legend.
    const bool left_of_line = x > left + 0.7 * (right - left);
    svg.boxed_text(left_of_line ? x - 4 : x + 4, top + 14, fmt::format("break-even: {} months", one_decimal(chart.break_even_months)),
                   font, left_of_line ? "end" : "start", "class=\"break-even-label\"");
    svg.raw("</g>\n");
  }
  return std::move(svg).finish();
}

}  // namespace hwplan::report
