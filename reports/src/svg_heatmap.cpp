// Heat maps for GPU x GPU and GPU x device matrices (p2p reports).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "gdsb/report/metrics.hpp"
#include "svg.hpp"

namespace gdsb::report::svg {
namespace {

struct Rgb {
  double r, g, b;
};

Rgb mix(Rgb a, Rgb b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}

std::string css(Rgb c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(c.r)),
                static_cast<int>(std::lround(c.g)), static_cast<int>(std::lround(c.b)));
  return buf;
}

bool dark(Rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b < 140; }

// Good -> fair -> bad, readable by most colour-blind readers (ColorBrewer RdYlBu reversed).
Rgb ranked(double t) {
  const Rgb good{44, 123, 182}, mid{255, 255, 191}, bad{215, 25, 28};
  return t < 0.5 ? mix(good, mid, t * 2) : mix(mid, bad, (t - 0.5) * 2);
}

Rgb sequential(double t) { return mix({239, 243, 255}, {8, 69, 148}, std::clamp(t, 0.0, 1.0)); }

// How far apart the cells are, in words: "cells 0.683 to 0.75 GB/s: the lowest 8.9% below
// the highest".
std::string spread_words(double lo, double hi, const std::string& unit) {
  if (lo == hi) return "every cell " + format_three_digits(hi) + " " + unit;
  std::string w = "cells " + format_three_digits(lo) + " to " + format_three_digits(hi) + " " + unit;
  if (hi > 0 && lo >= 0) w += ": the lowest " + format_three_digits(100 * (hi - lo) / hi) + "% below the highest";
  return w;
}

struct Grid {
  double label_w = 0, cell_w = 0, cell_h = 30, top = 26;
  int width = 0, height = 0;
};

Grid layout(const std::vector<std::string>& rows, const std::vector<std::string>& cols,
            double min_cell, std::size_t longest_cell) {
  Grid g;
  std::size_t longest = 4, longest_col = 3;
  for (const auto& r : rows) longest = std::max(longest, r.size());
  for (const auto& c : cols) longest_col = std::max(longest_col, c.size());
  g.label_w = std::min(static_cast<double>(longest) * 6.6 + 12, 220.0);
  const auto widest = static_cast<double>(std::max(longest_col, longest_cell));
  g.cell_w = std::max(min_cell, std::min(widest * 7.0 + 12, 160.0));
  g.width = static_cast<int>(g.label_w + g.cell_w * static_cast<double>(cols.size()) + 4);
  g.height = static_cast<int>(g.top + g.cell_h * static_cast<double>(rows.size()) + 4);
  return g;
}

void header(std::ostringstream& o, const std::string& title, const Grid& g,
            const std::vector<std::string>& rows, const std::vector<std::string>& cols) {
  o << "<svg class=\"chart heatmap\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << g.width
    << " " << g.height << "\" width=\"" << g.width << "\" height=\"" << g.height
    << "\" role=\"img\" aria-label=\"" << esc(title) << "\">";
  for (std::size_t c = 0; c < cols.size(); ++c) {
    o << "<text class=\"tick\" x=\"" << num(g.label_w + g.cell_w * (static_cast<double>(c) + 0.5))
      << "\" y=\"18\" text-anchor=\"middle\">" << esc(cols[c]) << "</text>";
  }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    o << "<text class=\"tick\" x=\"" << num(g.label_w - 6) << "\" y=\""
      << num(g.top + g.cell_h * (static_cast<double>(r) + 0.5) + 4) << "\" text-anchor=\"end\">"
      << esc(rows[r]) << "</text>";
  }
}

void cell(std::ostringstream& o, const Grid& g, std::size_t r, std::size_t c,
          const std::string& fill, bool dark_fill, const std::string& text,
          const std::string& tip) {
  const double x = g.label_w + g.cell_w * static_cast<double>(c);
  const double y = g.top + g.cell_h * static_cast<double>(r);
  o << "<g class=\"cell\"><title>" << esc(tip) << "</title><rect x=\"" << num(x + 1) << "\" y=\""
    << num(y + 1) << "\" width=\"" << num(g.cell_w - 2) << "\" height=\"" << num(g.cell_h - 2)
    << "\" fill=\"" << fill << "\"/><text class=\"cell-text" << (dark_fill ? " on-dark" : "")
    << "\" x=\"" << num(x + g.cell_w / 2) << "\" y=\"" << num(y + g.cell_h / 2 + 4)
    << "\" text-anchor=\"middle\">" << esc(text) << "</text></g>";
}

}  // namespace

