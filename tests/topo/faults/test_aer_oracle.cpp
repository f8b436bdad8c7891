// Issue 36's AER oracle: one kernel on one machine (Debian 12's kernel on QEMU q35 with AER
// errors injected through the monitor; fixtures/real/aer-qemu/SOURCES.md). gdsbench's readers
// (sysfs AER files, lspci -vvv text, the kernel log, the --sysfs-root collector and
// judge_faults) are held to what the same recording says independently: the kernel's own log
// records of each error, its root port's counters and Error Source register, and lspci's
// status bits. Expected literals were read off the files by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"
#include "gdsb/topo/kernel_log.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
const fs::path kAer = fs::path(GDSB_TOPO_REAL_FIXTURES) / "aer-qemu";

using Counts = std::map<std::string, std::map<std::string, uint64_t>>;  // BDF -> kind -> count
struct LogCounts {
  Counts correctable, nonfatal, fatal;
  int records = 0;
};

// The kernel's own account, read off its log lines (independent of gdsbench's readers):
// "<drv> <bdf>: PCIe Bus Error: severity=Corrected, ..." then one "<drv> <bdf>:    [ n] Kind"
// line per status bit it handled (drivers/pci/pcie/aer.c, aer_print_error()).
LogCounts count_log_records(const fs::path& file) {
  static const std::regex header(R"(^\[ *[0-9.]+\] \S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]): PCIe Bus Error: severity=([^,]+),)");
  static const std::regex bit(R"(^\[ *[0-9.]+\] \S+ ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]):\s+\[ ?[0-9]+\] (\S+))");
  LogCounts out;
  std::map<std::string, Counts*> severity_of;  // BDF -> the map its last header named
  std::ifstream in(file);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, header)) {
      const std::string sev = m[2];
      Counts* c = sev == "Corrected" ? &out.correctable
                  : sev == "Uncorrected (Non-Fatal)" ? &out.nonfatal
                  : sev == "Uncorrected (Fatal)" ? &out.fatal
                                                  : nullptr;
      EXPECT_NE(c, nullptr) << line;
      severity_of[m[1]] = c;
      ++out.records;
    } else if (std::regex_search(line, m, bit)) {
      Counts* c = severity_of[m[1]];
      EXPECT_NE(c, nullptr) << "a status bit line before its header: " << line;
      if (c) ++(*c)[m[1]][m[2]];
    }
  }
  return out;
}

std::map<std::string, AerCounters> read_tree(const fs::path& root) {
  std::map<std::string, AerCounters> out;
  for (const auto& e : fs::directory_iterator(root / "sys/bus/pci/devices"))
    if (auto a = read_aer_dir(e.path())) out[e.path().filename().string()] = *a;
  return out;
}

uint64_t at_or_zero(const Counts& c, const std::string& bdf, const std::string& kind) {
  const auto d = c.find(bdf);
  if (d == c.end()) return 0;
  const auto k = d->second.find(kind);
  return k == d->second.end() ? 0 : k->second;
}

uint64_t sum(const std::map<std::string, uint64_t>& m) {
  uint64_t n = 0;
  for (const auto& [kind, v] : m) n += v;
  return n;
}

// The lines of one device's stanza in lspci -D -vvv text.
std::vector<std::string> stanza(const fs::path& file, const std::string& bdf) {
  std::ifstream in(file);
  std::vector<std::string> out;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '\t') inside = line.rfind(bdf + " ", 0) == 0;
    if (inside) out.push_back(line);
  }
  return out;
}

std::string line_with(const std::vector<std::string>& lines, const std::string& key) {
  for (const auto& l : lines)
    if (l.find(key) != std::string::npos) return l;
  return "";
}

