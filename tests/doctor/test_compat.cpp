// Compat-mode scenarios: a healthy box (fixture builder) where cuFile fell back, each
// with the evidence gdsb-io's decide_path writes for that cause.
#include "doctor_test_util.hpp"
#include "gdsb/gpu/cufile_errors.hpp"
#include "p2pdma_recording.hpp"

namespace gdsb::doctor::testing {
namespace {

fx::Machine box() { return fx::make_box(1, 1, 1, 2, 1); }  // GPU 03:00.0, NVMe 04/05:00.0

TEST(DoctorCompat, NvidiaFsNotLoadedIsCertainWithTheModprobeFix) {
  auto m = box();
  m.host.nvidia_fs = false;
  const auto d = diagnose_with(m, {run(XferType::CpuOnly, 13.5), run(XferType::CpuGpu, 9.0),
                                   cufile_run(2.4, no_nvfs_facts())});
  ASSERT_FALSE(d.findings.empty());
  const Finding& f = d.findings.front();
  EXPECT_EQ(f.rule, "compat-mode");
  EXPECT_EQ(f.title, "cuFile in compat mode: nvidia-fs is not loaded");
  EXPECT_EQ(f.confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f.fix, "modprobe nvidia-fs"));
  EXPECT_TRUE(contains(f.fix, "use_pci_p2pdma"));
  EXPECT_TRUE(any_contains(f.evidence, "nvidia-fs not loaded (/proc/driver/nvidia-fs absent)"));
  EXPECT_TRUE(any_contains(f.evidence, "storage alone"));
  ASSERT_TRUE(f.expected_gb_s.has_value());
  // The two Gen4 x4 drives by the GPU allow 15.75 GB/s, but storage alone measured 13.5
  // GiB/s (14.5 GB/s): a GDS fix cannot beat the storage (issue 19: the ceiling is the
  // minimum over every hop, measured storage included; it was the drives' 15.75 before).
  EXPECT_NEAR(*f.expected_gb_s, 13.5 * 1.073741824, 0.01);
  EXPECT_TRUE(d.has_problem());
}

// Issue 43: no nvidia-fs, use_pci_p2pdma on, NVMe present, and the registry as the H200 VM
// recorded it (RegistryDwords ""): compat because RMForceStaticBar1 is not set, with its
// modprobe.d fix and the figure to expect once it is.
TEST(DoctorCompat, CompatBecauseTheP2pdmaRegistryIsNotSet) {
  fx::Machine m = topo::testing::p2pdma_ready_node();
  m.host.files["proc/driver/nvidia/params"] =
      topo::testing::h200_recording("proc-driver-nvidia-params.txt");
  auto facts = no_nvfs_facts();
  facts.config.use_pci_p2pdma = true;
  // cuFile's properties without the P2P feature, and its log as on NVIDIA/gds-nvidia-fs issue 75.
  facts.props.known = true;
  facts.props.p2p_supported = false;
  facts.log_lines = {" 26-01-2026 15:24:49:200 [pid=2306456 tid=2306456] DEBUG  cufio-drv:796 gpu "
                     "attribute pci_p2pdma not supported errornum: 801 error:  CUDA_ERROR_NOT_SUPPORTED"};
  const auto d = diagnose_with(m, {run(XferType::CpuOnly, 3.0), cufile_run(1.2, facts)});
  const Finding* f = find_rule(d, "compat-mode");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title,
            "cuFile in compat mode: nvidia-fs is not loaded and P2PDMA mode cannot engage: "
            "RMForceStaticBar1 and RmForceDisableIomapWC are not set");
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f->evidence, "P2PDMA driver registry: /proc/driver/nvidia/params "
                                        "RegistryDwords: \"\""));
  EXPECT_TRUE(contains(f->fix, "options nvidia NVreg_RegistryDwords=\"RMForceStaticBar1=1;"
                               "RmForceDisableIomapWC=1\""));
  EXPECT_TRUE(contains(f->fix, "update-initramfs -u"));
  ASSERT_TRUE(f->expected_gb_s.has_value());  // the figure once GDS runs: storage alone bounds it
  EXPECT_NEAR(*f->expected_gb_s, 3.0 * 1.073741824, 0.01);
  // Only cufile.json's key missing: the generic cause, whose fix already names the key.
  fx::Machine off = topo::testing::p2pdma_ready_node();
  off.host.cufile_json = R"({ "properties": { "use_pci_p2pdma": false } })";
  const auto d2 = diagnose_with(off, {cufile_run(1.2, no_nvfs_facts())});
  EXPECT_EQ(find_rule(d2, "compat-mode")->title, "cuFile in compat mode: nvidia-fs is not loaded");
}

