// Tidy left-to-right tree layout: each leaf gets its own row, a parent sits midway between
// its first and last child, depth gives the column. Enough for PCIe trees (a few dozen
// devices, depth <= 6) and easy to read on paper.
#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

#include "svg.hpp"

namespace gdsb::report::svg {
namespace {

constexpr double kBoxW = 210, kBoxH = 50, kColW = 236, kRowH = 60, kPad = 8;

std::string clip(const std::string& s, std::size_t n) {
  if (s.size() <= n) return s;
  std::size_t cut = n - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return s.substr(0, cut) + "…";
}

}  // namespace

std::string tree(const std::string& title, const std::vector<TreeNode>& nodes) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].id, i);
  std::vector<std::vector<std::size_t>> children(nodes.size());
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto it = index.find(nodes[i].parent);
    if (nodes[i].parent.empty() || it == index.end() || it->second == i) {
      roots.push_back(i);
    } else {
      children[it->second].push_back(i);
    }
  }
  std::vector<double> x(nodes.size(), 0), y(nodes.size(), 0);
  std::vector<bool> placed(nodes.size(), false);
  double next_row = 0;
  int max_depth = 0;
  // Returns the node's y. Guards against parent cycles in a malformed document.
  std::function<double(std::size_t, int)> place = [&](std::size_t n, int depth) -> double {
    placed[n] = true;
    max_depth = std::max(max_depth, depth);
    x[n] = kPad + depth * kColW;
    std::vector<double> ys;
    for (const auto c : children[n]) {
      if (!placed[c]) ys.push_back(place(c, depth + 1));
    }
    if (ys.empty()) {
      y[n] = kPad + next_row * kRowH;
      next_row += 1;
    } else {
      y[n] = (ys.front() + ys.back()) / 2;
    }
    return y[n];
  };
  for (const auto r : roots) place(r, 0);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!placed[i]) place(i, 0);  // cycle members: draw them as roots
  }
  const int width = static_cast<int>(kPad * 2 + max_depth * kColW + kBoxW);
  const int height = static_cast<int>(kPad * 2 + std::max(next_row, 1.0) * kRowH - (kRowH - kBoxH));
  std::ostringstream o;
  o << "<svg class=\"chart tree\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << width
    << " " << height << "\" width=\"" << width << "\" height=\"" << height
    << "\" role=\"img\" aria-label=\"" << esc(title) << "\">";
  for (std::size_t p = 0; p < nodes.size(); ++p) {
    for (const auto c : children[p]) {
      const double x0 = x[p] + kBoxW, y0 = y[p] + kBoxH / 2, x1 = x[c], y1 = y[c] + kBoxH / 2;
      const double xm = (x0 + x1) / 2;
      o << "<path class=\"edge\" d=\"M" << num(x0) << " " << num(y0) << " H" << num(xm) << " V"
        << num(y1) << " H" << num(x1) << "\"/>";
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    o << "<g class=\"node r-" << esc(n.role) << (n.problem.empty() ? "" : " p-" + esc(n.problem))
      << "\" id=\"node-" << esc(n.id) << "\"><title>" << esc(n.tooltip)
      << "</title><rect rx=\"5\" x=\"" << num(x[i]) << "\" y=\"" << num(y[i]) << "\" width=\""
      << num(kBoxW) << "\" height=\"" << num(kBoxH) << "\"/>";
    o << "<text class=\"nl\" x=\"" << num(x[i] + 7) << "\" y=\"" << num(y[i] + 15) << "\">"
      << esc(clip(n.title, 29)) << "</text>";
    o << "<text" << (n.line2_warn ? " class=\"deg\"" : "") << " x=\"" << num(x[i] + 7) << "\" y=\""
      << num(y[i] + 30) << "\">" << esc(clip(n.line2, 32)) << "</text>";
    if (!n.flag.empty()) {
      o << "<text class=\"flag\" x=\"" << num(x[i] + 7) << "\" y=\"" << num(y[i] + 44) << "\">"
        << esc(clip(n.flag, 32)) << "</text>";
    }
    o << "</g>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace gdsb::report::svg
