#include <gtest/gtest.h>
#include <cstdio>

#include <limits>
#include <string>

#include "gdsb/error.hpp"
#include "gdsb/units.hpp"

namespace gdsb {
namespace {

TEST(ParseSize, PlainAndSuffixes) {
  EXPECT_EQ(parse_size("4096"), 4096U);
  EXPECT_EQ(parse_size("4K"), 4096U);
  EXPECT_EQ(parse_size("4k"), 4096U);
  EXPECT_EQ(parse_size("4KiB"), 4096U);
  EXPECT_EQ(parse_size("4kb"), 4096U);
  EXPECT_EQ(parse_size("1M"), 1048576U);
  EXPECT_EQ(parse_size("2G"), 2ULL << 30);
  EXPECT_EQ(parse_size("1T"), 1ULL << 40);
  EXPECT_EQ(parse_size("512B"), 512U);
  EXPECT_EQ(parse_size("0"), 0U);
}

TEST(ParseSize, RejectsWithMessageNamingTextAndOption) {
  for (const char* bad : {"", "abc", "4X", "K", "-1", "1.5M", "4KiBB", "1Mi", "99999999999T"}) {
    try {
      parse_size(bad, "-s");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("-s"), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("K, M, G or T"), std::string::npos) << msg;
    }
  }
}

// Rates: bytes with a B, bits with a b (NIC rates: 100 Gb/s = 12.5 GB/s), base 1000 unless
// the prefix says Ki/Mi/Gi/Ti; a bare number is bytes per second.
TEST(ParseRate, BytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_rate("2GB/s"), 2e9);
  EXPECT_DOUBLE_EQ(parse_rate("2 GB/s"), 2e9);
  EXPECT_DOUBLE_EQ(parse_rate("500MB/s"), 5e8);
  EXPECT_DOUBLE_EQ(parse_rate("1GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_rate("2e9"), 2e9);
  EXPECT_DOUBLE_EQ(parse_rate("100Gb/s"), 12.5e9);
  EXPECT_DOUBLE_EQ(parse_rate("25Gbit/s"), 3.125e9);
  EXPECT_DOUBLE_EQ(parse_rate("800kb/s"), 1e5);
  EXPECT_DOUBLE_EQ(parse_rate("8b/s"), 1);
  EXPECT_DOUBLE_EQ(parse_rate("1TB/s"), 1e12);
}

TEST(ParseRate, RefusesWhatCouldBeEitherAndWhatIsNoRate) {
  for (const char* t : {"100gb/s", "1mb/s", "1tb/s", "1Gib/s"}) {
    try {
      (void)parse_rate(t, "--demand-per-gpu");
      ADD_FAILURE() << t << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("could be bytes or bits"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--demand-per-gpu"), std::string::npos) << e.what();
    }
  }
  for (const char* t : {"fast", "2 furlongs", "2GB", "", "inf GB/s"}) EXPECT_THROW((void)parse_rate(t), UsageError) << t;
}

TEST(SizeRange, ParsesAndExpands) {
  const auto r = parse_size_range("4K:16K:4K");
  EXPECT_EQ(r.min, 4096U);
  EXPECT_EQ(r.max, 16384U);
  EXPECT_EQ(r.step, 4096U);
  EXPECT_EQ(expand_size_range(r), (std::vector<uint64_t>{4096, 8192, 12288, 16384}));
  EXPECT_EQ(expand_size_range(parse_size_range("4K:10K:4K")), (std::vector<uint64_t>{4096, 8192}));
  EXPECT_EQ(expand_size_range(parse_size_range("1M")), (std::vector<uint64_t>{1048576}));
  EXPECT_TRUE(is_size_range("1:2:1"));
  EXPECT_FALSE(is_size_range("1M"));
}

TEST(SizeRange, Rejects) {
  for (const char* bad :
       {"4K:1K:1K", "4K:8K", "4K:8K:0", "1:2:3:4", "0:4K:1K", "a:b:c", "1:1G:1"}) {
    EXPECT_THROW(parse_size_range(bad), UsageError) << bad;
  }
}

TEST(FormatSize, RoundTrips) {
  EXPECT_EQ(format_size(1048576), "1M");
  EXPECT_EQ(format_size(6144), "6K");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(0), "0");
  for (uint64_t v : {1ULL, 4096ULL, 12345ULL, 3ULL << 30, 5ULL << 40}) {
    EXPECT_EQ(parse_size(format_size(v)), v);
  }
  EXPECT_EQ(format_bytes_iec(100), "100 B");
  EXPECT_EQ(format_bytes_iec(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes_iec(3.0 * (1ULL << 30)), "3.00 GiB");
}

TEST(FormatFixed, DecimalsAndRounding) {
  EXPECT_EQ(format_fixed(2.5, 2), "2.50");
  EXPECT_EQ(format_fixed(1234.5678, 1), "1234.6");
  EXPECT_EQ(format_fixed(1234.56, 0), "1235");
  EXPECT_EQ(format_fixed(0.0, 3), "0.000");
  // Exact binary ties round to even, as printf does: 0.125 and 0.375 are exact.
  EXPECT_EQ(format_fixed(0.125, 2), "0.12");
  EXPECT_EQ(format_fixed(0.375, 2), "0.38");
  EXPECT_EQ(format_fixed(2.5, 0), "2");
  EXPECT_EQ(format_fixed(3.5, 0), "4");
  // 0.1 is a little above one tenth in binary, so 9 decimals show no trace of it.
  EXPECT_EQ(format_fixed(0.1, 9), "0.100000000");
  EXPECT_EQ(format_fixed(7.0, -3), "7");  // a negative digit count is 0, not printf's 6
}

TEST(FormatFixed, SignsNonFiniteAndLargeValues) {
  EXPECT_EQ(format_fixed(-12.345, 1), "-12.3");
  EXPECT_EQ(format_fixed(-0.4, 0), "-0");  // the sign survives rounding to zero, as in printf
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::infinity(), 2), "inf");
  EXPECT_EQ(format_fixed(-std::numeric_limits<double>::infinity(), 2), "-inf");
  EXPECT_EQ(format_fixed(std::numeric_limits<double>::quiet_NaN(), 2), "nan");
  // The old per-file copies wrote into 32-byte buffers and cut this short.
  const std::string big = format_fixed(1e40, 2);
  EXPECT_EQ(big.size(), 44U);
  EXPECT_EQ(big.substr(0, 2), "10");
  EXPECT_EQ(big.substr(big.size() - 3), ".00");
}

// format_fixed writes through to_chars when the figure fits 64 bytes, else printf: both
// must write what printf's %.*f writes, on either side of that length and for ties.
TEST(FormatFixed, WhatPrintfWrites) {
  const double values[] = {0.0, -0.0, 0.005, 0.015, 0.025, 1.005, 2.675, 1e-7, -1e-7, 53.249999999,
                           123456.789, 1e15 + 0.5, 9.999999e22, 1e40, -1e60, 1.7976931348623157e308,
                           4.9e-324, std::numeric_limits<double>::quiet_NaN()};
  for (double v : values)
    for (int digits : {0, 1, 2, 3, 6, 17, 40}) {
      char b[512];
      std::snprintf(b, sizeof b, "%.*f", digits, v);
      EXPECT_EQ(format_fixed(v, digits), b) << v << " with " << digits << " digits";
    }
}

}  // namespace
}  // namespace gdsb
