#include <algorithm>

#include "gdsb/p2p/report.hpp"
#include "gdsb/units.hpp"

namespace gdsb::p2p {

namespace {

std::string link_text(const std::optional<PcieLink>& l) {
  return l ? "Gen" + std::to_string(l->gen) + " x" + std::to_string(l->width) : "?";
}

// Prints a table: first column left-aligned, the rest right-aligned, widths from content.
void table(std::ostream& out, const std::vector<std::string>& header,
           const std::vector<std::vector<std::string>>& rows, bool text_last = false) {
  std::vector<std::size_t> w(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  auto line = [&](const std::vector<std::string>& r) {
    out << "  ";
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) {
      const std::string pad(w[i] - r[i].size(), ' ');
      const bool left = i == 0 || (text_last && i + 1 == r.size());
      if (left && i + 1 == r.size()) {
        out << r[i];
      } else {
        out << (left ? r[i] + pad : pad + r[i]) << (i + 1 < r.size() ? "  " : "");
      }
    }
    out << '\n';
  };
  line(header);
  for (const auto& r : rows) line(r);
}

void string_matrix(std::ostream& out, const std::string& title, const Matrix& m) {
  out << '\n' << title << '\n';
  std::vector<std::string> header{""};
  header.insert(header.end(), m.cols.begin(), m.cols.end());
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    std::vector<std::string> row{m.rows[r]};
    row.insert(row.end(), m.cells[r].begin(), m.cells[r].end());
    rows.push_back(std::move(row));
  }
  table(out, header, rows);
  out << "  Legend:";
  for (const auto& [code, meaning] : m.legend) out << ' ' << code << " = " << meaning << ';';
  out << '\n';
}

void num_matrix(std::ostream& out, const std::string& title, const NumMatrix& m, int decimals) {
  out << '\n' << title << '\n';
  if (m.waived) {
    out << "  WAIVED: " << *m.waived << '\n';
    return;
  }
  std::vector<std::string> header{""};
  header.insert(header.end(), m.cols.begin(), m.cols.end());
  std::vector<std::vector<std::string>> rows;
  for (std::size_t r = 0; r < m.rows.size(); ++r) {
    std::vector<std::string> row{m.rows[r]};
    for (std::size_t c = 0; c < m.cols.size(); ++c) {
      const auto& v = m.cells[r][c];
      std::string cell = r == c ? "X" : v ? format_fixed(*v, decimals) : "-";
      if (v && !m.percent.empty() && m.percent[r][c]) cell += " (" + format_fixed(*m.percent[r][c], 0) + "%)";
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  table(out, header, rows);
}

void host_series(std::ostream& out, const std::string& title, const HostSeries& s) {
  out << '\n' << title << '\n';
  if (s.waived) {
    out << "  WAIVED: " << *s.waived << '\n';
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const HostFigure& f : s.items) {
    rows.push_back({gpu_label(f.gpu), format_fixed(f.gb_s, 2),
                    f.theoretical_gb_s ? format_fixed(*f.theoretical_gb_s, 1) : "-",
                    f.percent ? format_fixed(*f.percent, 0) + "%" : "-",
                    f.reference_gb_s ? format_fixed(*f.reference_gb_s, 2) : "-",
                    f.reference_ratio ? format_fixed(*f.reference_ratio, 3) : "-"});
  }
  table(out, {"", "GB/s", "link GB/s", "of link", "plain cudaMemcpy", "ratio"}, rows);
}

std::string gpu_list(const std::vector<int>& gpus, const char* sep) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "" : sep) + gpu_label(g);
  return out;
}

void concurrent_series(std::ostream& out, const std::string& title, const ConcurrentSeries& s) {
  out << '\n' << title << '\n';
  if (s.waived) {
    out << "  WAIVED: " << *s.waived << '\n';
    return;
  }
  for (const ConcurrentGroup& g : s.groups) {
    out << "  " << gpu_list(g.gpus, "+") << " together: " << format_fixed(g.gb_s, 2) << " GB/s (";
    for (std::size_t i = 0; i < g.gpus.size() && i < g.per_gpu_gb_s.size(); ++i) {
      out << (i ? ", " : "") << gpu_label(g.gpus[i]) << ' ' << format_fixed(g.per_gpu_gb_s[i], 2);
    }
    out << ')';
    if (g.ratio) {
      out << " = " << format_fixed(*g.ratio, 2) << " x the sum of their single figures ("
          << format_fixed(*g.single_sum_gb_s, 2) << ')';
    }
    out << "; " << g.shared << '\n';
  }
  out << "  " << s.grouping << '\n';
}

void measurements(std::ostream& out, const Measurements& m) {
  const MeasureOptions& o = m.options;
  if (m.h2d.waived && m.d2d_uni.waived && *m.h2d.waived == *m.d2d_uni.waived) {
    out << "\nMeasurements\n  WAIVED: " << *m.h2d.waived << '\n';
    return;
  }
  out << "\nMeasurements: " << o.bytes << " bytes x " << o.loops << " copies per sample, "
      << o.warmups << " warm-up, median of " << o.repetitions
      << " samples (CUDA events); GB/s = 1e9 bytes/s\n";
  host_series(out, "Host -> device, pinned, copy engine", m.h2d);
  host_series(out, "Device -> host, pinned, copy engine", m.d2h);
  if (o.concurrent) {
    concurrent_series(out, "Host -> GPUs at once, pinned, copy engine (aggregate over the common interval)",
                      m.h2d_concurrent);
    concurrent_series(out, "GPUs -> host at once, pinned, copy engine (aggregate over the common interval)",
                      m.d2h_concurrent);
  }
  num_matrix(out, "Device -> device, unidirectional, peer access on (GB/s, % of link)", m.d2d_uni, 1);
  num_matrix(out, "Device <-> device, bidirectional, peer access on (GB/s, % of link)", m.d2d_bi, 1);
  num_matrix(out, "Device -> device, unidirectional, peer access off: staged (GB/s)", m.d2d_uni_no_p2p, 1);
  num_matrix(out, "Device <-> device, bidirectional, peer access off: staged (GB/s)", m.d2d_bi_no_p2p, 1);
  num_matrix(out, "Peer latency, " + std::to_string(o.latency_bytes) + "-byte copies, median (us)",
             m.latency_us, 2);
  if (o.sm_copy) {
    host_series(out, "Host -> device, SM copy kernel", m.h2d_sm);
    host_series(out, "Device -> host, SM copy kernel", m.d2h_sm);
    num_matrix(out, "Device -> device, SM copy kernel (GB/s, % of link)", m.d2d_uni_sm, 1);
  }
  for (const auto& n : m.notes) out << "  note: " << n << '\n';
}

}  // namespace

