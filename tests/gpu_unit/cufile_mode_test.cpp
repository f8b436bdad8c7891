// Which mode a cuFile run took (issue 43): nvidia-fs, P2PDMA or compat, from cuFile's own
// properties (cuFileDriverGetProperties, read by CufileDriver from the fake cuFile) and
// nvidia-fs, never from cufile.json's use_pci_p2pdma alone.
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

#include "cufile_fixture.hpp"
#include "gdsb/gpu/path_evidence.hpp"

namespace gdsb::gpu {
namespace {

using testing::CufileFixture;
using testing::FakeCufileOptions;
using testing::OpenFiles;

const std::string kFixtures = GDSB_GPU_FIXTURES;
// cufile.json of the H200 machines as installed (GDS 1.15, use_pci_p2pdma false).
const std::string kH200CufileJson = kFixtures + "/../../topo/fixtures/real/h200-vm-p2pdma/cufile.json";

// One -x 0 read of 256 KiB through the fake cuFile; the path report of the run.
PathReport read_run(CufileFixture& fx) {
  OpenFiles files({fx.dir.file("data")}, 256 << 10, false, true);
  Workload w;
  w.xfer = XferType::GpuDirect;
  w.io_size = 64 << 10;
  w.odirect = false;
  auto run = make_gpu_direct_path(fx.deps)->start(w, files.set());
  {
    auto worker = run->make_worker(0);
    testing::drive(*worker, IoDir::Read, 256 << 10, 64 << 10, true);
  }
  return run->finish();
}

FakeCufileOptions status_flags(unsigned flags) {
  FakeCufileOptions o;
  o.dstatusflags = flags;
  return o;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  return all;
}

TEST(CufileMode, NvmeP2pStatusBitWithoutNvidiaFsIsP2pdma) {
  // GDS 1.15 (the H200 machines' cufile.h): CU_FILE_NVME_P2P_SUPPORTED = 11 in dstatusflags,
  // alone, as a public gdscheck -p of 1.15 with P2PDMA on shows it ("NVMe P2PDMA :
  // Supported", "NVMe : Unsupported").
  CufileFixture fx(status_flags(1U << 11));
  const PathReport r = read_run(fx);
  EXPECT_EQ(r.path_used, "gds-p2pdma");
  EXPECT_EQ(r.decided_by,
            "cuFileDriverGetProperties: nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED set, nvidia-fs not loaded");
  EXPECT_TRUE(r.warnings.empty()) << joined(r.warnings);
  EXPECT_NE(joined(r.evidence).find("nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED on"), std::string::npos)
      << joined(r.evidence);
}

TEST(CufileMode, P2pFeatureFlagOfNewerCufileIsP2pdma) {
  // The current API reference: CU_FILE_P2P_SUPPORTED = 4 in fflags, bit 11 deprecated.
  FakeCufileOptions o;
  o.extra_fflags = 1U << 4;
  CufileFixture fx(o);
  const PathReport r = read_run(fx);
  EXPECT_EQ(r.path_used, "gds-p2pdma");
  EXPECT_NE(r.decided_by.find("fflags CU_FILE_P2P_SUPPORTED set"), std::string::npos) << r.decided_by;
}

TEST(CufileMode, NoP2pdmaPropertyAndNoNvidiaFsIsCompat) {
  CufileFixture fx(status_flags(0));
  const PathReport r = read_run(fx);
  EXPECT_EQ(r.path_used, "compat");
  EXPECT_EQ(r.decided_by,
            "the nvidia-fs module is not loaded and cuFileDriverGetProperties sets neither "
            "fflags CU_FILE_P2P_SUPPORTED nor nvfs.dstatusflags CU_FILE_NVME_P2P_SUPPORTED");
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].find(r.decided_by), std::string::npos) << r.warnings[0];
}

TEST(CufileMode, UsePciP2pdmaInCufileJsonWithoutTheBitIsCompat) {
  // The H200 machines' cufile.json with the one key turned on: it asks for P2PDMA, but
  // cuFile's properties do not report it, so the run is compat (the old rule, key plus
  // no nvidia-fs, said gds-p2pdma whenever the properties were not read).
  std::ifstream in(kH200CufileJson);
  ASSERT_TRUE(in) << kH200CufileJson;
  std::stringstream text;
  text << in.rdbuf();
  std::string json = text.str();
  const std::string off = "\"use_pci_p2pdma\": false";
  ASSERT_NE(json.find(off), std::string::npos);
  json.replace(json.find(off), off.size(), "\"use_pci_p2pdma\": true");
  CufileFixture fx;
  const std::string path = fx.dir.file("cufile.json");
  std::ofstream(path) << json;
  ::setenv("CUFILE_ENV_PATH_JSON", path.c_str(), 1);
  const PathReport r = read_run(fx);
  ::unsetenv("CUFILE_ENV_PATH_JSON");
  EXPECT_EQ(r.path_used, "compat");
  EXPECT_NE(r.decided_by.find("(use_pci_p2pdma is true in " + path + ")"), std::string::npos) << r.decided_by;
  EXPECT_NE(joined(r.evidence).find("use_pci_p2pdma=true"), std::string::npos) << joined(r.evidence);

  PathFacts unread;  // the same facts, cuFileDriverGetProperties not answered
  unread.config = read_cufile_config(path);
  unread.handles_registered = true;
  unread.reads = 4;
  const PathReport u = decide_path(unread);
  EXPECT_EQ(u.path_used, "compat");
  EXPECT_NE(u.decided_by.find("cuFileDriverGetProperties did not answer"), std::string::npos) << u.decided_by;
}

TEST(CufileMode, NvidiaFsInUseIsNvidiaFsWhateverTheP2pdmaBit) {
  // nvidia-fs counters moving by 64 reads (fixtures nvfs-before/after, its stats format);
  // cuFile reports P2PDMA too, but the data went through nvidia-fs.
  PathFacts f;
  f.config = read_cufile_config(kFixtures + "/cufile.json");
  f.before = read_nvfs(kFixtures + "/nvfs-before");
  f.after = read_nvfs(kFixtures + "/nvfs-after");
  f.props.known = true;
  f.props.nvme_p2p_supported = true;
  f.handles_registered = true;
  f.reads = 64;
  const PathReport r = decide_path(f);
  EXPECT_EQ(r.path_used, "gds-nvfs");
  EXPECT_EQ(r.decided_by, "nvidia-fs counters moved during the run (reads +64, writes +0)");
}

}  // namespace
}  // namespace gdsb::gpu
