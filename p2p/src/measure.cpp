#include "gdsb/pcie.hpp"
#include "gdsb/p2p/measure.hpp"

#include <algorithm>
#include <array>

#include "concurrent.hpp"

namespace gdsb::p2p {

namespace {

double to_gb_s(std::uint64_t bytes_per_sample, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes_per_sample) / seconds / 1e9 : 0.0;
}

NumMatrix empty_matrix(const CapabilityReport& caps, bool with_theory) {
  NumMatrix m;
  const std::size_t n = caps.gpus.size();
  for (const GpuInfo& g : caps.gpus) {
    m.rows.push_back(gpu_label(g.index));
    m.cols.push_back(gpu_label(g.index));
  }
  m.cells.assign(n, std::vector<std::optional<double>>(n));
  if (with_theory) {
    m.theoretical = m.cells;
    m.percent = m.cells;
  }
  return m;
}

std::optional<double> pair_theory(const CapabilityReport& caps, const PairCaps& p, bool direct) {
  const GpuInfo& a = caps.gpus[static_cast<std::size_t>(p.a)];
  const GpuInfo& b = caps.gpus[static_cast<std::size_t>(p.b)];
  if (direct && p.nvlinks && *p.nvlinks > 0 && a.cc_major) return nvlink_gb_s(*p.nvlinks, *a.cc_major);
  if (!a.pcie || !b.pcie) return std::nullopt;
  const auto pa = pcie_gb_s(*a.pcie);
  const auto pb = pcie_gb_s(*b.pcie);
  if (!pa || !pb) return std::nullopt;
  return std::min(*pa, *pb);
}

class Driver {
 public:
  Driver(CopyTimer& timer, const CapabilityReport& caps, const MeasureOptions& o,
         const std::function<void(const std::string&)>& progress)
      : timer_(timer), caps_(caps), o_(o), progress_(progress) {}

  HostSeries host(CopyKind kind, CopyEngine engine) {
    HostSeries s;
    if (stopped()) {
      s.waived = kInterruptedReason;
      return s;
    }
    for (const GpuInfo& g : caps_.gpus) {
      if (stopped()) {
        notes_.push_back(std::string(kind == CopyKind::HostToDevice ? "H2D" : "D2H") +
                         " from " + gpu_label(g.index) + " on: interrupted before it ran");
        break;
      }
      CopyCase c{kind, g.index, g.index, o_.bytes, o_.loops, true, engine};
      say(std::string(kind == CopyKind::HostToDevice ? "host -> " : "") + gpu_label(g.index) +
          (kind == CopyKind::DeviceToHost ? " -> host" : "") + (engine == CopyEngine::Sm ? " (SM)" : ""));
      HostFigure f;
      f.gpu = g.index;
      for (double sec : timer_.time_case(c, o_.warmups, o_.repetitions)) {
        f.samples_gb_s.push_back(to_gb_s(o_.bytes * static_cast<std::uint64_t>(o_.loops), sec));
      }
      f.gb_s = median(f.samples_gb_s);
      if (g.pcie) f.theoretical_gb_s = pcie_gb_s(*g.pcie);
      if (f.theoretical_gb_s) f.percent = 100.0 * f.gb_s / *f.theoretical_gb_s;
      if (engine == CopyEngine::CopyEngine) {
        std::vector<double> ref;
        // As many single copies as the measured case moves in all its samples: one
        // synchronous copy is short enough (~5 ms at 256 MiB) for scheduling noise to
        // move a median of only a few by several percent.
        const int plain_samples = std::max(1, o_.repetitions * o_.loops);
        for (double sec : timer_.time_plain_memcpy(kind, g.index, o_.bytes, plain_samples)) {
          ref.push_back(to_gb_s(o_.bytes, sec));
        }
        f.reference_gb_s = median(ref);
        if (*f.reference_gb_s > 0) f.reference_ratio = f.gb_s / *f.reference_gb_s;
      }
      s.items.push_back(std::move(f));
    }
    return s;
  }

  NumMatrix peer(CopyKind kind, bool peer_access, CopyEngine engine) {
    const bool latency = kind == CopyKind::PeerLatency;
    NumMatrix m = empty_matrix(caps_, !latency);
    if (caps_.gpus.size() < 2) {
      m.waived = "needs at least 2 GPUs";
      return m;
    }
    if (stopped()) {
      m.waived = kInterruptedReason;
      return m;
    }
    for (const PairCaps& p : caps_.pairs) {
      if (stopped()) {
        notes_.push_back(gpu_label(p.a) + " -> " + gpu_label(p.b) + " and later pairs (" +
                         (latency ? "latency" : "bandwidth") + "): interrupted before they ran");
        break;
      }
      const bool direct = p.cuda_access.value_or(false);
      const bool use_peer = peer_access && direct;
      if ((peer_access && !direct && !latency) || (engine == CopyEngine::Sm && !direct)) {
        notes_.push_back(gpu_label(p.a) + " -> " + gpu_label(p.b) +
                         ": no peer access, so no peer-enabled " +
                         (engine == CopyEngine::Sm ? "SM copy" : "figure") +
                         " (see the *_no_p2p matrices)");
        continue;
      }
      if (latency && !direct) {
        notes_.push_back(gpu_label(p.a) + " -> " + gpu_label(p.b) +
                         ": latency measured with peer access off (staged through the host)");
      }
      CopyCase c{kind, p.a, p.b, latency ? o_.latency_bytes : o_.bytes,
                 latency ? o_.latency_loops : o_.loops, use_peer, engine};
      say(gpu_label(p.a) + (kind == CopyKind::PeerBidir ? " <-> " : " -> ") + gpu_label(p.b) +
          (latency ? " latency" : "") + (use_peer ? "" : " (peer access off)") +
          (engine == CopyEngine::Sm ? " (SM)" : ""));
      std::vector<double> values;
      const std::uint64_t moved = c.bytes * static_cast<std::uint64_t>(c.loops) *
                                  (kind == CopyKind::PeerBidir ? 2u : 1u);
      for (double sec : timer_.time_case(c, o_.warmups, o_.repetitions)) {
        values.push_back(latency ? sec / c.loops * 1e6 : to_gb_s(moved, sec));
      }
      const auto a = static_cast<std::size_t>(p.a);
      const auto b = static_cast<std::size_t>(p.b);
      m.cells[a][b] = median(values);
      if (!latency) {
        auto t = pair_theory(caps_, p, use_peer);
        if (t && kind == CopyKind::PeerBidir) *t *= 2;
        m.theoretical[a][b] = t;
        if (t && *t > 0) m.percent[a][b] = 100.0 * *m.cells[a][b] / *t;
      }
    }
    return m;
  }