TEST(AerQemuOracle, SysfsCountsEqualTheKernelsLogRecordsPerDeviceAndKind) {
  const LogCounts log = count_log_records(kAer / "dmesg-aer.log");
  const auto aer = read_tree(kAer / "sysfs-after");
  ASSERT_EQ(aer.size(), 4u);  // two root ports, the NIC, the drive
  EXPECT_EQ(log.records, 5);
  for (const auto& [bdf, a] : aer) {
    ASSERT_TRUE(a.counters_known) << bdf;
    for (const auto& [which, counted, logged, total] :
         {std::tuple{"correctable", &a.correctable, &log.correctable, a.total_correctable},
          std::tuple{"nonfatal", &a.nonfatal, &log.nonfatal, a.total_nonfatal},
          std::tuple{"fatal", &a.fatal, &log.fatal, a.total_fatal}}) {
      for (const auto& [kind, n] : *counted) EXPECT_EQ(n, at_or_zero(*logged, bdf, kind)) << bdf << " " << which << " " << kind;
      // Every kind the kernel logged is one the sysfs file (and so the reader) names.
      if (const auto d = logged->find(bdf); d != logged->end()) {
        for (const auto& [kind, n] : d->second) EXPECT_TRUE(counted->count(kind)) << bdf << " " << kind;
      }
      EXPECT_EQ(total, sum(*counted)) << bdf << " " << which;
    }
  }
  // Read off the files: the drive counted RxErr twice, BadTLP and BadDLLP once, CmpltTO once.
  const AerCounters& drive = aer.at("0000:02:00.0");
  EXPECT_EQ(drive.correctable.at("RxErr"), 2u);
  EXPECT_EQ(drive.correctable.at("BadTLP"), 1u);
  EXPECT_EQ(drive.correctable.at("BadDLLP"), 1u);
  EXPECT_EQ(drive.total_correctable, 4u);
  EXPECT_EQ(drive.nonfatal.at("CmpltTO"), 1u);
  EXPECT_EQ(drive.total_nonfatal, 1u);
  EXPECT_EQ(drive.total_fatal, 0u);
  EXPECT_EQ(aer.at("0000:01:00.0").total_correctable, 0u);  // its error sent no message
}

TEST(AerQemuOracle, RootPortCountersAndErrorSourceNameTheDrive) {
  const auto aer = read_tree(kAer / "sysfs-after");
  // The root port counts every message it received from below: the drive's 4 + 1.
  const fs::path port = kAer / "sysfs-after/sys/bus/pci/devices/0000:00:03.0";
  std::ifstream cor(port / "aer_rootport_total_err_cor"), nonfatal(port / "aer_rootport_total_err_nonfatal");
  uint64_t n_cor = 0, n_nonfatal = 0;
  cor >> n_cor;
  nonfatal >> n_nonfatal;
  EXPECT_EQ(n_cor, *aer.at("0000:02:00.0").total_correctable);
  EXPECT_EQ(n_nonfatal, *aer.at("0000:02:00.0").total_nonfatal);
  // lspci: the port's Error Source Identification register holds the last sender, bus 02
  // device 00 function 0; the other port received nothing.
  const auto lines = stanza(kAer / "lspci-vvv-after.txt", "0000:00:03.0");
  EXPECT_NE(line_with(lines, "ErrorSrc:").find("ERR_COR: 0200 ERR_FATAL/NONFATAL: 0200"), std::string::npos);
  EXPECT_NE(line_with(stanza(kAer / "lspci-vvv-after.txt", "0000:00:02.0"), "ErrorSrc:")
                .find("ERR_COR: 0000 ERR_FATAL/NONFATAL: 0000"),
            std::string::npos);
}

// What lspci's status bits say against the counters: the kernel cleared every correctable bit
// it counted; the uncorrectable one stayed set because recovery failed (virtio-blk has no
// error handlers); the NIC's bit, set with reporting off in Device Control, was never counted.
TEST(AerQemuOracle, LspciStatusBitsAgainstTheCounters) {
  CollectOptions co;
  co.lookup_names = false;
  const Snapshot s = collect_lspci_text(kAer / "lspci-vvv-after.txt", co);
  const auto aer = read_tree(kAer / "sysfs-after");
  const AerCounters& drive = s.faults.aer.at("0000:02:00.0");
  ASSERT_TRUE(drive.status_known);
  EXPECT_TRUE(drive.status_correctable.empty());
  EXPECT_EQ(drive.status_uncorrectable, std::vector<std::string>{"CmpltTO"});
  const AerCounters& nic = s.faults.aer.at("0000:01:00.0");
  EXPECT_EQ(nic.status_correctable, std::vector<std::string>{"Timeout"});
  EXPECT_EQ(aer.at("0000:01:00.0").correctable.at("Timeout"), 0u);
  EXPECT_NE(line_with(stanza(kAer / "lspci-vvv-after.txt", "0000:01:00.0"), "DevCtl:")
                .find("CorrErr- NonFatalErr- FatalErr- UnsupReq-"),
            std::string::npos);
  for (const auto& [bdf, st] : s.faults.aer) {
    if (!st.status_known) continue;
    const AerCounters& c = aer.at(bdf);
    // A counted correctable kind is cleared; a set uncorrectable bit was counted.
    for (const auto& kind : st.status_correctable) EXPECT_EQ(c.correctable.at(kind), 0u) << bdf << " " << kind;
    for (const auto& kind : st.status_uncorrectable)
      EXPECT_GE(c.nonfatal.at(kind) + c.fatal.at(kind), 1u) << bdf << " " << kind;
  }
}