std::string heatmap_codes(const std::string& title, const std::vector<std::string>& rows,
                          const std::vector<std::string>& cols,
                          const std::vector<std::vector<std::string>>& cells,
                          const std::vector<CodeLegend>& legend) {
  std::size_t longest_cell = 0;
  for (const auto& row : cells) {
    for (const auto& c : row) longest_cell = std::max(longest_cell, c.size());
  }
  const Grid g = layout(rows, cols, 48, longest_cell);
  std::ostringstream o;
  header(o, title, g, rows, cols);
  // "X" (a device against itself) is neutral; the other codes are ranked in legend order.
  std::vector<std::string> ranked_codes;
  for (const auto& l : legend) {
    if (l.code != "X") ranked_codes.push_back(l.code);
  }
  auto colour_of = [&](const std::string& code) -> std::pair<std::string, bool> {
    if (code == "X") return {"#6b6b6b", true};
    const bool nv_bond = code.size() > 2 && code.rfind("NV", 0) == 0 &&
                         std::isdigit(static_cast<unsigned char>(code[2]));
    auto it =
        std::find(ranked_codes.begin(), ranked_codes.end(), nv_bond ? std::string("NV#") : code);
    if (it == ranked_codes.end()) it = std::find(ranked_codes.begin(), ranked_codes.end(), code);
    if (it == ranked_codes.end()) return {"#d9d9d9", false};
    const double t = ranked_codes.size() > 1 ? static_cast<double>(it - ranked_codes.begin()) /
                                                   static_cast<double>(ranked_codes.size() - 1)
                                             : 0.0;
    const Rgb c = ranked(t);
    return {css(c), dark(c)};
  };
  for (std::size_t r = 0; r < rows.size() && r < cells.size(); ++r) {
    for (std::size_t c = 0; c < cols.size() && c < cells[r].size(); ++c) {
      const auto& code = cells[r][c];
      std::string meaning;
      for (const auto& l : legend) {
        if (l.code == code) meaning = l.meaning;
      }
      const auto [fill, on_dark] = colour_of(code);
      cell(
          o, g, r, c, fill, on_dark, code,
          rows[r] + " -> " + cols[c] + ": " + code + (meaning.empty() ? "" : " (" + meaning + ")"));
    }
  }
  o << "</svg><div class=\"legend\">";
  for (const auto& l : legend) {
    o << "<span><i class=\"sw\" style=\"background:" << colour_of(l.code).first << "\"></i><b>"
      << esc(l.code) << "</b> " << esc(l.meaning) << "</span>";
  }
  o << "</div>";
  return o.str();
}

std::string heatmap_values(const std::string& title, const std::vector<std::string>& rows,
                           const std::vector<std::string>& cols,
                           const std::vector<std::vector<std::optional<double>>>& cells,
                           const std::string& unit) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const auto& row : cells) {
    for (const auto& v : row) {
      if (!v || !std::isfinite(*v)) continue;
      lo = any ? std::min(lo, *v) : *v;
      hi = any ? std::max(hi, *v) : *v;
      any = true;
    }
  }
  // The scale runs from zero to the highest cell, as a bar starts at zero: a cell's colour is
  // its share of the highest, so 0.68 against 0.75 is two close shades, not the scale's two
  // ends (a min-to-max scale drew any spread, 10% or 10x, as the full range).
  const double top = std::max(hi, 0.0), bottom = std::min(lo, 0.0);
  const auto shade = [&](double v) { return sequential(top > bottom ? (v - bottom) / (top - bottom) : 0.0); };
  const Grid g = layout(rows, cols, 56, 6);
  std::ostringstream o;
  header(o, title, g, rows, cols);
  for (std::size_t r = 0; r < rows.size() && r < cells.size(); ++r) {
    for (std::size_t c = 0; c < cols.size() && c < cells[r].size(); ++c) {
      const auto& v = cells[r][c];
      const std::string where = rows[r] + " -> " + cols[c] + ": ";
      if (!v || !std::isfinite(*v)) {
        cell(o, g, r, c, "#f0f0f0", false, "-", where + "not measured");
        continue;
      }
      const Rgb col = shade(*v);
      const std::string text = format_three_digits(*v);
      cell(o, g, r, c, css(col), dark(col), text, where + text + " " + unit);
    }
  }
  o << "</svg><div class=\"legend\"><span>" << esc(any ? format_three_digits(bottom) : "-")
    << "</span><i class=\"ramp\" style=\"background:linear-gradient(90deg," << css(sequential(0)) << ","
    << css(sequential(1)) << ")\"></i><span>" << esc(any ? format_three_digits(top) : "-") << " " << esc(unit) << "</span>";
  if (any) o << "<span>" << esc(spread_words(lo, hi, unit)) << "</span>";
  o << "<span><i class=\"sw\" style=\"background:#f0f0f0\"></i>- not measured</span></div>";
  return o.str();
}

}  // namespace gdsb::report::svg
