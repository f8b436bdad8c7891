// Host I/O workers on a temporary file: both engines move the right bytes, finish short
// transfers, report end of file and errors, and keep slots page aligned.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gdsb/host_buffer.hpp"
#include "gdsb/error.hpp"
#include "gdsb/host_io.hpp"
#include "io_uring_worker.hpp"
#include "test_support.hpp"

namespace gdsb {
namespace {

class HostIo : public ::testing::TestWithParam<SubmitEngine> {
 protected:
  void SetUp() override {
    if (GetParam() == SubmitEngine::IoUring) {
      const Availability a = probe_io_uring(4);
      if (!a.ok) GTEST_SKIP() << a.reason;
    }
    path = dir.file("f");
    fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
    ASSERT_GE(fd, 0);
    files.paths = {path};
    files.fds = {fd};
    files.odirect = false;
  }
  void TearDown() override {
    if (fd >= 0) ::close(fd);
  }
  std::vector<IoCompletion> run(HostIoWorker& w, std::vector<IoRequest> reqs) {
    w.submit(reqs);
    std::vector<IoCompletion> out(reqs.size());
    std::size_t got = 0;
    while (got < reqs.size()) got += w.reap(std::span(out).subspan(got), 1);
    return out;
  }
  // Each ring set-up that GDSB_IO_URING_TASKRUN (or `variable`) selects moves the same bytes.
  void ring_setup_moves_the_same_bytes(const char* setup, const char* variable = "GDSB_IO_URING_TASKRUN") {
    ::setenv(variable, setup, 1);
    std::unique_ptr<HostIoWorker> w;
    try {
      w = make_host_io_worker(SubmitEngine::IoUring, files, 4, 4096);
    } catch (...) {
      ::unsetenv(variable);
      throw;
    }
    ::unsetenv(variable);
    for (uint32_t s = 0; s < 4; ++s) std::memset(w->slot_data(s), 'k' + static_cast<int>(s), 4096);
    std::vector<IoRequest> writes;
    for (uint32_t s = 0; s < 4; ++s) writes.push_back({10 + s, 0, s * 4096ULL, 4096, IoDir::Write, s});
    for (const auto& c : run(*w, writes)) EXPECT_EQ(c.result, 4096);
    for (uint32_t s = 0; s < 4; ++s) std::memset(w->slot_data(s), 0, 4096);
    std::vector<IoRequest> reads;
    for (uint32_t s = 0; s < 4; ++s) reads.push_back({20 + s, 0, s * 4096ULL, 4096, IoDir::Read, s});
    w->submit(reads);
    // Polls (min 0) must make progress too: deferred completions are flushed by a poll.
    std::vector<IoCompletion> out(4);
    std::size_t got = 0;
    // A polling kernel thread needs a CPU to run on: give it one between polls (up to 5 s).
    for (int i = 0; i < 50000 && got < 4; ++i) {
      got += w->reap(std::span(out).subspan(got), 0);
      if (got < 4) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    EXPECT_EQ(got, 4U) << w->describe();
    for (uint32_t s = 0; s < 4; ++s) EXPECT_EQ(static_cast<char>(w->slot_data(s)[100]), 'k' + static_cast<int>(s));
  }
  test::TempDir dir;
  std::string path;
  int fd = -1;
  FileSet files;
};

TEST_P(HostIo, WritesAndReadsBackThroughSlots) {
  auto w = make_host_io_worker(GetParam(), files, 4, 8192);
  ASSERT_EQ(w->depth(), GetParam() == SubmitEngine::IoUring ? 4U : 4U);
  for (uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w->slot_data(s)) % 4096, 0U);
    std::memset(w->slot_data(s), 'a' + static_cast<int>(s), 8192);
  }
  std::vector<IoRequest> writes;
  for (uint32_t s = 0; s < 4; ++s)
    writes.push_back({100 + s, 0, s * 8192ULL, 8192, IoDir::Write, s});
  for (const auto& c : run(*w, writes)) EXPECT_EQ(c.result, 8192);
  for (uint32_t s = 0; s < 4; ++s) std::memset(w->slot_data(s), 0, 8192);
  std::vector<IoRequest> reads;
  for (uint32_t s = 0; s < 4; ++s)
    reads.push_back({200 + s, 0, (3 - s) * 8192ULL, 8192, IoDir::Read, s});
  std::vector<uint64_t> tags;
  for (const auto& c : run(*w, reads)) {
    EXPECT_EQ(c.result, 8192);
    tags.push_back(c.tag);
  }
  std::sort(tags.begin(), tags.end());
  EXPECT_EQ(tags, (std::vector<uint64_t>{200, 201, 202, 203}));
  for (uint32_t s = 0; s < 4; ++s) {
    EXPECT_EQ(static_cast<char>(w->slot_data(s)[0]), 'a' + static_cast<int>(3 - s));
    EXPECT_EQ(static_cast<char>(w->slot_data(s)[8191]), 'a' + static_cast<int>(3 - s));
  }
  std::vector<std::byte> copy(8192);
  w->read_slot(1, copy);
  EXPECT_EQ(static_cast<char>(copy[5]), 'c');
  EXPECT_FALSE(w->describe().empty());
}

TEST_P(HostIo, ReadPastEndOfFileIsShortAndBadFdIsAnError) {
  ASSERT_EQ(::pwrite(fd, "0123456789", 10, 0), 10);
  auto w = make_host_io_worker(GetParam(), files, 1, 4096);
  auto c = run(*w, {{7, 0, 4, 4096, IoDir::Read, 0}});
  EXPECT_EQ(c[0].tag, 7U);
  EXPECT_EQ(c[0].result, 6);
  EXPECT_EQ(std::memcmp(w->slot_data(0), "456789", 6), 0);
  c = run(*w, {{8, 0, 100, 4096, IoDir::Read, 0}});
  EXPECT_EQ(c[0].result, 0);
  FileSet ro = files;
  const int rfd = ::open(path.c_str(), O_RDONLY);
  ro.fds = {rfd};
  auto r = make_host_io_worker(GetParam(), ro, 1, 4096);
  c = run(*r, {{9, 0, 0, 4096, IoDir::Write, 0}});
  EXPECT_EQ(c[0].result, -EBADF);
  ::close(rfd);
}

TEST_P(HostIo, DeferredTaskWorkRingMovesTheSameBytes) {
  if (GetParam() != SubmitEngine::IoUring) GTEST_SKIP() << "io_uring only";
  ring_setup_moves_the_same_bytes("defer");
}

TEST_P(HostIo, CooperativeTaskWorkRingMovesTheSameBytes) {
  if (GetParam() != SubmitEngine::IoUring) GTEST_SKIP() << "io_uring only";
  ring_setup_moves_the_same_bytes("coop");
}

TEST_P(HostIo, WaitsCountedAsIoWaitMoveTheSameBytes) {
  if (GetParam() != SubmitEngine::IoUring) GTEST_SKIP() << "io_uring only";
  ring_setup_moves_the_same_bytes("iowait", "GDSB_IO_URING_WAIT");
}

TEST_P(HostIo, RequestsEnteredInBatchesMoveTheSameBytes) {
  if (GetParam() != SubmitEngine::IoUring) GTEST_SKIP() << "io_uring only";
  ring_setup_moves_the_same_bytes("batch", "GDSB_IO_URING_SUBMIT");
}

TEST_P(HostIo, SubmissionPollingRingMovesTheSameBytes) {
  if (GetParam() != SubmitEngine::IoUring) GTEST_SKIP() << "io_uring only";
  ring_setup_moves_the_same_bytes("sqpoll");
}

TEST(UringTaskrun, ParsesTheEnvironmentValueAndNamesABadOne) {
  EXPECT_EQ(detail::parse_uring_taskrun(nullptr), detail::UringTaskrun::Defer);
  EXPECT_EQ(detail::parse_uring_taskrun(""), detail::UringTaskrun::Defer);
  EXPECT_EQ(detail::parse_uring_taskrun("coop"), detail::UringTaskrun::Coop);
  EXPECT_EQ(detail::parse_uring_taskrun("defer"), detail::UringTaskrun::Defer);
  EXPECT_EQ(detail::parse_uring_taskrun("sqpoll"), detail::UringTaskrun::Sqpoll);
  try {
    detail::parse_uring_taskrun("poll");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("GDSB_IO_URING_TASKRUN=poll"), std::string::npos) << e.what();
  }
}

