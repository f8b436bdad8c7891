#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "svg.hpp"
#include "gdsb/report/html.hpp"
#include "gdsb/units.hpp"

namespace gdsb::report::svg {
namespace {

constexpr double kLeft = 64, kRight = 30, kTop = 12, kBottom = 46;

struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const {
    if (log) {
      const double lv = std::log10(std::max(v, d0));
      return r0 + (lv - std::log10(d0)) / (std::log10(d1) - std::log10(d0)) * (r1 - r0);
    }
    return r0 + (v - d0) / (d1 - d0) * (r1 - r0);
  }
};

std::string fmt_tick(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e6 || (a > 0 && a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else if (a >= 100 || v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  }
  return buf;
}

// Domain and ticks for one axis over [lo, hi] (finite values).
std::pair<Scale, std::vector<Tick>> make_axis(const Axis& axis, double lo, double hi, double r0,
                                              double r1) {
  Scale s;
  s.r0 = r0;
  s.r1 = r1;
  s.log = axis.log;
  std::vector<Tick> ticks = axis.ticks;
  for (const auto& t : ticks) lo = std::min(lo, t.value), hi = std::max(hi, t.value);
  if (axis.log) {
    lo = std::max(lo, 1e-9);
    hi = std::max(hi, lo * 10);
    if (ticks.empty()) ticks = log_ticks(lo, hi);
    s.d0 = std::min(lo, ticks.empty() ? lo : ticks.front().value);
    s.d1 = std::max(hi, ticks.empty() ? hi : ticks.back().value);
  } else {
    if (axis.include_zero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    if (hi <= lo) hi = lo + 1;
    if (ticks.empty()) ticks = nice_ticks(lo, hi, 5);
    s.d0 = std::min(lo, ticks.front().value);
    s.d1 = std::max(hi, ticks.back().value);
  }
  return {s, ticks};
}

void open_svg(std::ostringstream& o, const ChartSpec& spec, int height) {
  o << "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << spec.width
    << " " << height << "\" width=\"" << spec.width << "\" height=\"" << height
    << "\" role=\"img\" aria-label=\"" << esc(spec.title) << "\">";
}

void draw_axes(std::ostringstream& o, const ChartSpec& spec, const Scale& xs,
               const std::vector<Tick>& xt, const Scale& ys, const std::vector<Tick>& yt) {
  const double x0 = kLeft, x1 = spec.width - kRight, y0 = spec.height - kBottom, y1 = kTop;
  for (const auto& t : yt) {
    const double y = ys(t.value);
    o << "<line class=\"grid\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(y)
      << "\" y2=\"" << num(y) << "\"/>";
    o << "<text class=\"tick\" x=\"" << num(x0 - 6) << "\" y=\"" << num(y + 4)
      << "\" text-anchor=\"end\">" << esc(t.label) << "</text>";
  }
  for (const auto& t : xt) {
    const double x = xs(t.value);
    o << "<line class=\"grid\" x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << num(y0)
      << "\" y2=\"" << num(y1) << "\"/>";
    o << "<text class=\"tick\" x=\"" << num(x) << "\" y=\"" << num(y0 + 16)
      << "\" text-anchor=\"middle\">" << esc(t.label) << "</text>";
  }
  o << "<line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x1) << "\" y1=\"" << num(y0)
    << "\" y2=\"" << num(y0) << "\"/>";
  o << "<line class=\"axis\" x1=\"" << num(x0) << "\" x2=\"" << num(x0) << "\" y1=\"" << num(y0)
    << "\" y2=\"" << num(y1) << "\"/>";
  o << "<text class=\"axis-label\" x=\"" << num((x0 + x1) / 2) << "\" y=\""
    << num(spec.height - 8.0) << "\" text-anchor=\"middle\">" << esc(spec.x.label) << "</text>";
  o << "<text class=\"axis-label\" transform=\"translate(14," << num((y0 + y1) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << esc(spec.y.label) << "</text>";
}

std::string no_data(const ChartSpec& spec) {
  std::ostringstream o;
  open_svg(o, spec, 60);
  o << "<text class=\"tick\" x=\"" << spec.width / 2
    << "\" y=\"34\" text-anchor=\"middle\">no data for " << esc(spec.title) << "</text></svg>";
  return o.str();
}

}  // namespace

// The SVG views embed in the HTML page, so they escape exactly as the page does.
std::string esc(const std::string& text) { return html_escape(text); }

std::string num(double v) { return format_fixed(std::isfinite(v) ? v : 0.0, 1); }

std::vector<Tick> nice_ticks(double lo, double hi, int target) {
  const double span = hi - lo;
  const double raw = span / std::max(target, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<Tick> ticks;
  const double first = std::floor(lo / step) * step;
  for (double v = first; v <= hi + step * 0.999 && ticks.size() < 50; v += step) {
    const double clean = std::fabs(v) < step * 1e-9 ? 0.0 : v;
    ticks.push_back({clean, fmt_tick(clean)});
    if (clean >= hi) break;
  }
  return ticks;
}

std::vector<Tick> log_ticks(double lo, double hi) {
  std::vector<Tick> ticks;
  const int e0 = static_cast<int>(std::floor(std::log10(lo)));
  const int e1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = e1 - e0 <= 2;  // few decades: add 2x and 5x ticks
  for (int e = e0; e <= e1; ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double v = m * std::pow(10.0, e);
      if (v >= lo / 1.0001 && v <= hi * 5.0001) ticks.push_back({v, fmt_tick(v)});
      if (v >= hi) return ticks;
    }
  }
  return ticks;
}

std::string swatch_legend(const std::vector<std::string>& names, int first_color) {
  std::ostringstream o;
  o << "<div class=\"legend\">";
  int c = first_color;
  for (const auto& n : names)
    o << "<span><i class=\"sw s" << (c++ % 8) << "\"></i>" << esc(n) << "</span>";
  o << "</div>";
  return o.str();
}

std::string line_chart(const ChartSpec& spec, const std::vector<Series>& series) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ylo = std::min(ylo, p.y),
      yhi = std::max(yhi, p.y);
    }
  }
  if (!std::isfinite(xlo)) return no_data(spec);
  if (spec.y.log) ylo = std::max(ylo, yhi / 1e6);
  const auto [xs, xt] = make_axis(spec.x, xlo, xhi, kLeft, spec.width - kRight);
  const auto [ys, yt] = make_axis(spec.y, ylo, yhi, spec.height - kBottom, kTop);
  std::ostringstream o;
  open_svg(o, spec, spec.height);
  draw_axes(o, spec, xs, xt, ys, yt);
  for (const auto& s : series) {
    o << "<g class=\"series s" << (s.color % 8) << "\"><title>" << esc(s.name)
      << "</title><polyline points=\"";
    for (const auto& p : s.points)
      if (std::isfinite(p.x) && std::isfinite(p.y)) o << num(xs(p.x)) << "," << num(ys(p.y)) << " ";
    // A presentation attribute, not a style: the page's CSS sets no dash, and its CSP
    // allows no inline styles.
    o << (s.dashed ? "\" stroke-dasharray=\"5 4\"/>" : "\"/>");
    if (s.markers || s.points.size() == 1) {
      for (const auto& p : s.points) {
        o << "<circle r=\"3.5\" cx=\"" << num(xs(p.x)) << "\" cy=\"" << num(ys(p.y)) << "\"><title>"
          << esc(s.name) << ": " << esc(fmt_tick(p.y)) << " " << esc(spec.y.label)
          << "</title></circle>";
      }
    }
    o << "</g>";
  }
  for (const auto& m : spec.x_marks) {
    const double x = xs(m.x);
    o << "<g class=\"xmark\"><title>" << esc(m.note) << "</title><line class=\"mark\" x1=\"" << num(x)
      << "\" x2=\"" << num(x) << "\" y1=\"" << num(spec.height - kBottom) << "\" y2=\"" << num(kTop)
      << "\" stroke-dasharray=\"4 3\"/><text class=\"tick bad-text\" x=\"" << num(x + 3) << "\" y=\""
      << num(kTop + 10) << "\">" << esc(m.label) << "</text></g>";
  }
  o << "</svg>";
  if (series.size() > 1) {
    // Each series' own colour (curves and their reference lines share one).
    o << "<div class=\"legend\">";
    for (const auto& s : series) {
      if (s.dashed)  // a dashed stroke as its swatch
        o << "<span><svg class=\"series s" << (s.color % 8)
          << "\" width=\"16\" height=\"10\" aria-hidden=\"true\"><polyline points=\"0,5 16,5\" "
             "stroke-dasharray=\"5 4\"/></svg> "
          << esc(s.name) << "</span>";
      else
        o << "<span><i class=\"sw s" << (s.color % 8) << "\"></i>" << esc(s.name) << "</span>";
    }
    o << "</div>";
  }
  return o.str();
}