TEST(AerQemuOracle, BeforeTheInjectionsEveryCounterAndStatusBitIsClear) {
  for (const auto& [bdf, a] : read_tree(kAer / "sysfs-before")) {
    EXPECT_EQ(a.total_correctable, 0u) << bdf;
    EXPECT_EQ(a.total_nonfatal, 0u) << bdf;
    EXPECT_EQ(a.total_fatal, 0u) << bdf;
  }
  CollectOptions co;
  co.lookup_names = false;
  const Snapshot s = collect_lspci_text(kAer / "lspci-vvv-before.txt", co);
  int with_status = 0;
  for (const auto& [bdf, a] : s.faults.aer) {
    with_status += a.status_known ? 1 : 0;
    EXPECT_TRUE(a.status_correctable.empty()) << bdf;
    EXPECT_TRUE(a.status_uncorrectable.empty()) << bdf;
  }
  EXPECT_EQ(with_status, 4);
}

TEST(AerQemuOracle, KernelLogReaderFindsNoXidInTheAerLines) {
  const KernelLog log = read_kernel_log_file(kAer / "dmesg-aer.log");
  EXPECT_EQ(log.format, "dmesg");
  EXPECT_EQ(log.lines, 42u);
  EXPECT_EQ(log.nvrm_lines, 0u);
  EXPECT_TRUE(log.xids.empty());
}

// The sysfs copy read as a machine (--sysfs-root): the same counters, the boot, and the
// verdict: the drive, its most frequent correctable kind, and its non-fatal error.
TEST(AerQemuOracle, SysfsRootJudgedNamesTheDriveAndItsKinds) {
  CollectOptions co;
  co.lookup_names = false;
  const Snapshot after = collect_sysfs_root(kAer / "sysfs-after", co);
  const auto direct = read_tree(kAer / "sysfs-after");
  EXPECT_EQ(after.faults.aer.size(), direct.size());
  for (const auto& [bdf, a] : direct) EXPECT_EQ(after.faults.aer.at(bdf), a) << bdf;
  EXPECT_EQ(after.faults.boot_id, "ea22d21a-4e31-4cbc-a12f-b35e3d7ef79a");
  ASSERT_TRUE(after.faults.uptime_s);
  EXPECT_NEAR(*after.faults.uptime_s, 67.72, 1e-9);
  const auto findings = judge_faults(after, {});
  ASSERT_EQ(findings.size(), 2u);
  for (const FaultFinding& f : findings) {
    EXPECT_EQ(f.bdf, "0000:02:00.0");
    EXPECT_EQ(f.severity, FaultSeverity::Warning);
    if (f.kind == FaultKind::AerCorrectableRate) {
      EXPECT_EQ(f.count, 4u);
      EXPECT_EQ(f.aer_kind, "RxErr");
      EXPECT_NEAR(f.rate_per_hour, 4 / (67.72 / 3600), 1e-6);
    } else {
      EXPECT_EQ(f.kind, FaultKind::AerUncorrectable);
      EXPECT_EQ(f.count, 1u);
      EXPECT_EQ(f.aer_kind, "CmpltTO");
    }
  }
  EXPECT_TRUE(judge_faults(collect_sysfs_root(kAer / "sysfs-before", co), {}).empty());
}

}  // namespace
}  // namespace gdsb::topo::testing
