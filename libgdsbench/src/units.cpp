#include "gdsb/units.hpp"

#include <algorithm>
#include <charconv>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <cctype>
#include <cstdio>
#include <limits>

#include "gdsb/error.hpp"

namespace gdsb {
namespace {

constexpr std::string_view kAccepted =
    "a whole number of bytes with an optional K, M, G or T suffix (base 1024), e.g. 4096, "
    "4K, 1M, 2G";

[[noreturn]] void bad_size(std::string_view text, std::string_view what, std::string_view why) {
  throw UsageError(std::string(what) + ": '" + std::string(text) + "' is not a size (" +
                   std::string(why) + "); expected " + std::string(kAccepted));
}

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

uint64_t parse_size(std::string_view text, std::string_view what) {
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  const std::size_t digits_begin = i;
  uint64_t value = 0;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const auto d = static_cast<uint64_t>(text[i] - '0');
    if (value > (kMax - d) / 10) bad_size(text, what, "too large");
    value = value * 10 + d;
  }
  if (i == digits_begin) bad_size(text, what, text.empty() ? "empty" : "no leading number");
  unsigned shift = 0;
  if (i < text.size()) {
    switch (lower(text[i])) {
      case 'k':
        shift = 10;
        ++i;
        break;
      case 'm':
        shift = 20;
        ++i;
        break;
      case 'g':
        shift = 30;
        ++i;
        break;
      case 't':
        shift = 40;
        ++i;
        break;
      default:
        break;
    }
  }
  std::string_view rest = text.substr(i);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  const bool iec_suffix =
      shift != 0 && rest.size() == 2 && lower(rest[0]) == 'i' && lower(rest[1]) == 'b';
  const bool byte_suffix = rest.size() == 1 && lower(rest[0]) == 'b';
  if (iec_suffix || byte_suffix) rest = {};
  if (!rest.empty()) bad_size(text, what, "unknown suffix '" + std::string(rest) + "'");
  if (shift != 0 && value > (kMax >> shift)) bad_size(text, what, "too large");
  return value << shift;
}

bool is_size_range(std::string_view text) { return text.find(':') != std::string_view::npos; }

SizeRange parse_size_range(std::string_view text, std::string_view what) {
  if (!is_size_range(text)) {
    const uint64_t v = parse_size(text, what);
    return {v, v, 0};
  }
  const std::string w(what);
  const std::string t(text);
  const auto c1 = text.find(':');
  const auto c2 = text.find(':', c1 + 1);
  if (c2 == std::string_view::npos || text.find(':', c2 + 1) != std::string_view::npos) {
    throw UsageError(w + ": '" + t + "' is not a size range; expected min:max:step, e.g. 4K:1M:4K");
  }
  const std::array<std::string_view, 3> parts{text.substr(0, c1), text.substr(c1 + 1, c2 - c1 - 1),
                                              text.substr(c2 + 1)};
  SizeRange r{parse_size(parts[0], w + " (min)"), parse_size(parts[1], w + " (max)"),
              parse_size(parts[2], w + " (step)")};
  if (r.min == 0) throw UsageError(w + ": '" + t + "': the minimum size must be above 0");
  if (r.min > r.max) throw UsageError(w + ": '" + t + "': min is larger than max");
  if (r.step == 0 && r.min != r.max) {
    throw UsageError(w + ": '" + t + "': step must be above 0 when min < max");
  }
  if (r.step != 0 && (r.max - r.min) / r.step + 1 > kMaxRangeSizes) {
    throw UsageError(w + ": '" + t + "' expands to more than " + std::to_string(kMaxRangeSizes) +
                     " sizes; use a larger step");
  }
  return r;
}

std::vector<uint64_t> expand_size_range(const SizeRange& range) {
  std::vector<uint64_t> out;
  if (range.step == 0 || range.min >= range.max) {
    out.push_back(range.min);
    return out;
  }
  for (uint64_t v = range.min; v <= range.max; v += range.step) {
    out.push_back(v);
    if (range.max - v < range.step) break;  // next step would pass max (or overflow)
  }
  return out;
}

double parse_rate(std::string_view text, std::string_view what) {
  std::string t;
  for (const char c : text)
    if (c != ' ' && c != '\t') t += c;
  const std::string shown = std::string(what) + ": '" + std::string(text) + "'";
  const std::string forms =
      "; expected a number and a unit of bytes (GB/s, MB/s, GiB/s, ...) or of bits (Gb/s, Mb/s, "
      "Gbit/s, ...), e.g. 2GB/s or 100Gb/s (= 12.5 GB/s)";
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    throw UsageError(shown + " does not start with a number" + forms);
  }
  if (!std::isfinite(v)) throw UsageError(shown + " is not a finite number" + forms);
  const std::string unit = t.substr(used);
  if (unit.empty()) return v;  // bytes per second
  const bool per_second = unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
  const std::string base = per_second ? unit.substr(0, unit.size() - 2) : "";
  // The quantity (B, b or "bit") and the prefix before it.
  enum class Quantity { None, Bytes, Bits, BitWord } q = Quantity::None;
  std::string prefix;
  if (base.size() >= 3 && lower(base[base.size() - 3]) == 'b' && lower(base[base.size() - 2]) == 'i' &&
      lower(base.back()) == 't') {
    q = Quantity::BitWord;
    prefix = base.substr(0, base.size() - 3);
  } else if (!base.empty() && (base.back() == 'B' || base.back() == 'b')) {
    q = base.back() == 'B' ? Quantity::Bytes : Quantity::Bits;
    prefix = base.substr(0, base.size() - 1);
  }
  std::string lower_prefix;
  for (const char c : prefix) lower_prefix += lower(c);
  constexpr std::array<std::pair<std::string_view, double>, 5> kDecimal{
      {{"", 1}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}}};
  constexpr std::array<std::pair<std::string_view, double>, 4> kBinary{
      {{"ki", 1024.0}, {"mi", 1048576.0}, {"gi", 1073741824.0}, {"ti", 1099511627776.0}}};
  const auto factor = [](const auto& table, std::string_view p) -> std::optional<double> {
    for (const auto& [name, f] : table)
      if (p == name) return f;
    return std::nullopt;
  };
  std::optional<double> f;
  if (q == Quantity::Bytes) {
    f = factor(kDecimal, lower_prefix);
    if (!f) f = factor(kBinary, lower_prefix);
  } else if (q == Quantity::BitWord) {
    if (const auto d = factor(kDecimal, lower_prefix)) f = *d / 8;
  } else if (q == Quantity::Bits) {
    // SI's k, M, G, T (and K) before a lowercase b: bits. A lowercase m, g or t (no SI prefix
    // of a rate) or a binary prefix says neither.
    if (prefix == "m" || prefix == "g" || prefix == "t" || factor(kBinary, lower_prefix)) {
      const std::string upper(1, static_cast<char>(std::toupper(static_cast<unsigned char>(prefix[0]))));
      throw UsageError(shown + ": '" + unit + "' could be bytes or bits; write " + upper + lower_prefix.substr(1) +
                       "B/s for bytes or " + upper + "b/s for bits (100 Gb/s = 12.5 GB/s)");
    }
    if (const auto d = factor(kDecimal, lower_prefix)) f = *d / 8;
  }
  if (!f) throw UsageError(shown + ": unknown unit '" + unit + "'" + forms);
  const double bytes = v * *f;
  if (!std::isfinite(bytes)) throw UsageError(shown + " is too large");
  return bytes;
}