std::string histogram(const ChartSpec& spec, const std::vector<Bucket>& buckets) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, yhi = 0;
  for (const auto& b : buckets) {
    xlo = std::min(xlo, spec.x.log ? std::max(b.lower, 1e-3) : b.lower);
    xhi = std::max(xhi, b.upper);
    yhi = std::max(yhi, b.count);
  }
  if (buckets.empty() || !(xhi > xlo)) return no_data(spec);
  const auto [xs, xt] = make_axis(spec.x, xlo, xhi, kLeft, spec.width - kRight);
  const auto [ys, yt] = make_axis(spec.y, 0, std::max(yhi, 1.0), spec.height - kBottom, kTop);
  std::ostringstream o;
  open_svg(o, spec, spec.height);
  draw_axes(o, spec, xs, xt, ys, yt);
  o << "<g class=\"bars s0\">";
  for (const auto& b : buckets) {
    const double x0 = xs(spec.x.log ? std::max(b.lower, 1e-3) : b.lower);
    const double x1 = xs(b.upper);
    const double y = ys(b.count);
    o << "<rect x=\"" << num(x0) << "\" y=\"" << num(y) << "\" width=\""
      << num(std::max(x1 - x0 - 0.5, 0.8)) << "\" height=\"" << num(ys(0) - y) << "\"><title>["
      << esc(fmt_tick(b.lower)) << ", " << esc(fmt_tick(b.upper))
      << ") us: " << esc(fmt_tick(b.count)) << " ops</title></rect>";
  }
  o << "</g></svg>";
  return o.str();
}

