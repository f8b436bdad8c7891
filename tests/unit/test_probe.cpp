// Probes say why a path cannot run. A child process blocks io_uring_setup with a seccomp
// filter (as container runtimes do) and checks the probe's reason and the runner's waiver.
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "gdsb/host_io.hpp"
#include "gdsb/runner.hpp"

namespace gdsb {
namespace {

bool block_io_uring_setup() {
  // Return EPERM for io_uring_setup, allow everything else.
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(offsetof(seccomp_data, nr))),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

TEST(Probe, IoUringRefusedBySeccompIsExplainedAndWaived) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!block_io_uring_setup()) _exit(77);
    const Availability a = probe_io_uring(32);
    if (a.ok) _exit(10);
    if (a.reason.find("io_uring_setup") == std::string::npos) _exit(11);
    if (a.reason.find("errno 1") == std::string::npos) _exit(12);
    if (a.reason.find("--engine psync") == std::string::npos) _exit(13);
    const PathRegistry registry = make_default_registry();
    Workload w;
    w.file = "/nonexistent/never-opened";
    w.io_size = 4096;
    w.engine = SubmitEngine::IoUring;
    w.iodepth = 32;
    const RunResult r = Runner(registry).run(w);
    if (r.status != RunStatus::Waived) _exit(14);
    if (r.reason != a.reason) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "seccomp filters are not available here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child check number " << WEXITSTATUS(status) << " failed";
}

TEST(Probe, CpuPathsAreListedAndGpuPathsWaivedInThisBuild) {
  const PathRegistry registry = make_default_registry();
  EXPECT_NE(registry.find(XferType::CpuOnly), nullptr);
  EXPECT_NE(registry.find(XferType::CpuCachedGpu), nullptr);
  const Runner runner(registry);
  Workload w;
  w.xfer = XferType::CpuOnly;
  EXPECT_TRUE(runner.probe(w).ok) << runner.probe(w).reason;
  if (registry.find(XferType::GpuDirect) == nullptr) {
    w.xfer = XferType::GpuDirect;
    EXPECT_FALSE(runner.probe(w).ok);
    EXPECT_FALSE(runner.probe(w).reason.empty());
  }
  EXPECT_TRUE(registry.find(XferType::CpuOnly)->needs_odirect(w));
  w.odirect = false;
  EXPECT_FALSE(registry.find(XferType::CpuOnly)->needs_odirect(w));
  w.odirect = true;
  EXPECT_FALSE(registry.find(XferType::CpuCachedGpu)->needs_odirect(w));
}

}  // namespace
}  // namespace gdsb