  std::vector<std::string> notes() const { return notes_; }
  bool stopped() const { return o_.stop != nullptr && o_.stop->load(); }

 private:
  void say(const std::string& line) {
    if (progress_) progress_(line);
  }

  CopyTimer& timer_;
  const CapabilityReport& caps_;
  const MeasureOptions& o_;
  const std::function<void(const std::string&)>& progress_;
  std::vector<std::string> notes_;
};

}  // namespace

std::optional<double> pcie_gb_s(const PcieLink& link) {
  // Usable GB/s per lane and direction after encoding: the one table (gdsb/pcie.hpp).
  const auto g = pcie_generation(link.gen);
  if (!g || link.width <= 0) return std::nullopt;
  return g->lane_gb_s * link.width;
}

std::optional<double> nvlink_gb_s(int links, int cc_major) {
  // GB/s per link and direction: NVLink1 (Pascal) 20, NVLink2-4 (Volta..Hopper) 25,
  // NVLink5 (Blackwell) 50.
  double per_link = 0;
  if (cc_major == 6) per_link = 20;
  else if (cc_major >= 7 && cc_major <= 9) per_link = 25;
  else if (cc_major == 10) per_link = 50;
  if (per_link == 0 || links <= 0) return std::nullopt;
  return per_link * links;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Measurements run_measurements(CopyTimer& timer, const CapabilityReport& caps,
                              const MeasureOptions& options,
                              const std::function<void(const std::string&)>& progress) {
  Measurements m;
  m.options = options;
  const Availability ok = timer.probe();
  const bool any_gpu = !caps.gpus.empty();
  const std::string why = !ok.ok ? ok.reason : "no GPU visible";
  if (!ok.ok || !any_gpu) {
    for (HostSeries* s : {&m.h2d, &m.d2h, &m.h2d_sm, &m.d2h_sm}) s->waived = why;
    for (ConcurrentSeries* s : {&m.h2d_concurrent, &m.d2h_concurrent}) s->waived = why;
    for (NumMatrix* x : {&m.d2d_uni, &m.d2d_bi, &m.d2d_uni_no_p2p, &m.d2d_bi_no_p2p,
                         &m.d2d_uni_sm, &m.latency_us}) {
      x->waived = why;
    }
    return m;
  }
  Driver d(timer, caps, options, progress);
  m.h2d = d.host(CopyKind::HostToDevice, CopyEngine::CopyEngine);
  m.d2h = d.host(CopyKind::DeviceToHost, CopyEngine::CopyEngine);
  if (!options.concurrent) {
    for (ConcurrentSeries* s : {&m.h2d_concurrent, &m.d2h_concurrent}) {
      s->waived = "not asked for (--concurrent)";
    }
  } else if (d.stopped()) {
    for (ConcurrentSeries* s : {&m.h2d_concurrent, &m.d2h_concurrent}) s->waived = kInterruptedReason;
  } else {
    if (progress) progress("host -> all GPUs at once, and per shared upstream");
    m.h2d_concurrent = measure_concurrent(timer, caps, options, CopyKind::HostToDevice, m.h2d);
    if (progress) progress("all GPUs -> host at once, and per shared upstream");
    m.d2h_concurrent = measure_concurrent(timer, caps, options, CopyKind::DeviceToHost, m.d2h);
  }
  // Peer access off first, so no earlier enable can leak into the staged figures.
  m.d2d_uni_no_p2p = d.peer(CopyKind::PeerUni, false, CopyEngine::CopyEngine);
  m.d2d_bi_no_p2p = d.peer(CopyKind::PeerBidir, false, CopyEngine::CopyEngine);
  m.d2d_uni = d.peer(CopyKind::PeerUni, true, CopyEngine::CopyEngine);
  m.d2d_bi = d.peer(CopyKind::PeerBidir, true, CopyEngine::CopyEngine);
  m.latency_us = d.peer(CopyKind::PeerLatency, true, CopyEngine::CopyEngine);
  if (options.sm_copy) {
    m.h2d_sm = d.host(CopyKind::HostToDevice, CopyEngine::Sm);
    m.d2h_sm = d.host(CopyKind::DeviceToHost, CopyEngine::Sm);
    m.d2d_uni_sm = d.peer(CopyKind::PeerUni, true, CopyEngine::Sm);
  } else {
    for (HostSeries* s : {&m.h2d_sm, &m.d2h_sm}) s->waived = "not asked for (--sm-copy)";
    m.d2d_uni_sm.waived = "not asked for (--sm-copy)";
  }
  m.notes = d.notes();
  m.interrupted = d.stopped();
  return m;
}

}  // namespace gdsb::p2p