TEST(DoctorCompat, ForcedByCufileJson) {
  auto facts = nvfs_facts(false);
  facts.config.force_compat_mode = true;
  const auto d = diagnose_with(box(), {cufile_run(2.0, facts)});
  const Finding* f = find_rule(d, "compat-mode");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "cuFile in compat mode: cufile.json or the environment forces it");
  EXPECT_TRUE(contains(f->fix, "\"force_compat_mode\": false"));
  EXPECT_TRUE(any_contains(f->evidence, "force_compat_mode=true"));
}

TEST(DoctorCompat, P2pdmaConfiguredButNotEnabledInTheDriver) {
  auto facts = no_nvfs_facts();
  facts.config.use_pci_p2pdma = true;
  facts.props.known = true;
  facts.props.p2p_supported = false;
  facts.log_lines = {"cufio-p2p: compat mode: P2P not supported"};
  auto m = box();
  m.host.nvidia_fs = false;
  const auto d = diagnose_with(m, {cufile_run(2.0, facts)});
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().title,
            "cuFile in compat mode: P2PDMA is configured but not enabled in the driver");
  EXPECT_TRUE(any_contains(d.findings.front().evidence, "P2P feature off"));
  EXPECT_TRUE(contains(d.findings.front().fix, "kernel >= 6.2"));
}

TEST(DoctorCompat, UdevDatabaseMissing) {
  auto facts = nvfs_facts(false);
  // A cuFile record as cufile.log writes it (timestamp, pid/tid, level, module:line).
  facts.log_lines = {
      " 22-11-2026 06:01:02:130 [pid=4242 tid=4242] ERROR  cufio-udev:132 udev property not "
      "found: ID_FS_USAGE nvme0n1"};
  auto m = box();
  m.host.udev = false;
  const auto d = diagnose_with(m, {cufile_run(1.5, facts)});
  const Finding* f = find_titled(d, "udev database is missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f->evidence, "ID_FS_USAGE"));
  EXPECT_TRUE(any_contains(f->evidence, "/run/udev/data absent"));
  EXPECT_TRUE(contains(f->fix, "/run/udev"));
}

TEST(DoctorCompat, FailedRegistrationWithoutUdevRecord) {
  // As gdsb-io reports it (describe_failure), after finding the record missing.
  gpu::cufile::FailureContext c;
  c.call = "cuFileHandleRegister";
  c.code = 5030;
  c.file = "/raid/f";
  c.udev_record = "/run/udev/data/b259:0";
  c.udev_record_present = false;
  const RunResult x0 =
      not_run(XferType::GpuDirect, RunStatus::Failed, gpu::cufile::describe_failure(c));
  const auto d = diagnose_with(box(), {run(XferType::CpuOnly, 13.0), x0});
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().title,
            "cuFile failed to open the file: the udev database is missing");
  EXPECT_TRUE(any_contains(d.findings.front().evidence, "/run/udev/data/b259:0"));
}

