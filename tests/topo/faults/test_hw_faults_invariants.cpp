// Invariants of the kernel log reader, the tables and judge_faults (issue 36): a log without
// NVRM records gives no finding; a repeated Xid is one finding with a count; an Xid for an
// address that is not a GPU of the node is named so; a binary or cut-off log is a named error;
// memory stays bounded however long the log (measured in a child by its peak RSS). Inputs are
// lines of the recordings in fixtures/real/kernel-logs, repeated or cut.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "gdsb/error.hpp"
#include "gdsb/topo/kernel_log.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo::testing {
namespace {

// gpud-xid119-dmesg-T.log, line 3; gpud-pr46-xid13-xid109-dmesg-T.log, lines 2 and 5;
// dasharo815-aer-no-nvrm-dmesg-T.log, line 5.
constexpr std::string_view kXid119 =
    "[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of "
    "waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4).\n";
constexpr std::string_view kXid13 =
    "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
    "Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n";
constexpr std::string_view kXid109 =
    "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
    "errorString CTX SWITCH TIMEOUT, Info 0x58005\n";
constexpr std::string_view kAer =
    "[Fri Aug 29 20:09:52 2025] pcieport 0000:00:1d.3: AER: Correctable error message received from 0000:06:00.0\n";

KernelLog parse(std::string_view text) {
  KernelLogReader r("test log");
  r.feed(text);
  return r.finish();
}

Snapshot node_with_gpus(std::initializer_list<const char*> gpus) {
  Snapshot s;
  for (const char* bdf : gpus) {
    Device d;
    d.bdf = bdf;
    d.role = Role::Gpu;
    s.devices.push_back(d);
  }
  return s;
}

TEST(HwFaultTables, SortedUniqueAndLookedUpByNumberOrName) {
  int prev = 0;
  for (const auto& r : xid_table()) {
    EXPECT_GT(r.code, prev);  // find_xid bisects
    prev = r.code;
    EXPECT_FALSE(r.user_program && r.drains) << r.code;
    EXPECT_FALSE(r.unused && r.drains) << r.code;
  }
  // Every code of NVIDIA's catalog (1-172) has its row; none past it.
  for (int code = 1; code <= 172; ++code) EXPECT_NE(find_xid(code), nullptr) << code;
  EXPECT_EQ(find_xid(173), nullptr);
  EXPECT_EQ(xid_table().size(), 172u);
  ASSERT_NE(find_xid(79), nullptr);
  EXPECT_EQ(find_xid(79)->bucket, XidBucket::RebootNode);
  EXPECT_TRUE(find_xid(79)->drains);
  EXPECT_TRUE(find_xid(13)->user_program);
  EXPECT_TRUE(find_xid(2)->unused);
  // The catalog's newest rows: 171 and 172 detail an Xid 48 (which memory failed), so drain as it.
  EXPECT_TRUE(find_xid(167)->drains);
  EXPECT_EQ(find_xid(171)->bucket, find_xid(48)->bucket);
  EXPECT_TRUE(find_xid(172)->drains);
  for (const auto& r : aer_table()) {
    EXPECT_EQ(find_aer_kind(r.cls, r.sysfs_name), &r);
    if (!r.lspci_name.empty()) {
      EXPECT_EQ(find_aer_kind_lspci(r.cls, r.lspci_name), &r);
    }
  }
  // pciutils before 3.8 printed bit 13 as NonFatalErr, later as AdvNonFatalErr: one row.
  EXPECT_EQ(find_aer_kind_lspci(AerClass::Correctable, "NonFatalErr"),
            find_aer_kind_lspci(AerClass::Correctable, "AdvNonFatalErr"));
}

TEST(KernelLogInvariants, NoNvrmRecordGivesNoFinding) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += kAer;
  Snapshot s = node_with_gpus({"0000:cb:00.0"});
  s.faults.kernel_log = parse(text);
  EXPECT_TRUE(s.faults.kernel_log->xids.empty());
  EXPECT_TRUE(judge_faults(s, {}).empty());
}