std::string bar_chart(const ChartSpec& spec, const std::vector<std::string>& segment_names,
                      const std::vector<Bar>& bars, const std::string& mark_name) {
  if (bars.empty()) return no_data(spec);
  std::size_t longest = 0;
  for (const auto& b : bars) longest = std::max(longest, b.label.size());
  const double label_w = std::clamp(static_cast<double>(longest) * 7.2 + 14, 60.0, 320.0);
  const double row = 22, top = 8;
  const int height = static_cast<int>(top + row * static_cast<double>(bars.size()) + 36);
  double hi = 0;
  for (const auto& b : bars) {
    double sum = 0;
    for (const double v : b.segments) sum += std::max(v, 0.0);
    hi = std::max({hi, sum, b.mark.value_or(0.0)});
  }
  Axis ax = spec.x;
  const auto [xs, xt] = make_axis(ax, 0, hi > 0 ? hi : 1, label_w, spec.width - 70.0);
  std::ostringstream o;
  open_svg(o, spec, height);
  const double base_y = top + row * static_cast<double>(bars.size());
  for (const auto& t : xt) {
    o << "<line class=\"grid\" x1=\"" << num(xs(t.value)) << "\" x2=\"" << num(xs(t.value))
      << "\" y1=\"" << num(top) << "\" y2=\"" << num(base_y) << "\"/><text class=\"tick\" x=\""
      << num(xs(t.value)) << "\" y=\"" << num(base_y + 14) << "\" text-anchor=\"middle\">"
      << esc(t.label) << "</text>";
  }
  o << "<text class=\"axis-label\" x=\"" << num((label_w + spec.width - 70.0) / 2) << "\" y=\""
    << num(base_y + 30) << "\" text-anchor=\"middle\">" << esc(spec.x.label) << "</text>";
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const auto& b = bars[i];
    const double y = top + row * static_cast<double>(i);
    o << "<text class=\"bar-label" << (b.flagged ? " bad-text" : "") << "\" x=\""
      << num(label_w - 6) << "\" y=\"" << num(y + 15) << "\" text-anchor=\"end\">" << esc(b.label)
      << "</text>";
    double acc = 0;
    for (std::size_t s = 0; s < b.segments.size(); ++s) {
      const double v = std::max(b.segments[s], 0.0);
      const std::string seg = s < segment_names.size() ? segment_names[s] : "";
      o << "<rect class=\"s" << (s % 8) << "\" x=\"" << num(xs(acc)) << "\" y=\"" << num(y + 4)
        << "\" width=\"" << num(xs(acc + v) - xs(acc)) << "\" height=\"14\"><title>"
        << esc(b.label);
      if (!seg.empty()) o << " " << esc(seg);
      o << ": " << esc(fmt_tick(v)) << "</title></rect>";
      acc += v;
    }
    if (b.mark) {
      o << "<line class=\"mark\" x1=\"" << num(xs(*b.mark)) << "\" x2=\"" << num(xs(*b.mark))
        << "\" y1=\"" << num(y + 1) << "\" y2=\"" << num(y + 21) << "\"><title>" << esc(mark_name)
        << ": " << esc(fmt_tick(*b.mark)) << "</title></line>";
    }
    o << "<text class=\"bar-note\" x=\"" << num(xs(std::max(acc, b.mark.value_or(0.0))) + 5)
      << "\" y=\"" << num(y + 15) << "\">" << esc(b.note) << "</text>";
  }
  o << "</svg>";
  std::vector<std::string> legend = segment_names;
  if (legend.size() > 1 || !mark_name.empty()) {
    std::string html = swatch_legend(legend, 0);
    if (!mark_name.empty())
      html.insert(html.size() - 6,
                  "<span><i class=\"sw mark-sw\"></i>" + esc(mark_name) + "</span>");
    return o.str() + html;
  }
  return o.str();
}

}  // namespace gdsb::report::svg