std::string format_size(uint64_t bytes) {
  constexpr std::array<std::pair<unsigned, char>, 4> kUnits{
      {{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}}};
  for (const auto& [shift, suffix] : kUnits) {
    const uint64_t unit = uint64_t{1} << shift;
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes >> shift) + suffix;
  }
  return std::to_string(bytes);
}

std::string format_bytes_iec(double bytes) {
  constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (bytes >= 1024.0 && u + 1 < kUnits.size()) {
    bytes /= 1024.0;
    ++u;
  }
  std::array<char, 48> buf{};
  if (u == 0) {
    (void)std::snprintf(buf.data(), buf.size(), "%.0f B", bytes);
  } else {
    (void)std::snprintf(buf.data(), buf.size(), "%.2f %s", bytes, kUnits[u]);
  }
  return buf.data();
}

std::string format_fixed(double v, int digits) {
  digits = std::max(digits, 0);
  // The usual figure fits a small buffer: to_chars writes what printf's %.*f writes (the
  // standard says so), without printf's cost (a row per node of a fleet's page).
  char b[64];
  if (const auto [end, ec] = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, digits); ec == std::errc())
    return std::string(b, end);
  // Measure first, so no value is cut short (1e308 has 309 digits before the point).
  const int n = std::snprintf(nullptr, 0, "%.*f", digits, v);
  if (n <= 0) return {};
  std::string out(static_cast<std::size_t>(n), '\0');
  // n + 1 bytes: the string's own terminator takes snprintf's '\0'.
  (void)std::snprintf(out.data(), out.size() + 1, "%.*f", digits, v);
  return out;
}

}  // namespace gdsb
