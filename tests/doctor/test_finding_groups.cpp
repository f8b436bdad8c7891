// One cause on several GPUs is one finding (issue 43, STYLE 18): on the 4 x H200 VM the doctor
// listed "cuFile in compat mode, as expected: the storage is virtual" once per GPU, same
// evidence, same fix. Here on the fake GPU service's eight addresses in a VM, on the HGX H100
// recording, and on one GPU, where nothing changes.
#include <sstream>

#include "doctor_test_util.hpp"
#include "gdsb/doctor/render.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::doctor::testing {
namespace {

std::vector<const Finding*> of_rule(const Diagnosis& d, const std::string& rule) {
  std::vector<const Finding*> out;
  for (const auto& f : d.findings)
    if (f.rule == rule) out.push_back(&f);
  return out;
}

constexpr const char* kVirtualDisks =
    "0000:00:10.0 vda (virtio-blk disk (1af4:1042)), 0000:00:11.0 vdb (virtio-blk disk (1af4:1042))";

// Each of the VM's GPUs read through cuFile's compat path at once: GPU0-3 at 1.0 GB/s, GPU4-7
// at 1.2 GB/s; storage alone 1.1 GB/s.
Diagnosis compat_on_vm(int gpus) {
  Platform p = platform_of(vm_with_gpus(gpus));
  std::vector<RunResult> runs{run(XferType::CpuOnly, gib(1.1), "posix", 2)};
  for (int i = 0; i < gpus; ++i) {
    RunResult x0 = run(XferType::GpuDirect, gib(i < 4 ? 1.0 : 1.2), "compat", 2);
    x0.workload.gpu = i;
    x0.path.gpu_pci_bus_id = bdf(i);
    runs.push_back(x0);
  }
  Figures f = figures_of(runs);
  return diagnose(&p, f);
}

TEST(DoctorFindingGroups, CompatOnEightGpusOfAVmIsOneFinding) {
  const Diagnosis d = compat_on_vm(8);
  const std::string t = text_of(d);
  const auto compat = of_rule(d, "compat-mode");
  ASSERT_EQ(compat.size(), 1U) << t;
  const Finding& f = *compat.front();
  EXPECT_EQ(f.title, std::string("cuFile in compat mode, as expected: the storage is virtual (") +
                         kVirtualDisks + ")");
  ASSERT_EQ(f.per_gpu.size(), 8U);
  for (std::size_t i = 0; i < 8; ++i) {
    const std::string label = "GPU" + std::to_string(i);
    EXPECT_EQ(f.per_gpu[i].label, label);
    EXPECT_EQ(f.per_gpu[i].devices, std::vector<std::string>{label + " " + bdf(static_cast<int>(i))});
  }
  EXPECT_EQ(f.devices.size(), 8U);
  // Each GPU's figure in the evidence, GPUs of one figure together; storage alone once.
  EXPECT_EQ(f.evidence, (std::vector<std::string>{
                            "cuFile -x 0 (compat), 2 threads x 1M: 1.0-1.2 GB/s (GPU0-3 1.0; GPU4-7 1.2) "
                            "(path_used compat: POSIX I/O through cuFile's bounce buffers)",
                            "storage alone CPUONLY -x 1 (posix), 2 threads x 1M: 1.1 GB/s"}));
  EXPECT_EQ(f.expected, "~1.1 GB/s, the ceiling set by storage alone 1.1 GB/s measured");
  EXPECT_EQ(count(t, "cuFile in compat mode"), 1U) << t;
  EXPECT_NE(t.find("     devices: GPU0 0000:00:00.0, GPU1 0000:00:01.0, GPU2 0000:00:02.0, GPU3 0000:00:03.0, "
                   "GPU4 0000:00:04.0, GPU5 0000:00:05.0, GPU6 0000:00:06.0, GPU7 0000:00:07.0\n"),
            std::string::npos)
      << t;
  // The JSON keeps devices and adds per_gpu; the HTML, its view, says the finding once.
  const auto j = to_json(d, Figures{}, DocumentMeta{});
  ASSERT_EQ(j.at("findings").size(), d.findings.size());
  for (const auto& x : j.at("findings")) {
    if (x.at("rule").get<std::string>() != "compat-mode") continue;
    EXPECT_EQ(x.at("devices").size(), 8U);
    ASSERT_EQ(x.at("per_gpu").size(), 8U);
    EXPECT_EQ(x.at("per_gpu")[7].at("gpu").get<std::string>(), "GPU7");
  }
  const std::string html = report::render_html(j);
  const auto at = html.find("<section id=\"findings\">");
  ASSERT_NE(at, std::string::npos);
  const std::string findings = html.substr(at, html.find("</section>", at) - at);
  EXPECT_EQ(count(findings, "cuFile in compat mode"), 1U) << findings;
  EXPECT_NE(findings.find("GPU0 0000:00:00.0, GPU1 0000:00:01.0"), std::string::npos) << findings;
}

TEST(DoctorFindingGroups, OneGpuReadsAsBefore) {
  const Diagnosis d = compat_on_vm(1);
  const auto compat = of_rule(d, "compat-mode");
  ASSERT_EQ(compat.size(), 1U);
  EXPECT_TRUE(compat.front()->per_gpu.empty());
  EXPECT_EQ(compat.front()->devices, std::vector<std::string>{"GPU0 0000:00:00.0"});
  EXPECT_EQ(compat.front()->evidence.front(),
            "cuFile -x 0 (compat), 2 threads x 1M: 1.0 GB/s (path_used compat: POSIX I/O through cuFile's "
            "bounce buffers)");
  EXPECT_NE(text_of(d).find("     devices: GPU0 0000:00:00.0\n"), std::string::npos);
}

// The HGX H100 recording (tests/topo/fixtures/real/hgx-h100-lspci-vvv.txt), read by hand: each
// GPU has one NVMe of its own below its switch, a Gen4 x4 drive link (7.9 GB/s). Every GPU read
// through compat mode because nvidia-fs is not loaded, GPU6 at half the others' figure: one
// cause, one finding, GPU6's figure apart, each GPU's drive among its devices.
TEST(DoctorFindingGroups, HgxRecordingNvidiaFsMissingOnEveryGpuIsOneFinding) {
  const auto& kHgx = kHgxGpuAndDrive;
  Platform p = hgx_platform();
  std::vector<RunResult> runs;
  for (int i = 0; i < 8; ++i) {
    RunResult r = cufile_run(gib(i == 6 ? 1.0 : 2.0), no_nvfs_facts());
    r.workload.gpu = i;
    r.path.gpu_pci_bus_id = kHgx[i][0];
    runs.push_back(r);
  }
  Figures f = figures_of(runs);
  const Diagnosis d = diagnose(&p, f);
  const std::string t = text_of(d);
  const auto compat = of_rule(d, "compat-mode");
  ASSERT_EQ(compat.size(), 1U) << t;
  const Finding& c = *compat.front();
  EXPECT_EQ(c.title, "cuFile in compat mode: nvidia-fs is not loaded");
  EXPECT_EQ(c.confidence, Confidence::Certain);
  ASSERT_EQ(c.per_gpu.size(), 8U) << t;
  ASSERT_FALSE(c.evidence.empty());
  EXPECT_EQ(c.evidence.front(),
            "cuFile -x 0 (compat), 4 threads x 1M: 1.0-2.0 GB/s (GPU0-5, GPU7 2.0; GPU6 1.0) (path_used compat: "
            "POSIX I/O through cuFile's bounce buffers)");
  // Each GPU's own drive: named on its devices, not listed where one drive is meant.
  EXPECT_EQ(c.expected, "~7.9 GB/s, the ceiling set by 1 nearest NVMe (PIX): drive link each GPU's own (nvme) Gen4 x4");
  for (std::size_t i = 0; i < 8; ++i)
    EXPECT_EQ(c.per_gpu[i].devices,
              (std::vector<std::string>{"GPU" + std::to_string(i) + " " + kHgx[i][0], kHgx[i][1]}));
  // Ranked by what the cause costs the GPU it costs most: GPU6, 7.9 - 1.0 GB/s.
  EXPECT_NEAR(c.impact_gb_s, 7.88 - 1.0, 0.05);
  EXPECT_EQ(count(t, "nvidia-fs is not loaded"), 2U) << t;  // the finding and the verdict
  EXPECT_NE(t.find("Verdict: 1 certain or likely cause(s)"), std::string::npos) << t;
}

}  // namespace
}  // namespace gdsb::doctor::testing
