#include <gtest/gtest.h>

#include <vector>

#include "gdsb/error.hpp"
#include "gdsb/verify.hpp"

namespace gdsb {
namespace {

std::vector<std::byte> pattern(uint64_t off, std::size_t n, uint64_t seed) {
  std::vector<std::byte> v(n);
  fill_pattern(v, off, seed);
  return v;
}

TEST(Verify, PatternDependsOnOffsetAndSeedOnly) {
  EXPECT_EQ(pattern(4096, 4096, 1), pattern(4096, 4096, 1));
  EXPECT_NE(pattern(4096, 4096, 1), pattern(4096, 4096, 2));
  EXPECT_NE(pattern(4096, 4096, 1), pattern(8192, 4096, 1));
  // Any sub-range, aligned or not, is the same bytes as in the larger fill.
  const auto big = pattern(1000, 10000, 5);
  const auto part = pattern(1003, 4001, 5);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), big.begin() + 3));
}

TEST(Verify, CheckPassesOnPatternAndNamesFirstMismatch) {
  auto data = pattern(1 << 20, 8192, 9);
  EXPECT_EQ(find_pattern_mismatch(data, 1 << 20, 9), kNoMismatch);
  EXPECT_NO_THROW(check_pattern(data, 1 << 20, 9, "/tmp/x"));
  data[5000] ^= std::byte{0xff};
  data[6000] ^= std::byte{0x01};
  EXPECT_EQ(find_pattern_mismatch(data, 1 << 20, 9), 5000U);
  try {
    check_pattern(data, 1 << 20, 9, "/tmp/file.dat");
    FAIL() << "no error";
  } catch (const VerificationError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("/tmp/file.dat"), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset " + std::to_string((1 << 20) + 5000)), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected "), std::string::npos) << msg;
    EXPECT_NE(msg.find("found "), std::string::npos) << msg;
    const auto fixed = pattern((1 << 20) + 5000, 1, 9);
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(fixed[0] ^ std::byte{0xff}));
    EXPECT_NE(msg.find(std::string("found ") + hex), std::string::npos) << msg;
  }
}

TEST(Verify, MismatchInLastByteAndZeroes) {
  auto data = pattern(0, 4096, 0);
  data.back() ^= std::byte{1};
  EXPECT_EQ(find_pattern_mismatch(data, 0, 0), 4095U);
  std::vector<std::byte> zeros(4096);
  EXPECT_EQ(find_pattern_mismatch(zeros, 0, 0) < 8, true);
}

TEST(Verify, RandomFillAdvancesAndFixedIsNotZero) {
  std::vector<std::byte> a(100), b(100);
  uint64_t state = 1;
  fill_random(a, state);
  fill_random(b, state);
  EXPECT_NE(a, b);
  uint64_t again = 1;
  std::vector<std::byte> c(100);
  fill_random(c, again);
  EXPECT_EQ(a, c);
  std::vector<std::byte> f(64);
  fill_fixed(f);
  EXPECT_NE(f, std::vector<std::byte>(64));
}

}  // namespace
}  // namespace gdsb
