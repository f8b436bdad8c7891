// gdsb-doctor's hardware fault rules (issue 36: aer-path, gpu-throttle, gpu-memory) on the
// HGX H100 recording (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt, SOURCES.md there):
// the recording as it is gives none of their findings (a healthy node never gets one); the
// real sysfs AER file of tests/topo/fixtures/real/aer-sysfs (BadTLP 3, TOTAL_ERR_COR 3) placed
// on one hop of a GPU's storage path gives exactly one new finding, naming that hop.
#include <fstream>
#include <set>
#include <sstream>

#include "doctor_test_util.hpp"
#include "gdsb/topo/hw_faults.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"

namespace gdsb::doctor::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kTopo = GDSB_TOPO_REAL_FIXTURES;
const std::set<std::string> kFaultRules{"aer-path", "gpu-throttle", "gpu-memory"};

topo::Snapshot hgx() {
  topo::CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  return topo::collect_lspci_text(kTopo / "hgx-h100-lspci-vvv.txt", o);
}

topo::AerCounters real_correctable() {
  const fs::path file = kTopo / "aer-sysfs/pcicrawler-pr8-rootport/aer_dev_correctable";
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  topo::AerCounters c;
  topo::parse_aer_file(text.str(), topo::AerFile::Correctable, c, file.string());
  c.counters_known = true;
  return c;
}

// The first GPU (as the doctor orders them) and its first hop that is another device.
std::pair<GpuDiagnosis, Hop> gpu_and_hop(const Diagnosis& d) {
  for (const auto& g : d.gpus)
    for (const auto& h : g.hops)
      if (!h.measured && !h.device.empty() && h.device != g.bdf) return {g, h};
  ADD_FAILURE() << "no GPU with a device hop in the HGX recording";
  return {};
}

// Pointers into `after`: it must outlive them.
std::vector<const Finding*> new_findings(const Diagnosis& before, const Diagnosis& after) {
  std::multiset<std::string> old;
  for (const auto& f : before.findings) old.insert(f.rule + "|" + f.title);
  std::vector<const Finding*> out;
  for (const auto& f : after.findings)
    if (auto it = old.find(f.rule + "|" + f.title); it != old.end()) old.erase(it);
    else out.push_back(&f);
  return out;
}

TEST(DoctorHwFaults, TheHealthyHgxRecordingGetsNoFaultFinding) {
  const topo::Snapshot s = hgx();
  // The recording shows AER capabilities (lspci's status bits) but no sysfs counters.
  for (const auto& [bdf, c] : s.faults.aer) EXPECT_FALSE(c.counters_known) << bdf;
  Platform p = platform_from_snapshot(s, "hgx");
  for (const auto& figures : {Figures{}, figures_of({run(XferType::GpuDirect, 1.0)})}) {
    const Diagnosis d = diagnose(&p, figures);
    ASSERT_FALSE(d.gpus.empty());
    for (const auto& f : d.findings) EXPECT_FALSE(kFaultRules.contains(f.rule)) << f.rule << ": " << f.title;
  }
}

TEST(DoctorHwFaults, AerCountersOnOneHopAreExactlyOneFindingNamingIt) {
  Platform healthy = platform_from_snapshot(hgx(), "hgx");
  const Diagnosis before = diagnose(&healthy, Figures{});
  const auto [g, hop] = gpu_and_hop(before);
  topo::Snapshot s = hgx();
  s.faults.aer[hop.device] = real_correctable();
  Platform p = platform_from_snapshot(std::move(s), "hgx + aer");
  const Diagnosis after = diagnose(&p, Figures{});
  const auto added = new_findings(before, after);
  ASSERT_EQ(added.size(), 1u);
  const Finding& f = *added.front();
  EXPECT_EQ(f.rule, "aer-path");
  EXPECT_EQ(f.devices.front(), hop.device);
  EXPECT_TRUE(contains(f.title, hop.device)) << f.title;
  EXPECT_TRUE(contains(f.title, g.label)) << f.title;
  bool counted = false;
  for (const auto& e : f.evidence) counted = counted || contains(e, "BadTLP 3");
  EXPECT_TRUE(counted);
  EXPECT_TRUE(contains(f.fix, "reseat"));
  // The figure to expect once the hop is fixed: the GPU's ceiling from the path model.
  ASSERT_TRUE(g.ceiling_gb_s);
  EXPECT_EQ(f.expected_gb_s, g.ceiling_gb_s);
  // Nothing measured: the errors may or may not cost throughput.
  EXPECT_EQ(f.confidence, Confidence::Possible);
  EXPECT_EQ(f.impact_gb_s, 0);
}

