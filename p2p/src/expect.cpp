#include "gdsb/p2p/expect.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <utility>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb::p2p {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void bad(const std::string& expr, const std::string& why) {
  throw UsageError("--expect '" + expr + "': " + why +
                   " (forms: all-gpu-p2p, all-gpu-nvlink, all-nvme-p2pdma, min-h2d=50GB/s, "
                   "min-d2h=, min-d2d=, min-d2d-bi=, max-latency=5us, min-h2d-percent=80, ...)");
}

// A condition's value in its kind's scale: percent, us for a latency, GB/s for a rate. Rates
// are read by gdsb::parse_rate, the one reader of rates users type: the case of the b decides
// bytes or bits ("400Gb/s" is 50 GB/s), and "50gb/s", which could be either, is refused.
double quantity(const std::string& expr, const std::string& text, bool latency, bool percent) {
  double v = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr == begin) bad(expr, "'" + text + "' does not start with a number");
  if (v < 0) bad(expr, "the value must not be negative");
  const std::string unit(ptr, end);
  if (percent) {
    if (unit.empty() || unit == "%") return v;
    bad(expr, "a percentage takes no unit other than %");
  }
  if (latency) {
    const std::string u = lower(unit);
    if (u == "us") return v;
    if (u == "ns") return v / 1e3;
    if (u == "ms") return v * 1e3;
    bad(expr, unit.empty() ? "a latency needs a unit (us, ns or ms)" : "unit '" + unit + "' is not a time");
  }
  // parse_rate reads a bare number as bytes per second; here a forgotten unit is a mistake.
  if (unit.empty()) bad(expr, "a bandwidth needs a unit (GB/s, GiB/s, MB/s, or bits: Gb/s)");
  return parse_rate(text, "--expect '" + expr + "'") / 1e9;
}

std::string fmt(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s", v, unit);
  return buf;
}

ExpectationResult host_min(const Expectation& e, const HostSeries& s, bool percent) {
  if (s.waived) return {e.expr, false, "not measured: " + *s.waived};
  if (s.items.empty()) return {e.expr, false, "no GPU measured"};
  for (const HostFigure& f : s.items) {
    if (percent && !f.percent) return {e.expr, false, gpu_label(f.gpu) + ": no theoretical figure"};
    const double v = percent ? *f.percent : f.gb_s;
    if (v < e.value) {
      return {e.expr, false, gpu_label(f.gpu) + " measured " + fmt(v, percent ? "%" : "GB/s")};
    }
  }
  return {e.expr, true, "all " + std::to_string(s.items.size()) + " GPUs meet it"};
}

ExpectationResult matrix_check(const Expectation& e, const NumMatrix& m, bool percent, bool max) {
  if (m.waived) return {e.expr, false, "not measured: " + *m.waived};
  const NumCells& cells = percent ? m.percent : m.cells;
  int checked = 0;
  for (std::size_t a = 0; a < m.rows.size(); ++a) {
    for (std::size_t b = 0; b < m.cols.size(); ++b) {
      if (a == b) continue;
      const auto& v = cells[a][b];
      const std::string pair = m.rows[a] + " -> " + m.cols[b];
      if (!v) return {e.expr, false, pair + ": no figure (no peer access or no theoretical)"};
      ++checked;
      if (max ? *v > e.value : *v < e.value) {
        return {e.expr, false, pair + " measured " + fmt(*v, max ? "us" : percent ? "%" : "GB/s")};
      }
    }
  }
  return {e.expr, true, "all " + std::to_string(checked) + " pairs meet it"};
}

}  // namespace

bool Expectation::needs_measurement() const {
  return kind != ExpectKind::AllGpuP2p && kind != ExpectKind::AllGpuNvlink &&
         kind != ExpectKind::AllNvmeP2pdma;
}

