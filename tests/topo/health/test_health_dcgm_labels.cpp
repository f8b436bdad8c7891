// The health metrics carry dcgm-exporter's labels for a GPU, so a dashboard joins the two
// exporters' series (issue 42, item 6): `gpu` (NVML's index) and `UUID` where the facts hold
// them, beside `pci_bus_id` and `Hostname`. Expected values read off each input:
//  - tests/topo/fixtures/real/dgx2-hwloc.xml: hwloc's NVML backend names each GPU's OS device
//    nvml<N> (N: NVML's index) and records NVIDIAUUID; PCIDev 0000:34:00.0 holds nvml0 with
//    GPU-d3977428-7a30-086b-2e20-5c1eeed647c6, 0000:36:00.0 nvml1 with
//    GPU-5bfda7ef-6aec-a775-5ae1-a1c3dcaef094 (its lines 57-74).
//  - the stand-in NVML (tests/p2p/fake_nvml): index 0 at 0000:00:06.0, 1 at 0000:00:07.0;
//    GPU 0 answers the UUID the 1 x H200 recorded at that address
//    (/proc/driver/nvidia/gpus/0000:00:06.0/information, 2026-11-29), GPU 1 none.
//  - the HGX lspci text and the 4 x H100 snapshot of 2026-11-27 (saved before snapshots held
//    NVML's index and UUID): neither label, never a made-up one.
#include "topo_cli_util.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kReal = GDSB_TOPO_REAL_FIXTURES;

std::string sample_line(const std::string& text, const std::string& start) {
  const auto at = text.find("\n" + start);
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(HealthDcgmLabels, AnHwlocRecordingWithNvmlDevicesGivesEachGpuItsIndexAndUuid) {
  fixture::TempDir dir;
  ScopedEnv node("NODE_NAME", "dgx2-07");
  const std::string xml = (kReal / "dgx2-hwloc.xml").string(), good = (dir.path() / "good.json").string();
  ASSERT_EQ(cli({"--hwloc-xml", xml, "--save-fingerprint", good}).rc, 0);
  const fs::path prom = dir.path() / "gdsb.prom";
  CliRun r = cli({"--hwloc-xml", xml, "--health", "--expect", good, "--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const std::string gpu0 =
      R"(gdsb_health_device_present{bdf="0000:34:00.0",gpu="0",UUID="GPU-d3977428-7a30-086b-2e20-5c1eeed647c6",)"
      R"(pci_bus_id="00000000:34:00.0",Hostname="dgx2-07",kind="gpu"} 1)";
  const std::string gpu1 =
      R"(gdsb_health_device_present{bdf="0000:36:00.0",gpu="1",UUID="GPU-5bfda7ef-6aec-a775-5ae1-a1c3dcaef094",)"
      R"(pci_bus_id="00000000:36:00.0",Hostname="dgx2-07",kind="gpu"} 1)";
  std::string text = read_all(prom);
  EXPECT_EQ(sample_line(text, R"(gdsb_health_device_present{bdf="0000:34:00.0")"), gpu0) << text;
  EXPECT_EQ(sample_line(text, R"(gdsb_health_device_present{bdf="0000:36:00.0")"), gpu1) << text;
  // Saved in a snapshot and replayed: the same labels (snapshot.json's gpu_facts keep them).
  const fs::path snap = dir.path() / "snap";
  ASSERT_EQ(cli({"--hwloc-xml", xml, "--save-snapshot", snap.string(), "-q"}).rc, 0);
  r = cli({"--from-snapshot", snap.string(), "--health", "--expect", good, "--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  text = read_all(prom);
  EXPECT_EQ(sample_line(text, R"(gdsb_health_device_present{bdf="0000:34:00.0")"), gpu0) << text;
  EXPECT_EQ(sample_line(text, R"(gdsb_health_device_present{bdf="0000:36:00.0")"), gpu1) << text;
}

TEST(HealthDcgmLabels, LiveNvmlGivesTheIndexAndTheUuidItAnswers) {
  fixture::TempDir dir;
  ScopedEnv node("NODE_NAME", "h200-01");
  ScopedEnv uuids("GDSB_FAKE_NVML_UUIDS", "GPU-3e09735f-3ae0-a103-7d7f-6ea8f6241eee");
  const std::string good = (dir.path() / "good.json").string();
  ASSERT_EQ(cli({"--save-fingerprint", good, "--nvml-lib", GDSB_FAKE_NVML, "--no-hwloc"}).rc, 0);
  const fs::path prom = dir.path() / "gdsb.prom";
  const CliRun r = cli({"--health", "--expect", good, "--nvml-lib", GDSB_FAKE_NVML, "--no-hwloc", "--openmetrics",
                        prom.string()});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  const std::string text = read_all(prom);
  EXPECT_EQ(sample_line(text, R"(gdsb_health_gpu_remap_failed{bdf="0000:00:06.0")"),
            R"(gdsb_health_gpu_remap_failed{bdf="0000:00:06.0",gpu="0",UUID="GPU-3e09735f-3ae0-a103-7d7f-6ea8f6241eee",)"
            R"(pci_bus_id="00000000:00:06.0",Hostname="h200-01"} 0)")
      << text;
  // NVML answered no UUID for GPU 1: its index, no UUID label.
  EXPECT_EQ(sample_line(text, R"(gdsb_health_gpu_remap_failed{bdf="0000:00:07.0")"),
            R"(gdsb_health_gpu_remap_failed{bdf="0000:00:07.0",gpu="1",pci_bus_id="00000000:00:07.0",)"
            R"(Hostname="h200-01"} 0)")
      << text;
}

TEST(HealthDcgmLabels, InputsWithoutNvmlGiveNeitherLabel) {
  fixture::TempDir dir;
  ScopedEnv node("NODE_NAME", "gpu-node-07");
  const std::string hgx = (kReal / "hgx-h100-lspci-vvv.txt").string(), good = (dir.path() / "good.json").string();
  ASSERT_EQ(cli({"--lspci-text", hgx, "--save-fingerprint", good}).rc, 0);
  const fs::path prom = dir.path() / "gdsb.prom";
  CliRun r = cli({"--lspci-text", hgx, "--health", "--expect", good, "--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  std::string text = read_all(prom);
  EXPECT_EQ(sample_line(text, R"(gdsb_health_device_present{bdf="0000:cb:00.0")"),
            R"(gdsb_health_device_present{bdf="0000:cb:00.0",pci_bus_id="00000000:CB:00.0",Hostname="gpu-node-07",)"
            R"(kind="gpu"} 1)");
  EXPECT_EQ(text.find("gpu=\""), std::string::npos);
  EXPECT_EQ(text.find("UUID=\""), std::string::npos);
  // A snapshot saved before snapshots held them: its NVLink counters without them.
  const fs::path vm = kReal / "h100x4-vm";
  r = cli({"--from-snapshot", (vm / "snapshot.json").string(), "--health", "--expect", (vm / "known-good.json").string(),
           "--openmetrics", prom.string()});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  text = read_all(prom);
  EXPECT_NE(sample_line(text, R"(gdsb_health_nvlink_errors{bdf="0000:00:06.0",pci_bus_id="00000000:00:06.0",)"), "")
      << text;
  EXPECT_EQ(text.find("gpu=\""), std::string::npos);
  EXPECT_EQ(text.find("UUID=\""), std::string::npos);
}

}  // namespace
}  // namespace gdsb::topo::testing