TEST(UringWait, ParsesTheEnvironmentValueAndNamesABadOne) {
  EXPECT_EQ(detail::parse_uring_wait(nullptr), detail::UringWait::NoIowait);
  EXPECT_EQ(detail::parse_uring_wait("iowait"), detail::UringWait::Iowait);
  EXPECT_EQ(detail::parse_uring_wait("no-iowait"), detail::UringWait::NoIowait);
  try {
    detail::parse_uring_wait("sleep");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("GDSB_IO_URING_WAIT=sleep"), std::string::npos) << e.what();
  }
}

TEST(UringSubmit, ParsesTheEnvironmentValueAndNamesABadOne) {
  EXPECT_EQ(detail::parse_uring_submit(nullptr), detail::UringSubmit::Each);
  EXPECT_EQ(detail::parse_uring_submit(""), detail::UringSubmit::Each);
  EXPECT_EQ(detail::parse_uring_submit("batch"), detail::UringSubmit::Batch);
  EXPECT_EQ(detail::parse_uring_submit("each"), detail::UringSubmit::Each);
  try {
    detail::parse_uring_submit("some");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("GDSB_IO_URING_SUBMIT=some"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, HostIo,
                         ::testing::Values(SubmitEngine::Psync, SubmitEngine::IoUring),
                         [](const auto& param_info) {
                           return std::string(engine_name(param_info.param));
                         });

TEST(HostBuffer, AlignedZeroedMovable) {
  HostBuffer b(10000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 4096, 0U);
  EXPECT_EQ(b.size(), 10000U);
  EXPECT_EQ(b.data()[9999], std::byte{0});
  HostBuffer c = std::move(b);
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(c.size(), 10000U);
  HostBuffer bound(4096, 0);  // node 0 exists on every Linux machine
  EXPECT_NE(bound.data(), nullptr);
}

}  // namespace
}  // namespace gdsb
