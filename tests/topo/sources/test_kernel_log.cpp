// The kernel log reader and the AER readers on real recordings (fixtures/real/kernel-logs,
// fixtures/real/aer-sysfs, the HGX lspci -vvv; SOURCES.md there). Expected values were read
// off the recordings' lines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"
#include "gdsb/error.hpp"
#include "gdsb/topo/kernel_log.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kLogs = fs::path(GDSB_TOPO_REAL_FIXTURES) / "kernel-logs";

KernelLog read(const std::string& name) { return read_kernel_log_file(kLogs / name); }

TEST(KernelLogReal, GpudXid119FiveTimesIsOneEventWithItsCount) {
  const KernelLog log = read("gpud-xid119-dmesg-T.log");
  EXPECT_EQ(log.format, "dmesg -T");
  ASSERT_EQ(log.xids.size(), 1u);
  const XidEvent& e = log.xids[0];
  EXPECT_EQ(e.bdf, "0000:9b:00.0");
  EXPECT_EQ(e.code, 119);
  EXPECT_EQ(e.count, 5u);
  EXPECT_EQ(e.first.wall, "2025-02-23 16:24:18");
  EXPECT_EQ(e.last.wall, "2025-02-23 16:30:13");
  EXPECT_EQ(e.process, "gpud");  // the last record's name=
  EXPECT_EQ(log.lines, 43u);
  EXPECT_EQ(log.unparsed, 0u);
}

TEST(KernelLogReal, GpudPr46Xid13AndXid109OnOneGpu) {
  const KernelLog log = read("gpud-pr46-xid13-xid109-dmesg-T.log");
  ASSERT_EQ(log.xids.size(), 2u);
  EXPECT_EQ(log.xids[0].code, 13);
  EXPECT_EQ(log.xids[0].count, 3u);
  EXPECT_EQ(log.xids[0].process, "<unknown>");
  EXPECT_EQ(log.xids[1].code, 109);
  EXPECT_EQ(log.xids[1].bdf, "0000:cb:00.0");
  EXPECT_EQ(log.xids[1].last.wall, "2024-08-30 11:43:14");
  EXPECT_EQ(log.xids[1].process, "pt_main_thread");
}

TEST(KernelLogReal, PlainDmesgUptimes) {
  const KernelLog log = read("vllm5901-xid13-dmesg.log");
  EXPECT_EQ(log.format, "dmesg");
  ASSERT_EQ(log.xids.size(), 1u);
  EXPECT_EQ(log.xids[0].bdf, "0000:43:00.0");
  EXPECT_EQ(log.xids[0].count, 6u);
  ASSERT_TRUE(log.xids[0].first.uptime_s);
  EXPECT_NEAR(*log.xids[0].first.uptime_s, 93297.027938, 1e-6);
  EXPECT_NEAR(*log.xids[0].last.uptime_s, 93297.043905, 1e-6);
  const KernelLog bus = read("pastebin-jJdbRLSr-xid79-dmesg.log");
  ASSERT_EQ(bus.xids.size(), 1u);
  EXPECT_EQ(bus.xids[0].code, 79);
  EXPECT_EQ(bus.xids[0].bdf, "0000:03:00.0");
  EXPECT_NEAR(*bus.xids[0].last.uptime_s, 5107.644336, 1e-6);
}

TEST(KernelLogReal, JournalctlWithoutHostAndSyslogWithUptime) {
  const KernelLog j = read("ogkm1151-xid79-journalctl.log");
  EXPECT_EQ(j.format, "journalctl");
  EXPECT_EQ(j.nvrm_lines, 3u);
  ASSERT_EQ(j.xids.size(), 1u);
  EXPECT_EQ(j.xids[0].code, 79);
  EXPECT_EQ(j.xids[0].bdf, "0000:2b:00.0");
  EXPECT_EQ(j.xids[0].last.wall, "May 18 19:02:39");
  // An old driver's record without "PCI:", inside a syslog line that also carries the uptime.
  const KernelLog old = read("pastebin-xJaypMZt-old-xid-syslog.log");
  ASSERT_EQ(old.xids.size(), 1u);
  EXPECT_EQ(old.xids[0].code, 3);
  EXPECT_EQ(old.xids[0].bdf, "0000:01:00.0");
  EXPECT_EQ(old.xids[0].last.wall, "Jan 18 11:38:05");
  EXPECT_NEAR(*old.xids[0].last.uptime_s, 269.517039, 1e-6);
  // "Unused" for Ampere and newer in NVIDIA's catalog: named as such, never drained.
  ASSERT_NE(find_xid(3), nullptr);
  EXPECT_TRUE(find_xid(3)->unused);
  EXPECT_FALSE(find_xid(3)->drains);
}