TEST(DoctorHwFaults, ASlowMeasuredPathMakesTheAerHopLikelyWithItsImpact) {
  Platform healthy = platform_from_snapshot(hgx(), "hgx");
  const auto [g, hop] = gpu_and_hop(diagnose(&healthy, Figures{}));
  ASSERT_TRUE(g.ceiling_gb_s);
  RunResult r = run(XferType::GpuDirect, 0.5 * *g.ceiling_gb_s * 1e9 / 1073741824.0);
  r.path.gpu_pci_bus_id = g.bdf;
  topo::Snapshot s = hgx();
  s.faults.aer[hop.device] = real_correctable();
  Platform p = platform_from_snapshot(std::move(s), "hgx + aer");
  const Diagnosis d = diagnose(&p, figures_of({r}));
  const Finding* f = find_rule(d, "aer-path");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_NEAR(f->impact_gb_s, *g.ceiling_gb_s * 0.5, 0.05 * *g.ceiling_gb_s);
}

TEST(DoctorHwFaults, AerCountersOffEveryStoragePathAreLeftToHealth) {
  Platform healthy = platform_from_snapshot(hgx(), "hgx");
  const Diagnosis before = diagnose(&healthy, Figures{});
  std::set<std::string> on_paths;
  for (const auto& g : before.gpus) {
    on_paths.insert(g.bdf);
    for (const auto& h : g.hops) on_paths.insert(h.device);
  }
  topo::Snapshot s = hgx();
  std::string off;
  for (const auto& d : s.devices)
    if (!on_paths.contains(d.bdf)) off = d.bdf;
  ASSERT_FALSE(off.empty());
  s.faults.aer[off] = real_correctable();
  Platform p = platform_from_snapshot(std::move(s), "hgx + aer off path");
  EXPECT_TRUE(new_findings(before, diagnose(&p, Figures{})).empty());
}

TEST(DoctorHwFaults, ThermalSlowdownAndPendingRemapAreNamedByTheirTables) {
  Platform healthy = platform_from_snapshot(hgx(), "hgx");
  const Diagnosis before = diagnose(&healthy, Figures{});
  const auto [g, hop] = gpu_and_hop(before);
  topo::Snapshot s = hgx();
  topo::GpuErrorCounters e;
  e.clock_event_reasons = 0x1 | 0x40;  // idle (does not slow) and HwThermalSlowdown (NVML bits)
  e.remap_pending = true;
  e.remapped_rows_correctable = 1;
  s.faults.gpu_errors[g.bdf] = e;
  // Idle alone is no slowdown: another GPU with only that bit gets nothing.
  std::string other;
  for (const auto& x : before.gpus)
    if (x.bdf != g.bdf) other = x.bdf;
  ASSERT_FALSE(other.empty());
  topo::GpuErrorCounters idle;
  idle.clock_event_reasons = 0x1;
  idle.remap_pending = false;
  s.faults.gpu_errors[other] = idle;
  Platform p = platform_from_snapshot(std::move(s), "hgx + gpu errors");
  const Diagnosis after = diagnose(&p, Figures{});
  const auto added = new_findings(before, after);
  ASSERT_EQ(added.size(), 2u);
  std::set<std::string> rules;
  for (const Finding* f : added) {
    rules.insert(f->rule);
    EXPECT_EQ(f->devices.front(), g.bdf);
    EXPECT_EQ(f->expected_gb_s, g.ceiling_gb_s);
  }
  EXPECT_EQ(rules, (std::set<std::string>{"gpu-throttle", "gpu-memory"}));
  for (const Finding* f : added)
    if (f->rule == "gpu-throttle") {
      EXPECT_TRUE(contains(f->title, "HwThermalSlowdown")) << f->title;
      EXPECT_FALSE(contains(f->title, "GpuIdle")) << f->title;
      EXPECT_TRUE(contains(f->fix, "cooling"));
    } else {
      EXPECT_TRUE(contains(f->fix, "reset the GPU"));
    }
}

}  // namespace
}  // namespace gdsb::doctor::testing
