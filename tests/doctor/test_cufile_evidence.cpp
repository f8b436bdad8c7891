// The doctor reads cuFile's evidence by message (issue 24): real cufile.log records
// (fixtures/cufile-log, origins in fixtures/SOURCES.md) and gdsb-io's own failure text
// (gdsb/gpu/cufile_errors.hpp describe_failure). A line that only mentions udev, BAR1 or
// 5036 makes no finding.
#include <fstream>

#include "doctor_test_util.hpp"
#include "gdsb/gpu/cufile_errors.hpp"

namespace gdsb::doctor::testing {
namespace {

fx::Machine box() { return fx::make_box(1, 1, 1, 2, 1); }  // GPU 03:00.0, NVMe 04/05:00.0

// The records of a recorded cufile.log as gdsb-io keeps them (filter_log_lines).
std::vector<std::string> log_of(const std::string& name) {
  std::ifstream in(std::string(GDSB_DOCTOR_FIXTURES) + "/cufile-log/" + name);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  EXPECT_FALSE(lines.empty()) << name;
  return gpu::filter_log_lines(lines, 12);
}

// A compat-mode cuFile run (nvidia-fs loaded, counters still) quoting these records.
RunResult compat_run_with(const std::vector<std::string>& log) {
  auto facts = nvfs_facts(false);
  facts.log_lines = log;
  return cufile_run(1.5, facts);
}

// A failed cuFile registration as gdsb-io reports it.
RunResult failed_registration(gpu::cufile::FailureContext c) {
  if (c.call.empty()) c.call = "cuFileHandleRegister";
  return not_run(XferType::GpuDirect, RunStatus::Failed, gpu::cufile::describe_failure(c));
}

// LVM: cuFile finds no ID_FS_USAGE for dm-0 while /run/udev/data exists. Not a missing
// database: a device udev records no file system for, said as likely, not certain.
TEST(DoctorCufileEvidence, UdevPropertyMissingOnDeviceMapperIsNoMissingDatabase) {
  const auto d = diagnose_with(box(), {compat_run_with(log_of("udev-property-dm0.log"))});
  EXPECT_EQ(find_titled(d, "udev database is missing"), nullptr);
  const Finding* f = find_titled(d, "no udev file-system record");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Likely);
  EXPECT_TRUE(any_contains(f->evidence, "udev property not found: ID_FS_USAGE dm-0"));
  EXPECT_TRUE(contains(f->fix, "device-mapper (LVM)"));
}

// The same records where the platform snapshot has no /run/udev/data: certain.
TEST(DoctorCufileEvidence, UdevLookupFailureWithoutTheDatabaseIsCertain) {
  auto m = box();
  m.host.udev = false;
  const auto d = diagnose_with(m, {compat_run_with(log_of("udev-property-dm0.log"))});
  const Finding* f = find_titled(d, "udev database is missing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f->evidence, "ID_FS_USAGE dm-0"));
  EXPECT_TRUE(any_contains(f->evidence, "/run/udev/data absent"));
}

// cuFile's udev scan of a NIC and the udev attributes of a healthy volume mention udev and
// report nothing wrong.
TEST(DoctorCufileEvidence, RecordsThatOnlyMentionUdevMakeNoUdevFinding) {
  const auto d = diagnose_with(box(), {compat_run_with(log_of("healthy-udev-mentions.log"))});
  for (const auto& f : d.findings) EXPECT_FALSE(contains(f.title, "udev")) << f.title;
}

// cuFile's udev_device error for device 0:53 (no block device) is that, not a udev fault.
TEST(DoctorCufileEvidence, UdevDeviceErrorOnMajorZeroIsNoBlockDevice) {
  gpu::cufile::FailureContext c;
  c.code = 5030;
  c.file = "/mnt/fs/f";
  c.udev_database_present = c.udev_record_present = true;
  c.log_lines = log_of("udev-device-major0.log");
  const auto d = diagnose_with(box(), {run(XferType::CpuOnly, 13.0), failed_registration(c)});
  const Finding* f = find_titled(d, "it lies on no block device");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(any_contains(f->evidence, "dev_no: 0:53"));
}

// gdsb-io checked the file's udev record and found it missing: certain.
TEST(DoctorCufileEvidence, GdsbIoHintOfAMissingUdevRecordIsCertain) {
  gpu::cufile::FailureContext c;
  c.code = 5030;
  c.file = "/raid/f";
  c.udev_database_present = true;
  c.udev_record_present = false;
  c.udev_record = "/run/udev/data/b259:0";
  const auto d = diagnose_with(box(), {run(XferType::CpuOnly, 13.0), failed_registration(c)});
  ASSERT_FALSE(d.findings.empty());
  EXPECT_EQ(d.findings.front().title,
            "cuFile failed to open the file: the udev database is missing");
  EXPECT_EQ(d.findings.front().confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(d.findings.front().evidence, "/run/udev/data/b259:0 is missing"));
}

// A file whose name holds 5036 failing for another reason is no BAR1 finding; the error
// CU_FILE_GPU_MEMORY_PINNING_FAILED (5036) and nvidia-fs's Inc-bar-usage record are.
TEST(DoctorCufileEvidence, Bar1FromTheErrorCodeAndTheRecordOnly) {
  gpu::cufile::FailureContext c;
  c.code = 5030;
  c.file = "/data/ckpt-5036-bar1.bin";
  c.udev_database_present = c.udev_record_present = true;
  EXPECT_EQ(find_rule(diagnose_with(box(), {failed_registration(c)}), "bar1"), nullptr);

  c.call = "cuFileBufRegister";
  c.code = 5036;
  const auto pinned = diagnose_with(box(), {failed_registration(c)});
  const Finding* f = find_rule(pinned, "bar1");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->confidence, Confidence::Certain);
  EXPECT_TRUE(any_contains(f->evidence, "CU_FILE_GPU_MEMORY_PINNING_FAILED (5036)"));

  const auto record = diagnose_with(box(), {compat_run_with(log_of("inc-bar-usage.log"))});
  f = find_rule(record, "bar1");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(any_contains(f->evidence, "Inc-bar-usage failed"));
}

}  // namespace
}  // namespace gdsb::doctor::testing
