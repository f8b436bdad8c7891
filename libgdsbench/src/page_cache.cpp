#include "gdsb/page_cache.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace gdsb {

std::optional<uint64_t> page_cache_bytes(int fd, uint64_t offset, uint64_t length) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  // A regular file's pages end with the file; a block device has no st_size, so its
  // range must be given.
  uint64_t end = length == 0 ? static_cast<uint64_t>(st.st_size) : offset + length;
  if (S_ISREG(st.st_mode)) end = std::min(end, static_cast<uint64_t>(st.st_size));
  if (end <= offset) return std::nullopt;
  const uint64_t begin = offset - offset % page;  // mmap wants a page-aligned offset
  const auto bytes = static_cast<std::size_t>(end - begin);
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(begin));
  if (map == MAP_FAILED) return std::nullopt;
  std::vector<unsigned char> vec((bytes + page - 1) / page);
  std::optional<uint64_t> resident;
  if (::mincore(map, bytes, vec.data()) == 0) {
    uint64_t pages = 0;
    for (unsigned char v : vec) pages += v & 1U;
    resident = std::min<uint64_t>(pages * page, end - offset);
  }
  ::munmap(map, bytes);
  return resident;
}

bool drop_from_page_cache(int fd, uint64_t offset, uint64_t length, bool sync) {
  if (sync && ::fdatasync(fd) != 0) return false;
  const int err = ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length),
                                  POSIX_FADV_DONTNEED);
  if (err != 0) errno = err;
  return err == 0;
}

}  // namespace gdsb