// /proc/mounts prints data= only when it differs from the default; the mode is the one
// /proc/fs/ext4/<dev>/options states (gdsb/topo/ext4_mode.hpp).
TEST(DoctorCompat, Ext4DataModeFromTheKernelsOptionsFile) {
  auto m = box();
  m.host.mounts = {"/dev/md0 /raid ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
  m.host.jbd2 = {"md0-8"};
  m.host.ext4_options = {{"md0", "rw\nerrors=continue\ncommit=5\ndata=ordered\nstripe=0\n"}};
  for (const auto& x : diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))}).findings) {
    EXPECT_EQ(x.title.find("data="), std::string::npos) << x.title;
    EXPECT_EQ(x.title.find("ext4"), std::string::npos) << x.title;
  }
  m.host.ext4_options = {{"md0", "rw\nerrors=continue\ncommit=5\ndata=writeback\n"}};
  const auto d = diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))});
  const Finding* f = find_titled(d, "data=writeback");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title,
            "cuFile in compat mode: ext4 mount /raid uses data=writeback, GDS supports ext4 in "
            "ordered mode only");
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_TRUE(any_contains(f->evidence, "/proc/fs/ext4/md0/options: data=writeback"));
  EXPECT_TRUE(contains(f->fix, "data=ordered"));
  EXPECT_TRUE(contains(f->fix, "/etc/fstab"));
}

TEST(DoctorCompat, Ext4WithoutTheOptionsFileIsNeverLackingDataOrdered) {
  auto m = box();
  m.host.mounts = {"/dev/md0 /raid ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
  for (const auto& x : diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))}).findings)
    EXPECT_EQ(x.title.find("data="), std::string::npos) << x.title;
  // /proc/mounts names a non-default mode.
  m.host.mounts = {"/dev/md0 /raid ext4 rw,relatime,data=journal 0 0"};
  EXPECT_NE(find_titled(diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))}),
                        "uses data=journal"),
            nullptr);
}

TEST(DoctorCompat, Ext4WithoutJournalIsAFactNotACause) {
  auto m = box();
  m.host.mounts = {"/dev/vda /raid ext4 rw,relatime 0 0"};
  m.host.ext4_options = {{"vda", "rw\nerrors=continue\ncommit=5\nstripe=0\n"}};
  m.host.jbd2 = {"nvme0n1p2-8"};  // /proc/fs/jbd2 read: the root's journal, none of vda
  const auto d = diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))});
  for (const auto& x : d.findings) EXPECT_EQ(x.title.find("ext4"), std::string::npos) << x.title;
  const Finding* f = find_rule(d, "compat-mode");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(any_contains(f->evidence, "is ext4 without a journal"));
}

// "/data10/f" lies on "/", not on the "/data1" mount beside it (issue 24: the file was
// matched to the mount point as a string prefix).
TEST(DoctorCompat, AFileBesideAMountPointIsNotOnIt) {
  auto m = box();
  m.host.mounts = {"/dev/nvme0n1 / xfs rw,relatime 0 0",
                   "/dev/nvme1n1 /data1 ext4 rw,relatime,data=writeback 0 0"};
  RunResult r = cufile_run(2.0, nvfs_facts(false));
  r.workload.file = "/data10/f";
  const auto beside = diagnose_with(m, {r});
  EXPECT_EQ(find_titled(beside, "data=writeback"), nullptr);
  for (const auto& f : beside.findings)
    EXPECT_FALSE(any_contains(f.evidence, "/data1 type ext4")) << f.title;
  r.workload.file = "/data1/f";
  const auto d = diagnose_with(m, {r});
  const Finding* on = find_titled(d, "data=writeback");
  ASSERT_NE(on, nullptr);
  EXPECT_EQ(on->title, "cuFile in compat mode: ext4 mount /data1 uses data=writeback, GDS "
                       "supports ext4 in ordered mode only");
}

TEST(DoctorCompat, FileSystemNotGdsCapable) {
  auto m = box();
  m.host.mounts = {"tmpfs /raid tmpfs rw 0 0"};
  const auto d = diagnose_with(m, {cufile_run(2.0, nvfs_facts(false))});
  const Finding* f = find_rule(d, "compat-mode");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "cuFile in compat mode: file system tmpfs is not GDS-capable");
  EXPECT_EQ(f->confidence, Confidence::Likely);
}