TEST(KernelLogInvariants, RepeatedXidIsOneFindingWithItsCount) {
  for (int n : {1, 2, 17, 1000}) {
    std::string text;
    for (int i = 0; i < n; ++i) text += kXid119;
    Snapshot s = node_with_gpus({"0000:9b:00.0"});
    s.faults.kernel_log = parse(text);
    const auto findings = judge_faults(s, {});
    ASSERT_EQ(findings.size(), 1u) << n;
    EXPECT_EQ(findings[0].count, static_cast<uint64_t>(n));
    EXPECT_EQ(findings[0].severity, FaultSeverity::Critical);
    EXPECT_EQ(findings[0].when, "16:24:18");
  }
}

TEST(KernelLogInvariants, UserProgramXid13NeverDrains) {
  Snapshot s = node_with_gpus({"0000:cb:00.0"});
  s.faults.kernel_log = parse(std::string(kXid13) + std::string(kXid13));
  const auto f = judge_faults(s, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, FaultSeverity::Warning);
  s.faults.kernel_log = parse(std::string(kXid13) + std::string(kXid109));
  const auto g = judge_faults(s, {});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].xid, 109);  // critical first
  EXPECT_EQ(g[0].words, "GPU 0000:cb:00.0 Xid 109 (context switch timeout) at 11:43:14: drain, reset the GPU");
}

TEST(KernelLogInvariants, XidOfAnAddressThatIsNoGpuHereIsNamedSo) {
  Snapshot s = node_with_gpus({"0000:19:00.0"});
  s.faults.kernel_log = parse(kXid119);
  const auto f = judge_faults(s, {});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FaultKind::XidNotOurGpu);
  EXPECT_EQ(f[0].severity, FaultSeverity::Warning);
  EXPECT_NE(f[0].words.find("not a GPU of this node"), std::string::npos);
  // A GPU of the known-good file that is gone now (fallen off the bus) is still this node's.
  FaultBaseline b;
  b.known_gpus = {"0000:9b:00.0"};
  EXPECT_EQ(judge_faults(s, b).at(0).kind, FaultKind::Xid);
}

// Issue 42: one decision of "is this address a GPU of this node". A GPU the known-good facts
// list, or any address of the node's own log (read in the boot the facts were collected in),
// is the node's even when gone from the bus: missing, critical whatever the code.
TEST(KernelLogInvariants, AGpuOfTheNodeGoneFromTheBusIsMissingAndCritical) {
  EXPECT_EQ(gpu_of_node(true, false, false), GpuOfNode::Present);
  EXPECT_EQ(gpu_of_node(false, true, false), GpuOfNode::Missing);
  EXPECT_EQ(gpu_of_node(false, false, true), GpuOfNode::Missing);
  EXPECT_EQ(gpu_of_node(false, false, false), GpuOfNode::NotKnown);
  Snapshot s = node_with_gpus({"0000:19:00.0"});
  s.faults.kernel_log = parse(std::string(kXid13) + std::string(kXid109));
  FaultBaseline known;
  known.known_gpus = {"0000:19:00.0", "0000:cb:00.0"};
  const auto f = judge_faults(s, known);
  ASSERT_EQ(f.size(), 2u);
  for (const auto& x : f) {
    EXPECT_EQ(x.kind, FaultKind::Xid);
    EXPECT_EQ(x.severity, FaultSeverity::Critical);  // Xid 13 alone would be a warning on a GPU present
    EXPECT_EQ(health_action_name(x), "drain");
  }
  EXPECT_EQ(f[0].words, "GPU 0000:cb:00.0 missing: Xid 13 (graphics engine exception) at 11:43:09: drain, reboot");
  EXPECT_EQ(f[1].words, "GPU 0000:cb:00.0 missing: Xid 109 (context switch timeout) at 11:43:14: drain, reset the GPU");
  // The node's own log: the same boot id on the log and the collection.
  s.faults.boot_id = s.faults.kernel_log->boot_id = "3c0e5b1a-6f0e-4c1e-9d0e-5f3a8e7b2c11";
  EXPECT_EQ(judge_faults(s, {}).at(0).severity, FaultSeverity::Critical);
  // A log of another boot, or a file without one, is not known to be the node's.
  s.faults.kernel_log->boot_id = "";
  EXPECT_EQ(judge_faults(s, {}).at(0).kind, FaultKind::XidNotOurGpu);
  EXPECT_EQ(health_action_name(judge_faults(s, {}).at(0)), "warn");
}

