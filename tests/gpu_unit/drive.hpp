// Test helpers: temporary files and a loop that drives a PathWorker the way the runner
// does (depth() requests in flight, submit/reap, load_slot before writes, read_slot after
// reads). Not a runner: no threads, statistics or timing beyond a total.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "gdsb/transfer_path.hpp"

namespace gdsb::gpu::testing {

inline std::byte pattern_byte(uint64_t offset, uint64_t seed) {
  uint64_t x = (offset / 8) * 0x9E3779B97F4A7C15ULL + seed * 0xD1B54A32D192ED03ULL;
  x ^= x >> 29;
  return static_cast<std::byte>((x >> ((offset % 8) * 8)) & 0xFF);
}

inline std::vector<std::byte> pattern(uint64_t offset, std::size_t len, uint64_t seed) {
  std::vector<std::byte> v(len);
  for (std::size_t i = 0; i < len; ++i) v[i] = pattern_byte(offset + i, seed);
  return v;
}

// A directory removed with everything in it when the object dies.
class TempDir {
 public:
  explicit TempDir(const char* parent_env = "GDSB_TEST_DIR") {
    const char* p = std::getenv(parent_env);
    std::string base = p != nullptr && *p != '\0' ? p : std::filesystem::temp_directory_path().string();
    std::string templ = base + "/gdsb-gpu-test-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed in " + base);
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Opens (creating, sized) a file as the runner would and closes it at the end.
class OpenFiles {
 public:
  OpenFiles(const std::vector<std::string>& paths, uint64_t size, bool odirect, bool fill_pattern,
            uint64_t seed = 7) {
    set_.odirect = odirect;
    for (const auto& p : paths) {
      if (fill_pattern) {
        const int wfd = ::open(p.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (wfd < 0) throw std::runtime_error("cannot create " + p);
        const auto data = pattern(0, size, seed);
        if (::pwrite(wfd, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) {
          throw std::runtime_error("cannot fill " + p);
        }
        ::fsync(wfd);
        ::close(wfd);
      }
      const int fd = ::open(p.c_str(), O_CREAT | O_RDWR | (odirect ? O_DIRECT : 0), 0644);
      if (fd < 0) throw std::runtime_error("cannot open " + p + ": " + std::strerror(errno));
      if (!fill_pattern && ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        throw std::runtime_error("cannot size " + p);
      }
      set_.paths.push_back(p);
      set_.fds.push_back(fd);
    }
  }
  ~OpenFiles() {
    for (int fd : set_.fds) ::close(fd);
  }
  OpenFiles(const OpenFiles&) = delete;
  OpenFiles& operator=(const OpenFiles&) = delete;
  const FileSet& set() const { return set_; }

 private:
  FileSet set_;
};

struct DriveResult {
  uint64_t ops = 0;
  uint64_t bytes = 0;
  uint64_t verify_errors = 0;
  double seconds = 0;       // without pattern generation and verification, as the runner
  double wall_seconds = 0;  // everything, worker calls and checks included
};

// One sequential pass over [0, size) of file `file` in io_size requests.
inline DriveResult drive(PathWorker& w, IoDir dir, uint64_t size, uint32_t io_size,
                         bool verify, uint64_t seed = 7, uint32_t file = 0) {
  DriveResult r;
  const uint32_t depth = w.depth();
  std::vector<uint64_t> slot_offset(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t i = depth; i-- > 0;) free_slots.push_back(i);
  std::vector<IoCompletion> done(depth);
  std::vector<std::byte> check(io_size);
  uint64_t next = 0;
  uint32_t in_flight = 0;
  // Like the runner, pattern generation and verification are outside the timed region.
  std::chrono::steady_clock::duration untimed{0};
  const auto t0 = std::chrono::steady_clock::now();
  while (next < size || in_flight > 0) {
    std::vector<IoRequest> batch;
    while (next < size && !free_slots.empty()) {
      const uint32_t slot = free_slots.back();
      free_slots.pop_back();
      IoRequest q;
      q.tag = slot;
      q.file = file;
      q.offset = next;
      q.length = static_cast<uint32_t>(std::min<uint64_t>(io_size, size - next));
      q.dir = dir;
      q.slot = slot;
      if (dir == IoDir::Write) {
        const auto v0 = std::chrono::steady_clock::now();
        w.load_slot(slot, pattern(next, q.length, seed));
        untimed += std::chrono::steady_clock::now() - v0;
      }
      slot_offset[slot] = next;
      next += q.length;
      batch.push_back(q);
    }
    if (!batch.empty()) {
      w.submit(batch);
      in_flight += static_cast<uint32_t>(batch.size());
    }
    const std::size_t n = w.reap(done, 1);
    for (std::size_t i = 0; i < n; ++i) {
      const auto slot = static_cast<uint32_t>(done[i].tag);
      if (done[i].result < 0) {
        throw std::runtime_error("I/O failed at offset " + std::to_string(slot_offset[slot]) +
                                 ": " + std::strerror(static_cast<int>(-done[i].result)));
      }
      const auto len = static_cast<std::size_t>(done[i].result);
      if (dir == IoDir::Read && verify) {
        const auto v0 = std::chrono::steady_clock::now();
        w.read_slot(slot, std::span<std::byte>(check.data(), len));
        const auto want = pattern(slot_offset[slot], len, seed);
        if (std::memcmp(want.data(), check.data(), len) != 0) ++r.verify_errors;
        untimed += std::chrono::steady_clock::now() - v0;
      }
      r.bytes += len;
      ++r.ops;
      free_slots.push_back(slot);
      --in_flight;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0 - untimed).count();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// Whether the file holds the pattern (after a write pass).
inline bool file_has_pattern(const std::string& path, uint64_t size, uint64_t seed = 7) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  std::vector<std::byte> got(size);
  const ssize_t n = ::pread(fd, got.data(), size, 0);
  ::close(fd);
  return n == static_cast<ssize_t>(size) && got == pattern(0, size, seed);
}

}  // namespace gdsb::gpu::testing