TEST(DoctorCompat, ODirectRefused) {
  auto facts = nvfs_facts(false);
  facts.log_lines = {"ERROR cufio:310 open with O_DIRECT failed: Invalid argument"};
  const auto d = diagnose_with(box(), {cufile_run(2.0, facts)});
  const Finding* f = find_titled(d, "O_DIRECT");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f->evidence, "O_DIRECT failed"));
}

TEST(DoctorCompat, ODirectNamedWithoutARefusalIsNoCause) {
  auto facts = nvfs_facts(false);
  facts.log_lines = {"an O_DIRECT open of /raid/f succeeded here, so the file system accepts "
                     "O_DIRECT"};
  for (const auto& f : diagnose_with(box(), {cufile_run(2.0, facts)}).findings)
    EXPECT_EQ(f.title.find("refused O_DIRECT"), std::string::npos) << f.title;
}

// gdsb-io's hint after it checked the file's device (gdsb/gpu/cufile_errors.hpp).
TEST(DoctorCompat, FailedRegistrationOnNoBlockDevice) {
  const RunResult x0 = not_run(
      XferType::GpuDirect, RunStatus::Failed,
      "cuFileHandleRegister on /mnt/ram/f failed: CU_FILE_HANDLE_NOT_REGISTERED (5027)\n  hint: "
      "/mnt/ram/f lies on device 0:45 (tmpfs), which is no block device (/sys/dev/block/0:45 "
      "does not exist): cuFile finds a file's file system through the udev record of its block "
      "device, so it cannot register this file");
  const auto d = diagnose_with(box(), {run(XferType::CpuOnly, 13.0), x0});
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().title, "cuFile failed to open the file: it lies on no block device");
  EXPECT_EQ(find_titled(d, "udev database is missing"), nullptr);
  EXPECT_EQ(find_titled(d, "O_DIRECT"), nullptr);
}

TEST(DoctorCompat, ApplicationWithoutCufile) {
  const RunResult x0 = not_run(
      XferType::GpuDirect, RunStatus::Waived,
      "cuFile library libcufile.so.0 could not be loaded (libcufile.so.0: cannot open shared "
      "object file): install NVIDIA GPUDirect Storage");
  const auto d = diagnose_with(box(), {run(XferType::CpuOnly, 13.0), x0});
  const Finding* f = find_rule(d, "cufile-missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(contains(f->fix, "libcufile"));
}

TEST(DoctorCompat, UnalignedOffsetsGoThroughBounceBuffers) {
  RunResult x0 = cufile_run(3.0, nvfs_facts(true));
  x0.workload.start_offset = 512;
  const auto d = diagnose_with(box(), {x0});
  EXPECT_EQ(x0.path.path_used, "gds-nvfs");
  const Finding* f = find_rule(d, "unaligned-io");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Likely);  // 3.2 GB/s of a 15.8 GB/s ceiling
  EXPECT_TRUE(any_contains(f->evidence, "start offset 512"));
}

TEST(DoctorCompat, CompatAndAcsRedirectRankCompatFirst) {
  auto m = box();
  m.host.nvidia_fs = false;
  fx::find(m, "0000:02:01.0")->acs_ctl = 0x001d;  // redirect above nvme 04:00.0
  fx::find(m, "0000:02:02.0")->acs_ctl = 0x001d;  // and above 05:00.0
  const auto d = diagnose_with(m, {cufile_run(2.4, no_nvfs_facts())});
  ASSERT_GE(d.findings.size(), 3U);
  EXPECT_EQ(d.findings[0].rule, "compat-mode");  // binds now
  EXPECT_EQ(d.findings[1].rule, "acs-redirect");  // binds once GDS runs
  EXPECT_EQ(d.findings[1].impact_gb_s, 0);
  EXPECT_TRUE(contains(d.findings[1].expected, "matters once cuFile runs GDS"));
}

}  // namespace
}  // namespace gdsb::doctor::testing
