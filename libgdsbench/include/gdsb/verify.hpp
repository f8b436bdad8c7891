// Data patterns: -V writes bytes derived from (file offset, seed) and checks them on read,
// so any block can be checked on its own, in any order, by any thread. -R fills write
// buffers with seeded random bytes; without it they hold a fixed pattern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace gdsb {

// The -V pattern of file bytes [file_offset, file_offset + out.size()) for seed: byte p is
// byte (p % 8) (little-endian) of mix64(p / 8 ^ f(seed)).
void fill_pattern(std::span<std::byte> out, uint64_t file_offset, uint64_t seed) noexcept;

inline constexpr std::size_t kNoMismatch = static_cast<std::size_t>(-1);
// Index of the first byte of data that differs from the pattern, or kNoMismatch.
std::size_t find_pattern_mismatch(std::span<const std::byte> data, uint64_t file_offset,
                                  uint64_t seed) noexcept;

// Throws VerificationError naming the file, the offset of the first differing byte and up
// to 16 expected and found bytes from there (hex) when data is not the pattern.
void check_pattern(std::span<const std::byte> data, uint64_t file_offset, uint64_t seed,
                   std::string_view path);

// Seeded random bytes for -R; `state` advances so successive fills differ.
void fill_random(std::span<std::byte> out, uint64_t& state) noexcept;
// The fixed pattern used without -R and -V.
void fill_fixed(std::span<std::byte> out) noexcept;

}  // namespace gdsb