TEST(KernelLogInvariants, BinaryOrCutOffLogIsANamedError) {
  const std::string gz("\x1f\x8b\x08\x00", 4);
  try {
    parse(gz);
    FAIL() << "a gzip header parsed";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("test log: byte 0x1f at offset 0"), std::string::npos) << e.what();
  }
  std::string nul = std::string(kXid119) + std::string("ab\0cd\n", 6);
  EXPECT_THROW(parse(nul), RuntimeError);
  // Every prefix of a record that ends before its newline is read when it parses (a log still
  // being written): as that Xid once its code is whole, as no Xid before "Xid (" (the next read
  // has it whole); else a "cut off" error. Never another code, never a crash.
  const std::string rec(kXid119);
  const size_t code_end = rec.find("119,") + 3;
  for (size_t cut = 1; cut < rec.size(); ++cut) {
    try {
      const KernelLog log = parse(rec.substr(0, cut));
      ASSERT_LE(log.xids.size(), 1u) << cut;
      EXPECT_EQ(log.xids.size(), cut > code_end ? 1u : 0u) << cut;
      if (log.xids.empty()) continue;
      EXPECT_EQ(log.xids[0].code, 119) << cut;
      EXPECT_EQ(log.xids[0].bdf, "0000:9b:00.0") << cut;
    } catch (const RuntimeError& e) {
      EXPECT_NE(std::string(e.what()).find("cut off"), std::string::npos) << cut;
    }
  }
}

TEST(KernelLogInvariants, ChunkBoundariesDoNotMatter) {
  const std::string text = std::string(kXid13) + std::string(kAer) + std::string(kXid109) + std::string(kXid119);
  const KernelLog whole = parse(text);
  for (size_t step : {1u, 3u, 64u}) {
    KernelLogReader r("test log");
    for (size_t i = 0; i < text.size(); i += step) r.feed(std::string_view(text).substr(i, step));
    EXPECT_EQ(r.finish(), whole) << step;
  }
}

// Peak RSS (KiB) of a child that feeds `megabytes` of log lines (a real record repeated, with
// a new address every line so the event bound is reached too).
long child_peak_kib(size_t megabytes) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    KernelLogReader r("big log");
    std::string chunk;
    for (int i = 0; chunk.size() < (1u << 20); ++i) {
      char line[200];
      std::snprintf(line, sizeof line, "[%d.000000] NVRM: Xid (PCI:%04x:%02x:00): %d, pid=1, name=x, y\n", i,
                    i & 0xffff, (i >> 4) & 0xff, 8 + i % 150);
      chunk += line;
    }
    for (size_t m = 0; m < megabytes; ++m) r.feed(chunk);
    const KernelLog log = r.finish();
    ::_exit(log.xids.size() <= kMaxXidKeys ? 0 : 1);
  }
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return ru.ru_maxrss;
}

TEST(KernelLogInvariants, MemoryStaysBoundedAsTheLogGrows) {
  const long small = child_peak_kib(4), large = child_peak_kib(96);
  EXPECT_LT(large, small + 16 * 1024) << "4 MiB: " << small << " KiB, 96 MiB: " << large << " KiB";
}

}  // namespace
}  // namespace gdsb::topo::testing
