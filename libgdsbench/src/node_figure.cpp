#include "gdsb/node_figure.hpp"

#include <algorithm>

namespace gdsb {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

NodeFigure node_figure(std::span<const RunResult> runs) {
  NodeFigure f;
  double t0 = 0, end = 0, sum = 0;
  for (const RunResult& r : runs) {
    if (r.status != RunStatus::Ok) {
      f.missing.push_back({r.workload.gpu, r.reason.empty() ? std::string(run_status_name(r.status)) : r.reason});
      continue;
    }
    const Measurement& m = r.result;
    GpuFigure g;
    g.gpu = r.workload.gpu;
    g.pci_bus_id = r.path.gpu_pci_bus_id;
    g.bytes = m.bytes;
    g.seconds = m.seconds;
    g.gb_s = m.seconds > 0 ? static_cast<double>(m.bytes) / m.seconds / 1e9 : 0.0;
    g.path_used = r.path.path_used;
    f.per_gpu.push_back(g);
    t0 = f.per_gpu.size() == 1 ? m.t0_unix_s : std::min(t0, m.t0_unix_s);
    end = std::max(end, m.end_unix_s);
    f.bytes += m.bytes;
    sum += g.gb_s;
  }
  std::stable_sort(f.per_gpu.begin(), f.per_gpu.end(),
                   [](const GpuFigure& a, const GpuFigure& b) { return a.gpu < b.gpu; });
  if (f.per_gpu.empty()) return f;
  f.window_s = end - t0;
  f.gb_s = end > t0 ? static_cast<double>(f.bytes) / (end - t0) / 1e9 : 0.0;
  f.sum_gb_s = sum;
  if (f.per_gpu.size() < 2) return f;
  for (std::size_t i = 0; i < f.per_gpu.size(); ++i) {
    std::vector<double> others;
    for (std::size_t j = 0; j < f.per_gpu.size(); ++j)
      if (j != i) others.push_back(f.per_gpu[j].gb_s);
    const double m = median(others);
    if (m > 0 && f.per_gpu[i].gb_s < kOddShare * m)
      f.odd.push_back({f.per_gpu[i].gpu, f.per_gpu[i].gb_s, m, f.per_gpu[i].gb_s / m});
  }
  return f;
}

}  // namespace gdsb
