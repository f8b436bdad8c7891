// ext4 data mode: read from /proc/fs/ext4/<dev>/options in recorded roots, kept in
// snapshots, unknown in older snapshots, and judged the same by the file-system check.
#include <fstream>
#include <nlohmann/json.hpp>

#include "gdsb/topo/ext4_mode.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;

// As the kernel prints the file: one option per line, "rw" first (ext4_seq_options_show).
std::string options_file(const std::string& data_line) {
  return "rw\nbsddf\nnogrpid\nblock_validity\ndelalloc\nbarrier\nuser_xattr\nacl\nerrors=continue"
         "\ncommit=5\nmin_batch_time=0\nmax_batch_time=15000\nstripe=0\n" +
         (data_line.empty() ? "" : data_line + "\n") + "inode_readahead_blks=32\ninit_itable=10\n";
}

// One journaled-or-not ext4 data mount on nvme0n1p1, its /proc/mounts line without data=.
fixture::Machine ext4_box(const std::string& data_line, std::vector<std::string> jbd2 = {}) {
  auto m = fixture::make_box(1, 1, 1, 1, 0);
  m.host.mounts = {"/dev/nvme0n1p1 /data ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
  m.host.ext4_options = {{"nvme0n1p1", options_file(data_line)}};
  m.host.jbd2 = std::move(jbd2);
  return m;
}

const Mount& data_mount(const Outcome& o) {
  for (const auto& mt : o.snapshot.machine.mounts)
    if (mt.target == "/data") return mt;
  throw std::runtime_error("no /data mount");
}

TEST(TopoExt4, DataOrderedInTheOptionsFileIsNoFinding) {
  const auto o = run_sysfs(ext4_box("data=ordered", {"nvme0n1p1-8"}));
  const Ext4Mode mode = ext4_data_mode(data_mount(o));
  EXPECT_EQ(mode.mode, Ext4DataMode::Ordered);
  EXPECT_EQ(mode.evidence, "/proc/fs/ext4/nvme0n1p1/options: data=ordered");
  const CheckResult* fsr = o.titled("gds-stack", "file systems");
  ASSERT_NE(fsr, nullptr);
  EXPECT_EQ(fsr->verdict, Verdict::Pass);
  EXPECT_TRUE(any_contains(fsr->evidence, "/data ext4 (/dev/nvme0n1p1): GDS-capable"));
  EXPECT_FALSE(any_contains(fsr->evidence, "writeback"));
}

TEST(TopoExt4, WritebackAndJournalAreNamed) {
  for (const std::string mode : {"writeback", "journal"}) {
    const auto o = run_sysfs(ext4_box("data=" + mode, {"nvme0n1p1-8"}));
    EXPECT_EQ(ext4_data_mode_name(ext4_data_mode(data_mount(o)).mode), mode);
    const CheckResult* fsr = o.titled("gds-stack", "file systems");
    ASSERT_NE(fsr, nullptr);
    EXPECT_EQ(fsr->verdict, Verdict::Fail) << mode;  // the only data mount
    EXPECT_TRUE(any_contains(fsr->evidence, "ext4 data=" + mode + ": GDS supports ext4 in "
                                            "ordered mode only"))
        << mode;
  }
}

TEST(TopoExt4, NoDataLineIsNoJournalReportedAsWhatItIs) {
  // /proc/fs/jbd2 read, with the journal of another ext4 only.
  const auto o = run_sysfs(ext4_box("", {"sda1-8"}));
  EXPECT_EQ(ext4_data_mode(data_mount(o)).mode, Ext4DataMode::NoJournal);
  const CheckResult* fsr = o.titled("gds-stack", "file systems");
  ASSERT_NE(fsr, nullptr);
  // The GDS documents do not say: no pass, no fail.
  EXPECT_EQ(fsr->verdict, Verdict::Waived);
  EXPECT_TRUE(any_contains(fsr->evidence, "ext4 without a journal"));
  EXPECT_FALSE(any_contains(fsr->evidence, "GDS-capable"));
}

TEST(TopoExt4, NoDataLineAndJbd2UnreadableIsAnUnknownJournalModeNotNoJournal) {
  // A kernel that prints data= only when non-default, and no /proc/fs/jbd2 to read (the
  // fixture writes none): the mount may be a default journaled one.
  const auto o = run_sysfs(ext4_box(""));
  const Ext4Mode mode = ext4_data_mode(data_mount(o));
  EXPECT_EQ(mode.mode, Ext4DataMode::Unknown);
  EXPECT_EQ(mode.evidence, "/proc/fs/ext4/nvme0n1p1/options: no data= line, and /proc/fs/jbd2 "
                           "was not readable: unknown journal mode");
  const CheckResult* fsr = o.titled("gds-stack", "file systems");
  ASSERT_NE(fsr, nullptr);
  EXPECT_EQ(fsr->verdict, Verdict::Pass);  // an unknown mode is never a finding
  EXPECT_FALSE(any_contains(fsr->evidence, "without a journal"));
  EXPECT_TRUE(any_contains(fsr->evidence, "unknown journal mode"));
}

TEST(TopoExt4, NoDataLineWithAJournalIsTheDefaultOfAnOlderKernel) {
  // Kernels that print data= in the options file only when non-default: the jbd2 entry
  // says the mount is journaled, so the mode is the default.
  const auto o = run_sysfs(ext4_box("", {"nvme0n1p1-8", "sda1-8"}));
  EXPECT_EQ(ext4_data_mode(data_mount(o)).mode, Ext4DataMode::Ordered);
  EXPECT_EQ(o.titled("gds-stack", "file systems")->verdict, Verdict::Pass);
}

TEST(TopoExt4, WithoutTheOptionsFileTheModeIsUnknownNeverMissing) {
  auto m = ext4_box("data=ordered");
  m.host.ext4_options.clear();
  const auto o = run_sysfs(m);
  EXPECT_EQ(ext4_data_mode(data_mount(o)).mode, Ext4DataMode::Unknown);
  EXPECT_FALSE(data_mount(o).ext4_options.has_value());
  // /proc/mounts still names a non-default mode.
  m.host.mounts = {"/dev/nvme0n1p1 /data ext4 rw,relatime,data=writeback 0 0"};
  const auto w = run_sysfs(m);
  const Ext4Mode mode = ext4_data_mode(data_mount(w));
  EXPECT_EQ(mode.mode, Ext4DataMode::Writeback);
  EXPECT_EQ(mode.evidence, "/proc/mounts: data=writeback");
}

TEST(TopoExt4, SnapshotKeepsTheOptionsAndOlderSnapshotsAreUnknown) {
  fixture::TempDir tree, snap;
  fixture::write_sysfs(ext4_box("data=writeback", {"nvme0n1p1-8"}), tree.path());
  save_snapshot(collect_sysfs_root(tree.path(), offline()), snap.path());
  const auto o = evaluate_snapshot(load_snapshot(snap.path()));
  const Mount& mt = data_mount(o);
  EXPECT_EQ(mt.ext4_dev, "nvme0n1p1");
  EXPECT_EQ(mt.ext4_journal, std::optional<bool>(true));
  EXPECT_EQ(ext4_data_mode(mt).mode, Ext4DataMode::Writeback);
  EXPECT_EQ(o.titled("gds-stack", "file systems")->verdict, Verdict::Fail);

  // The same snapshot as written before the fact was recorded: four fields per mount.
  auto j = nlohmann::json::parse(std::ifstream(snap.path() / "snapshot.json"));
  for (auto& row : j["machine"]["mounts"])
    if (row.size() > 4) row.erase(4);
  std::ofstream(snap.path() / "snapshot.json") << j.dump();
  const auto old = evaluate_snapshot(load_snapshot(snap.path()));
  EXPECT_EQ(ext4_data_mode(data_mount(old)).mode, Ext4DataMode::Unknown);
  EXPECT_EQ(old.titled("gds-stack", "file systems")->verdict, Verdict::Pass);
}

// Recorded by this project on the H100 VM before the fact existed (SOURCES.md): its root is
// a journal-less ext4 on vda, and /proc/mounts has no data= option.
TEST(TopoExt4, RecordedH100VmSnapshotIsUnknownNotLacking) {
  const auto o = evaluate_snapshot(
      load_snapshot(fs::path(GDSB_TOPO_REAL_FIXTURES) / "h100-vm" / "snapshot"));
  const Mount* root = nullptr;
  for (const auto& mt : o.snapshot.machine.mounts)
    if (mt.target == "/") root = &mt;
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->fstype, "ext4");
  EXPECT_EQ(ext4_data_mode(*root).mode, Ext4DataMode::Unknown);
  for (const auto& c : o.report.checks)
    for (const auto& e : c.evidence) EXPECT_EQ(e.find("data=ordered"), std::string::npos) << e;
}

}  // namespace
}  // namespace gdsb::topo::testing