Expectation parse_expectation(const std::string& expr) {
  const std::string e = lower(expr);
  Expectation x;
  x.expr = expr;
  if (e == "all-gpu-p2p") { x.kind = ExpectKind::AllGpuP2p; return x; }
  if (e == "all-gpu-nvlink") { x.kind = ExpectKind::AllGpuNvlink; return x; }
  if (e == "all-nvme-p2pdma") { x.kind = ExpectKind::AllNvmeP2pdma; return x; }
  const auto eq = e.find('=');
  if (eq == std::string::npos) bad(expr, "unknown condition");
  const std::string key = e.substr(0, eq);
  const std::string value = expr.substr(eq + 1);
  static const std::pair<const char*, ExpectKind> kKeys[] = {
      {"min-h2d", ExpectKind::MinH2d},
      {"min-d2h", ExpectKind::MinD2h},
      {"min-d2d", ExpectKind::MinD2d},
      {"min-d2d-bi", ExpectKind::MinD2dBi},
      {"max-latency", ExpectKind::MaxLatency},
      {"min-h2d-percent", ExpectKind::MinH2dPercent},
      {"min-d2h-percent", ExpectKind::MinD2hPercent},
      {"min-d2d-percent", ExpectKind::MinD2dPercent},
      {"min-d2d-bi-percent", ExpectKind::MinD2dBiPercent}};
  for (const auto& [name, kind] : kKeys) {
    if (key != name) continue;
    x.kind = kind;
    const bool percent = key.ends_with("-percent");
    x.value = quantity(expr, value, kind == ExpectKind::MaxLatency, percent);
    return x;
  }
  bad(expr, "unknown condition '" + key + "'");
}

ExpectationResult evaluate(const Expectation& e, const CapabilityReport& caps,
                           const Measurements* m) {
  const std::size_t n = caps.gpus.size();
  switch (e.kind) {
    case ExpectKind::AllGpuP2p:
    case ExpectKind::AllGpuNvlink: {
      if (n == 0) return {e.expr, false, "no GPU visible"};
      if (n == 1) return {e.expr, true, "1 GPU: no pairs to check"};
      for (const PairCaps& p : caps.pairs) {
        const std::string pair = gpu_label(p.a) + " -> " + gpu_label(p.b);
        if (e.kind == ExpectKind::AllGpuP2p && !p.direct.value_or(false)) {
          return {e.expr, false, pair + ": " + p.verdict};
        }
        if (e.kind == ExpectKind::AllGpuNvlink && !(p.nvlinks && *p.nvlinks > 0)) {
          return {e.expr, false, pair + ": " + (p.nvlinks ? "no NVLink (" + p.topology + ")"
                                                          : std::string("NVLink unknown (NVML waived)"))};
        }
      }
      return {e.expr, true, "all " + std::to_string(caps.pairs.size()) + " pairs"};
    }
    case ExpectKind::AllNvmeP2pdma: {
      int count = 0;
      for (const PciePair& p : caps.peers) {
        if (p.role != PeerRole::Nvme) continue;
        ++count;
        if (p.p2pdma == MapType::NotSupported) {
          return {e.expr, false, p.gpu + " x " + p.peer + ": NOT_SUPPORTED (" + p.label + ")"};
        }
      }
      if (count == 0) return {e.expr, false, "no GPU x NVMe pair known (PCIe topology: " + caps.pcie_source + ")"};
      return {e.expr, true, "all " + std::to_string(count) + " GPU x NVMe pairs"};
    }
    default: break;
  }
  if (m == nullptr) return {e.expr, false, "needs --measure"};
  switch (e.kind) {
    case ExpectKind::MinH2d: return host_min(e, m->h2d, false);
    case ExpectKind::MinD2h: return host_min(e, m->d2h, false);
    case ExpectKind::MinH2dPercent: return host_min(e, m->h2d, true);
    case ExpectKind::MinD2hPercent: return host_min(e, m->d2h, true);
    case ExpectKind::MinD2d: return matrix_check(e, m->d2d_uni, false, false);
    case ExpectKind::MinD2dBi: return matrix_check(e, m->d2d_bi, false, false);
    case ExpectKind::MinD2dPercent: return matrix_check(e, m->d2d_uni, true, false);
    case ExpectKind::MinD2dBiPercent: return matrix_check(e, m->d2d_bi, true, false);
    case ExpectKind::MaxLatency: return matrix_check(e, m->latency_us, false, true);
    default: break;
  }
  return {e.expr, false, "unhandled condition"};
}

}  // namespace gdsb::p2p