// One node's log across a reboot, in each format that shows boots (SOURCES.md, issue 42): the
// Xid 79 of the first boot (10:43:35, 240314.5 s after it) is history, the second boot has none.
TEST(KernelLogBoots, EachFormatSplitsTheLogAtTheReboot) {
  for (const char* name : {"reboot-xid79-kern.log", "reboot-xid79-journalctl.log",
                           "reboot-xid79-journalctl-monotonic.log", "reboot-xid79-journalctl-export.log"}) {
    SCOPED_TRACE(name);
    const KernelLog log = read(name);
    EXPECT_EQ(log.boots, 2u);
    EXPECT_TRUE(log.xids.empty());
    ASSERT_EQ(log.earlier_xids.size(), 1u);
    EXPECT_EQ(log.earlier_xids[0].bdf, "0000:cb:00.0");
    EXPECT_EQ(log.earlier_xids[0].code, 79);
    EXPECT_EQ(log.earlier_xids[0].count, 1u);
  }
  // The boot each names: journalctl's marker, export's _BOOT_ID; kern.log its first line's clock.
  EXPECT_EQ(read("reboot-xid79-journalctl.log").boot_id, "5f2c1e7a3b8c4d6e9f0a1b2c3d4e5f60");
  const KernelLog exp = read("reboot-xid79-journalctl-export.log");
  EXPECT_EQ(exp.format, "journalctl export");
  EXPECT_EQ(exp.boot_id, "5f2c1e7a3b8c4d6e9f0a1b2c3d4e5f60");
  EXPECT_EQ(exp.earlier_xids[0].last.wall, "2024-12-02 10:43:35");
  EXPECT_NEAR(*exp.earlier_xids[0].last.uptime_s, 240314.528861, 1e-6);
  EXPECT_EQ(read("reboot-xid79-kern.log").boot_start, "Dec 2 11:02:17");
  // A log that starts with the kernel's first line is one boot, not two.
  const KernelLog one = read("xid48-kern.log");
  EXPECT_EQ(one.boots, 1u);
  ASSERT_EQ(one.xids.size(), 1u);
  EXPECT_EQ(one.xids[0].code, 48);
  EXPECT_EQ(one.boot_start, "Nov 29 15:58:20");
}

// A log still being written ends without a newline: its last line is read when it parses.
TEST(KernelLogBoots, ALastLineWithoutNewlineIsReadWhenItParses) {
  KernelLogReader r("--kernel-log now.log");
  r.feed("[ 5107.644336] NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus.\n"
         "[ 5107.7] NVRM: Xid (PCI:0000:03:00): 13, pid='<unknown>'");
  const KernelLog log = r.finish();
  ASSERT_EQ(log.xids.size(), 2u);
  EXPECT_EQ(log.xids[1].code, 13);
  EXPECT_EQ(log.lines, 2u);
  // Cut inside the prefix, the address, or right after the code (its digits may be cut: "1" of "13").
  for (const char* cut : {"[ 5107.644336] NVRM: Xid (PCI:0000:0", "[ 5107.64", "[ 5107.7] NVRM: Xid (PCI:0000:03:00): 1"}) {
    KernelLogReader c("--kernel-log cut.log");
    c.feed(std::string("[ 1.0] usb 1-1: new device\n") + cut);
    EXPECT_THROW(c.finish(), RuntimeError) << cut;
  }
}

TEST(KernelLogReal, Xid154CarriesItsRecoveryAction) {
  const KernelLog log = read("ogkm1200-xid154-pasted.log");
  EXPECT_EQ(log.nvrm_lines, 4u);
  ASSERT_EQ(log.xids.size(), 1u);
  EXPECT_EQ(log.xids[0].code, 154);
  ASSERT_TRUE(log.xids[0].recovery_action);
  EXPECT_EQ(*log.xids[0].recovery_action, 1);  // "to 0x1 (GPU Reset Required)"
}

TEST(KernelLogReal, Xid45OnFourGpusIsFourEvents) {
  const KernelLog log = read("ogkm1150-xid45-kernel.log");
  ASSERT_EQ(log.xids.size(), 4u);
  std::map<std::string, uint64_t> counts;
  for (const auto& e : log.xids) counts[e.bdf] = e.count;
  EXPECT_EQ(counts["0000:dc:00.0"], 2u);
  EXPECT_EQ(counts["0000:ed:00.0"], 2u);
  EXPECT_EQ(counts["0000:ba:00.0"], 2u);
  EXPECT_EQ(counts["0000:97:00.0"], 1u);
  EXPECT_EQ(log.xids[0].process, "python3");
}

