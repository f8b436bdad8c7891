#include "gdsb/verify.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <string>

#include "gdsb/error.hpp"
#include "gdsb/offsets.hpp"

namespace gdsb {
namespace {

uint64_t pattern_key(uint64_t seed) noexcept { return mix64(seed ^ 0x6764736276657269ULL); }

uint64_t pattern_word(uint64_t word_index, uint64_t key) noexcept {
  return mix64(word_index ^ key);
}

std::byte pattern_byte(uint64_t pos, uint64_t key) noexcept {
  return static_cast<std::byte>(pattern_word(pos / 8, key) >> (8 * (pos % 8)));
}

void store_le(std::byte* dst, uint64_t v) noexcept {
  if constexpr (std::endian::native != std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(dst, &v, sizeof v);
}

std::string hex_bytes(const std::byte* p, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned>(p[i]);
    if (i != 0) s += ' ';
    s += kDigits[b >> 4];
    s += kDigits[b & 15U];
  }
  return s;
}

}  // namespace

void fill_pattern(std::span<std::byte> out, uint64_t file_offset, uint64_t seed) noexcept {
  const uint64_t key = pattern_key(seed);
  std::size_t i = 0;
  uint64_t pos = file_offset;
  while (i < out.size() && pos % 8 != 0) out[i++] = pattern_byte(pos++, key);
  for (; i + 8 <= out.size(); i += 8, pos += 8)
    store_le(out.data() + i, pattern_word(pos / 8, key));
  while (i < out.size()) out[i++] = pattern_byte(pos++, key);
}

std::size_t find_pattern_mismatch(std::span<const std::byte> data, uint64_t file_offset,
                                  uint64_t seed) noexcept {
  // Compare in chunks against a generated copy: memcmp is fast and the chunk stays in L1.
  std::array<std::byte, 4096> expected{};
  for (std::size_t done = 0; done < data.size();) {
    const std::size_t n = std::min(expected.size(), data.size() - done);
    fill_pattern(std::span(expected.data(), n), file_offset + done, seed);
    if (std::memcmp(expected.data(), data.data() + done, n) != 0) {
      for (std::size_t k = 0; k < n; ++k) {
        if (expected[k] != data[done + k]) return done + k;
      }
    }
    done += n;
  }
  return kNoMismatch;
}

void check_pattern(std::span<const std::byte> data, uint64_t file_offset, uint64_t seed,
                   std::string_view path) {
  const std::size_t at = find_pattern_mismatch(data, file_offset, seed);
  if (at == kNoMismatch) return;
  const std::size_t n = std::min<std::size_t>(16, data.size() - at);
  std::array<std::byte, 16> expected{};
  fill_pattern(std::span(expected.data(), n), file_offset + at, seed);
  throw VerificationError("verification failed: " + std::string(path) + " at offset " +
                          std::to_string(file_offset + at) + " (I/O at offset " +
                          std::to_string(file_offset) + ", byte " + std::to_string(at) +
                          "): expected " + hex_bytes(expected.data(), n) + ", found " +
                          hex_bytes(data.data() + at, n) + " (seed " + std::to_string(seed) + ")");
}

void fill_random(std::span<std::byte> out, uint64_t& state) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= out.size(); i += 8) store_le(out.data() + i, mix64(state++));
  if (i < out.size()) {
    const uint64_t w = mix64(state++);
    for (std::size_t k = 0; i < out.size(); ++i, ++k) out[i] = static_cast<std::byte>(w >> (8 * k));
  }
}

void fill_fixed(std::span<std::byte> out) noexcept {
  // A repeating, recognisable, non-zero pattern (so writes are never of zero pages).
  static constexpr std::array<unsigned char, 8> kFixed{'g', 'd', 's', 'b', 0xa5, 0x5a, 0xc3, 0x3c};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::byte>(kFixed[i % 8]);
}

}  // namespace gdsb
