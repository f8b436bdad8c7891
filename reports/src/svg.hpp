// Drawing primitives for the HTML reports: a few chart kinds written as inline SVG, with
// colours from CSS classes (.s0 ... .s7, .bad, .warn) so print and screen styles apply.
// Every text argument is plain text; these functions escape it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gdsb::report::svg {

struct Point {
  double x = 0;
  double y = 0;
};

struct Series {
  std::string name;
  std::vector<Point> points;
  int color = 0;  // palette index
  bool markers = false;
  bool dashed = false;  // a reference line (e.g. linear scaling) drawn dashed in its colour
};

struct Tick {
  double value = 0;
  std::string label;
};

struct Axis {
  std::string label;
  bool log = false;
  std::vector<Tick> ticks;   // empty: chosen automatically
  bool include_zero = true;  // linear axes start at 0 unless told otherwise
};

inline Axis axis(std::string label, bool log = false) {
  Axis a;
  a.label = std::move(label);
  a.log = log;
  return a;
}

// A vertical line at x across the plot (a change point), its label written at the top and
// its note as the tooltip.
struct XMark {
  double x = 0;
  std::string label;  // short: "run 57"
  std::string note;   // the whole sentence
};

struct ChartSpec {
  std::string title;  // accessible name and caption
  Axis x;
  Axis y;
  int width = 640;
  int height = 280;
  std::vector<XMark> x_marks{};  // line_chart only
};

std::string line_chart(const ChartSpec& spec, const std::vector<Series>& series);

struct Bucket {
  double lower = 0;
  double upper = 0;
  double count = 0;
};
std::string histogram(const ChartSpec& spec, const std::vector<Bucket>& buckets);

// Horizontal bars, one per row, segments stacked left to right; `mark` draws a reference
// tick (e.g. a theoretical maximum); `flagged` colours the label red.
struct Bar {
  std::string label;
  std::vector<double> segments;
  std::optional<double> mark;
  bool flagged = false;
  std::string note;  // printed after the bar
};
std::string bar_chart(const ChartSpec& spec, const std::vector<std::string>& segment_names,
                      const std::vector<Bar>& bars, const std::string& mark_name = "");

// Heat maps: a grid with row and column labels.
struct CodeLegend {
  std::string code;
  std::string meaning;
};
// Cells hold codes (PIX, NV4, OK, ...); colour by code rank in `legend` order (best first).
std::string heatmap_codes(const std::string& title, const std::vector<std::string>& rows,
                          const std::vector<std::string>& cols,
                          const std::vector<std::vector<std::string>>& cells,
                          const std::vector<CodeLegend>& legend);
// Cells hold numbers (nullopt = not measured); a sequential scale from zero to the highest
// cell (a cell's shade is its share of the highest), the legend states the cells' spread.
std::string heatmap_values(const std::string& title, const std::vector<std::string>& rows,
                           const std::vector<std::string>& cols,
                           const std::vector<std::vector<std::optional<double>>>& cells,
                           const std::string& unit);

// Shared helpers.
std::string esc(const std::string& text);
std::string num(double v);  // SVG coordinate
std::vector<Tick> nice_ticks(double lo, double hi, int target);
std::vector<Tick> log_ticks(double lo, double hi);
std::string swatch_legend(const std::vector<std::string>& names, int first_color);

}  // namespace gdsb::report::svg

namespace gdsb::report::svg {

// A PCIe tree drawn left to right: roots on the left, endpoints on the right.
struct TreeNode {
  std::string id;      // BDF
  std::string parent;  // "" for a root
  std::string role;    // CSS class suffix: gpu, nvme, nic, switch_upstream, ...
  std::string title;   // first line, bold
  std::string line2;   // e.g. BDF and link
  bool line2_warn = false;
  std::string flag;     // problem summary, drawn in red ("" = none)
  std::string problem;  // "fail", "warn" or ""
  std::string tooltip;
};
std::string tree(const std::string& title, const std::vector<TreeNode>& nodes);

}  // namespace gdsb::report::svg
