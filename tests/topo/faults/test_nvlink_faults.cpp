// NVLink and recovery-action findings (issue 36) on a recording of a healthy 4 x H100 (NV18,
// driver 580.159.04, 2026-11-27, fixtures/real/h100x4-vm: the known-good file saved by
// `gdsb-topo --save-fingerprint`, then the snapshot 40 s later, after 30 s idle and gdsb-p2p's
// NVLink load). Read by hand from the two files: replay, recovery and flit CRC are 0 on all
// 72 links in both; data CRC rose on every link, 1,041 in all, 74 at most on one link (1.85 a
// second); `nvidia-smi nvlink -e` showed no error on any link and `nvidia-smi -q` "GPU
// Recovery Action: None" on every GPU (docs/PERFORMANCE.md). Invariants on that recording:
// one link's counters moved changes exactly one finding.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/fingerprint_file.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kDir = fs::path(GDSB_TOPO_REAL_FIXTURES) / "h100x4-vm";

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

struct Recording {
  Snapshot now = snapshot_from_json(load(kDir / "snapshot.json"), "h100x4-vm snapshot");
  FaultBaseline base = fault_baseline_from_document(load(kDir / "known-good.json"));
};

NvLinkErrorCounters& link_of(Snapshot& s, const std::string& gpu, int link) {
  for (auto& l : s.faults.gpu_errors.at(gpu).nvlinks)
    if (l.link == link) return l;
  throw std::runtime_error("no link");
}

TEST(NvLinkFaults, TheHealthyFourGpuRecordingHasNoFinding) {
  Recording r;
  ASSERT_EQ(r.now.faults.gpu_errors.size(), 4u);
  ASSERT_EQ(r.base.boot_id, r.now.faults.boot_id);
  ASSERT_EQ(*r.now.faults.collected_unix_s - *r.base.taken_unix_s, 40);
  uint64_t crc_rise = 0;
  for (const auto& [bdf, g] : r.now.faults.gpu_errors) {
    ASSERT_EQ(g.nvlinks.size(), 18u) << bdf;
    EXPECT_EQ(g.recovery_action, std::optional<int>(0)) << bdf;  // nvidia-smi -q: None
    for (const auto& l : g.nvlinks) {
      const auto& then = r.base.nvlinks.at(bdf).at(static_cast<size_t>(l.link));
      ASSERT_EQ(then.link, l.link);
      crc_rise += *l.crc_data - *then.crc_data;
    }
  }
  EXPECT_EQ(crc_rise, 1041u);  // the counters did move: the verdict is not vacuous
  EXPECT_TRUE(judge_faults(r.now, r.base).empty());
  EXPECT_TRUE(judge_faults(r.now, {}).empty());  // since boot (120 s) alone: 108 a link at most
}

TEST(NvLinkFaults, OneRetrainedLinkIsOneWarning) {
  Recording r;
  auto& l = link_of(r.now, "0000:00:08.0", 5);
  *l.recovery += 1;
  const auto f = judge_faults(r.now, r.base);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FaultKind::NvLinkErrors);
  EXPECT_EQ(f[0].severity, FaultSeverity::Warning);
  EXPECT_EQ(f[0].words,
            "GPU 0000:00:08.0 NVLink 5 retrained 1 time since the known-good file: check the NVLink (nvidia-smi "
            "nvlink -e); service the board if it goes on");
  *l.replay += 3;
  EXPECT_NE(judge_faults(r.now, r.base).at(0).words.find("retrained 1 time and replayed 3 packets"), std::string::npos);
  // The same counts in another boot: when they happened is unknown, so they are not judged.
  r.base.boot_id = "another-boot";
  EXPECT_TRUE(judge_faults(r.now, r.base).empty());
}

TEST(NvLinkFaults, CrcErrorsCountFromOneHundredASecondOnOneLink) {
  Recording r;
  auto& l = link_of(r.now, "0000:00:06.0", 11);
  const uint64_t then = *r.base.nvlinks.at("0000:00:06.0").at(11).crc_data;
  *l.crc_data = then + 3999;  // 99.98 a second over the 40 s window: below
  EXPECT_TRUE(judge_faults(r.now, r.base).empty());
  *l.crc_data = then + 4000;  // 100 a second
  const auto f = judge_faults(r.now, r.base);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FaultKind::NvLinkCrcRate);
  EXPECT_EQ(f[0].count, 4000u);
  EXPECT_EQ(f[0].words,
            "GPU 0000:00:06.0 NVLink 11 4000 CRC errors since the known-good file (100/s, past 100/s): check the "
            "NVLink (nvidia-smi nvlink -e); service the board if it goes on");
  // A flit CRC counts with the data CRC.
  *l.crc_data = then + 2000;
  *l.crc_flit = 2000;
  EXPECT_EQ(judge_faults(r.now, r.base).size(), 1u);
}

TEST(NvLinkFaults, ARecoveryActionDrains) {
  Recording r;
  r.now.faults.gpu_errors.at("0000:00:07.0").recovery_action = 1;
  const auto f = judge_faults(r.now, r.base);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FaultKind::GpuRecoveryAction);
  EXPECT_EQ(f[0].severity, FaultSeverity::Critical);
  EXPECT_EQ(f[0].words, "GPU 0000:00:07.0 recovery action 1 (the driver's, NVML): drain, reset the GPU");
  r.now.faults.gpu_errors.at("0000:00:07.0").recovery_action = 9;  // a number past the table
  EXPECT_EQ(judge_faults(r.now, r.base).at(0).action, "contact support");
}

}  // namespace
}  // namespace gdsb::topo::testing
