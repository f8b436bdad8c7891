// Sizes as users type them (gdsio's K/M/G/T suffixes, base 1024) and as we print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gdsb {

// Parses a size: a whole number of bytes with an optional suffix K, M, G or T (base 1024,
// case-insensitive), optionally followed by "iB" or "B" ("4096", "4K", "4KiB", "1m",
// "2G"). `what` names the option or key in the error message (e.g. "-s").
// Throws UsageError naming the text and what is accepted.
uint64_t parse_size(std::string_view text, std::string_view what = "size");

// gdsio's -i min:max:step: sizes min, min+step, ... up to and including max.
struct SizeRange {
  uint64_t min = 0;
  uint64_t max = 0;
  uint64_t step = 0;  // 0 only when min == max
};

// The longest list a range may expand to; longer ranges are a usage error.
inline constexpr std::size_t kMaxRangeSizes = 4096;

// Accepts a single size ("1M", giving min == max) or "min:max:step" with sizes as in
// parse_size. Throws UsageError when the parts are not sizes, min > max, step is 0 with
// min < max, or the range expands to more than kMaxRangeSizes sizes.
SizeRange parse_size_range(std::string_view text, std::string_view what = "-i");
bool is_size_range(std::string_view text);  // whether text has the min:max:step form
std::vector<uint64_t> expand_size_range(const SizeRange& range);

// Parses a rate as users type it, into bytes per second: a number and a unit of bytes (B/s;
// kB/s, MB/s, GB/s, TB/s base 1000; KiB/s, MiB/s, GiB/s, TiB/s base 1024) or of bits, as
// network rates are written (b/s, kb/s, Mb/s, Gb/s, Tb/s or Gbit/s..., base 1000: 100 Gb/s =
// 12.5e9 B/s; docs/metrics.md). A bare number is bytes per second; spaces are ignored. The
// case of the b decides: "GB/s" bytes, "Gb/s" bits; "gb/s", "mb/s" or "tb/s", whose prefix
// is no SI prefix, could be either and are refused. Throws UsageError naming `what`, the text
// and the units accepted.
double parse_rate(std::string_view text, std::string_view what = "rate");

// Short exact form with the largest suffix that divides the value: 1048576 -> "1M",
// 6144 -> "6K", 1000 -> "1000". parse_size(format_size(x)) == x.
std::string format_size(uint64_t bytes);

// Human form with two decimals and an IEC unit: 1536 -> "1.50 KiB", 100 -> "100 B".
std::string format_bytes_iec(double bytes);

// `v` with exactly `digits` decimals, as printf's "%.*f" writes it in the C locale (the one
// fixed-point formatter every report shares): 2.5 -> "2.50" (2), 1234.56 -> "1235" (0).
// Ties that are exact in binary round to even (0.125 -> "0.12"); -0.4 with 0 digits reads
// "-0"; NaN and infinities read "nan", "-nan", "inf", "-inf". A negative `digits` counts as 0.
// Never truncates, however large `v` is.
std::string format_fixed(double v, int digits);

}  // namespace gdsb