void write_text(std::ostream& out, const P2PDocument& doc) {
  const CapabilityReport& caps = doc.caps;
  out << "gdsb-p2p on " << doc.context.host << " (" << doc.context.started_at << ")\n";
  out << "\nGPUs\n";
  if (caps.gpus.empty())
    out << "  none visible" << (caps.applicability.empty() ? "" : ": " + caps.applicability) << '\n';
  std::vector<std::vector<std::string>> gpu_rows;
  for (const GpuInfo& g : caps.gpus) {
    gpu_rows.push_back({gpu_label(g.index), g.bdf, g.name,
                        "PCIe " + link_text(g.pcie) + " (now " + link_text(g.pcie_cur) + ")",
                        g.nvlinks ? "NVLink " + std::to_string(*g.nvlinks) : "NVLink ?",
                        g.numa_node ? "NUMA " + std::to_string(*g.numa_node) : "NUMA ?"});
  }
  if (!gpu_rows.empty()) table(out, {"", "bdf", "name", "link (max)", "links", "node"}, gpu_rows);
  if (caps.gpu_source.rfind("recorded", 0) == 0) out << "  (as " << caps.gpu_source << ")\n";
  if (!caps.nvswitches.empty()) {
    out << "\nNVSwitches: " << caps.nvswitches.size() << '\n';
    for (const std::string& sw : caps.nvswitches) out << "  NVSwitch " << sw << '\n';
  }

  static const std::pair<const char*, const char*> kTitles[] = {
      {"topology", "Topology (as nvidia-smi topo -m)"},
      {"pcie_topology", "GPU x GPU: PCIe path (from the PCIe tree)"},
      {"cuda_access", "CUDA peer access (cudaDeviceCanAccessPeer)"},
      {"cuda_perf_rank", "CUDA P2P performance rank"},
      {"cuda_atomics", "CUDA P2P native atomics"},
      {"cuda_array_access", "CUDA P2P CUDA-array access"},
      {"nvml_read", "NVML P2P read (nvidia-smi topo -p2p r)"},
      {"nvml_write", "NVML P2P write (nvidia-smi topo -p2p w)"},
      {"nvml_nvlink", "NVML P2P NVLink (nvidia-smi topo -p2p n)"},
      {"nvml_atomics", "NVML P2P atomics (nvidia-smi topo -p2p a)"},
      {"nvml_pci", "NVML P2P PCI (nvidia-smi topo -p2p p)"},
      {"p2pdma", "GPU x NVMe/NIC: kernel P2PDMA map type"},
      {"peer_topology", "GPU x NVMe/NIC: PCIe path"}};
  for (const auto& [name, title] : kTitles) {
    if (const Matrix* m = caps.matrix(name)) string_matrix(out, title, *m);
  }

  if (!caps.pairs.empty()) {
    out << "\nGPU pairs\n";
    std::vector<std::vector<std::string>> rows;
    for (const PairCaps& p : caps.pairs) {
      if (p.a > p.b) continue;  // the verdict is symmetric in practice; print each pair once
      rows.push_back({gpu_label(p.a) + " - " + gpu_label(p.b), p.verdict});
    }
    table(out, {"pair", "verdict"}, rows, true);
  }
  if (!caps.peers.empty()) {
    out << "\nGPU x NVMe/NIC pairs (PCIe topology: " << caps.pcie_source << ")\n";
    std::vector<std::vector<std::string>> rows;
    for (const PciePair& p : caps.peers) {
      rows.push_back({p.gpu, p.peer + (p.peer_name.empty() ? "" : " " + p.peer_name),
                      std::string(peer_role_name(p.role)), p.label,
                      std::string(map_type_name(p.p2pdma)), std::to_string(p.distance),
                      gds_direct_verdict(p)});
    }
    table(out, {"gpu", "peer", "role", "path", "p2pdma", "dist", "verdict"}, rows, true);
  }
  if (doc.measurements) measurements(out, *doc.measurements);
  if (!caps.waived.empty()) {
    out << "\nWaived\n";
    for (const Waiver& w : caps.waived) out << "  " << w.what << ": " << w.reason << '\n';
  }
  if (!doc.expectations.empty()) {
    out << "\nExpectations\n";
    for (const auto& e : doc.expectations) {
      out << "  " << (e.ok ? "PASS " : "FAIL ") << e.expr << ": " << e.detail << '\n';
    }
  }
}

}  // namespace gdsb::p2p
