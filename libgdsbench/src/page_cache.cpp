#include "gdsb/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace gdsb {

namespace {

// cachestat(2) (Linux 6.5): counts the cached pages of a range by walking only the pages
// that are there, so a run over a whole drive costs what is cached, not what it covers.
// Declared here: Debian 12's kernel headers predate it.
constexpr long kCachestatSyscall = 451;  // the same number on every architecture
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

std::optional<uint64_t> cachestat_pages(int fd, uint64_t begin, uint64_t end) {
  CachestatRange range{begin, end - begin};
  Cachestat cs{};
  if (::syscall(kCachestatSyscall, fd, &range, &cs, 0U) != 0) return std::nullopt;
  return cs.nr_cache;
}

// mmap + mincore where cachestat is missing: a window at a time, so the vector stays small.
std::optional<uint64_t> mincore_pages(int fd, uint64_t begin, uint64_t end, uint64_t page) {
  constexpr uint64_t kWindow = 1ULL << 30;
  std::vector<unsigned char> vec(kWindow / page);
  uint64_t pages = 0;
  for (uint64_t at = begin; at < end; at += kWindow) {
    const auto bytes = static_cast<std::size_t>(std::min(kWindow, end - at));
    void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
    if (map == MAP_FAILED) return std::nullopt;
    const int rc = ::mincore(map, bytes, vec.data());
    ::munmap(map, bytes);
    if (rc != 0) return std::nullopt;
    for (std::size_t i = 0; i < (bytes + page - 1) / page; ++i) pages += vec[i] & 1U;
  }
  return pages;
}

}  // namespace

std::optional<uint64_t> page_cache_bytes(int fd, uint64_t offset, uint64_t length) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // A regular file's pages end with the file; a block device has no st_size, so its
  // range must be given.
  uint64_t end = length == 0 ? static_cast<uint64_t>(st.st_size) : offset + length;
  if (S_ISREG(st.st_mode)) end = std::min(end, static_cast<uint64_t>(st.st_size));
  if (end <= offset) return std::nullopt;
  const uint64_t begin = offset - offset % page;  // whole pages, as the cache holds them
  std::optional<uint64_t> pages = cachestat_pages(fd, begin, end);
  if (!pages) pages = mincore_pages(fd, begin, end, page);
  if (!pages) return std::nullopt;
  return std::min<uint64_t>(*pages * page, end - offset);
}

bool drop_from_page_cache(int fd, uint64_t offset, uint64_t length, bool sync) {
  if (sync && ::fdatasync(fd) != 0) return false;
  const int err = ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                                  POSIX_FADV_DONTNEED);
  if (err != 0) errno = err;
  return err == 0;
}

}  // namespace gdsb