TEST(KernelLogReal, AerLinesWithoutNvrmGiveNoEvent) {
  const KernelLog log = read("dasharo815-aer-no-nvrm-dmesg-T.log");
  EXPECT_EQ(log.lines, 9u);
  EXPECT_EQ(log.nvrm_lines, 0u);
  EXPECT_TRUE(log.xids.empty());
}

TEST(AerReal, PcicrawlerRootPortCounters) {
  const auto a = read_aer_dir(fs::path(GDSB_TOPO_REAL_FIXTURES) / "aer-sysfs/pcicrawler-pr8-rootport");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->counters_known);
  EXPECT_EQ(a->correctable.at("BadTLP"), 3u);
  EXPECT_EQ(a->correctable.at("RxErr"), 0u);
  EXPECT_EQ(a->correctable.size(), 8u);  // every kind the kernel names, TOTAL_ERR_COR apart
  EXPECT_EQ(a->total_correctable, 3u);
  EXPECT_FALSE(a->total_fatal);          // the recording has no aer_dev_fatal
  for (const auto& [kind, n] : a->correctable) EXPECT_NE(find_aer_kind(AerClass::Correctable, kind), nullptr) << kind;
}

// The HGX recording's AER status registers, read off its lines: the GPU at 19:00.0 shows
// CESta RxErr+ BadTLP+ Timeout+; six switch ports (4a, 5b, 99, b9, c9, d9 :00.0) UESta UnsupReq+.
TEST(AerReal, HgxLspciStatusBits) {
  const Snapshot s = collect_lspci_text(fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt");
  const AerCounters& gpu = s.faults.aer.at("0000:19:00.0");
  EXPECT_TRUE(gpu.status_known);
  EXPECT_FALSE(gpu.counters_known);
  EXPECT_EQ(gpu.status_correctable, (std::vector<std::string>{"RxErr", "BadTLP", "Timeout"}));
  EXPECT_TRUE(gpu.status_uncorrectable.empty());
  int unsupported = 0, with_status = 0;
  for (const auto& [bdf, a] : s.faults.aer) {
    with_status += a.status_known ? 1 : 0;
    if (a.status_uncorrectable == std::vector<std::string>{"UnsupReq"}) ++unsupported;
  }
  EXPECT_EQ(unsupported, 6);
  EXPECT_EQ(with_status, 121);  // 121 devices show the AER capability's UESta line
}

}  // namespace
}  // namespace gdsb::topo::testing

namespace gdsb::topo::testing {
namespace {

// --save-snapshot keeps the fault facts and --from-snapshot reads them back unchanged.
TEST(HwFaultsSnapshot, RoundTripOfTheHgxWithAKernelLog) {
  InputSources in;
  in.lspci_text = (fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt").string();
  CollectOptions co;
  co.lookup_names = false;
  co.kernel_log = (kLogs / "gpud-xid119-dmesg-T.log").string();
  const Snapshot s = collect_from(in, co);
  ASSERT_TRUE(s.faults.kernel_log);
  const Snapshot back = snapshot_from_json(snapshot_json(s, true), "round trip");
  EXPECT_EQ(back.faults, s.faults);
  EXPECT_EQ(back.faults.kernel_log->xids.at(0).count, 5u);
}

// No finding on the healthy recordings of the corpus: the HGX (whose AER status registers
// show corrected errors and unsupported requests, as any running machine's do) and the H100 VM.
TEST(HwFaultsHealthy, NoFindingOnTheHealthyRecordings) {
  InputSources hgx;
  hgx.lspci_text = (fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt").string();
  CollectOptions co;
  co.lookup_names = false;
  EXPECT_TRUE(judge_faults(collect_from(hgx, co), {}).empty());
  InputSources vm;
  vm.from_snapshot = (fs::path(GDSB_TOPO_REAL_FIXTURES) / "h100-vm/snapshot").string();
  const Snapshot v = collect_from(vm, co);
  EXPECT_TRUE(judge_faults(v, {}).empty());
  EXPECT_FALSE(v.faults.kernel_log);  // recorded before fault facts: said, not guessed
  EXPECT_FALSE(v.faults.kernel_log_unread.empty());
}

}  // namespace
}  // namespace gdsb::topo::testing
