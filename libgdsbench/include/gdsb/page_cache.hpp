// The page cache and gdsbench's figures: how much of a file sits there (mmap + mincore),
// and leaving data out of it (fdatasync, then posix_fadvise(POSIX_FADV_DONTNEED)). The
// runner uses both so that no figure is the cache's by accident: the files gdsbench writes
// end on storage and out of the cache, a read run drops each range it has read before
// reading it again, and a file system that keeps data in memory whatever the advice
// (tmpfs, ramfs) is found by measuring what is left after the drop (docs/gdsb-io.md,
// "Page cache").
#pragma once

#include <cstdint>
#include <optional>

namespace gdsb {

// Bytes of [offset, offset + length) of the open file fd that sit in the page cache;
// length 0: to the end of the file. Counts whole pages, with cachestat(2) where the kernel
// has it (6.5), else mmap + mincore. nullopt where the kernel cannot tell (empty file, a
// descriptor opened for writing only where mincore is needed, mmap refused).
std::optional<uint64_t> page_cache_bytes(int fd, uint64_t offset = 0, uint64_t length = 0);

// Asks the kernel to drop [offset, offset + length) of fd from the page cache (length 0:
// to the end). With sync, fdatasync first: dirty pages cannot be dropped. Returns false
// when the kernel refused (errno says why); the advice may still be ignored (tmpfs), which
// only page_cache_bytes afterwards shows.
bool drop_from_page_cache(int fd, uint64_t offset, uint64_t length, bool sync);

// At or above this share of a range still resident right after drop_from_page_cache, the
// file system keeps the data in memory whatever the advice, and reads of it are the
// memory's, not the storage's.
inline constexpr double kResidentAfterDropLimit = 0.5;

}  // namespace gdsb
