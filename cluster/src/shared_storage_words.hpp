// Words and small arithmetic the shared-storage files share (private to cluster/src): figures
// as the text and the judgements write them, the report order of ops, a median.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gdsb/units.hpp"
#include "gdsb/workload.hpp"

namespace gdsb::cluster::storage_words {

inline std::string signed_fixed(double v, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%+.*f", decimals, v);
  return b;
}
inline std::string sig3(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}
inline std::string gbs(double v) { return (v >= 100 ? format_fixed(v, 0) : v >= 10 ? format_fixed(v, 1) : sig3(v)) + " GB/s"; }
inline std::string secs(double v) { return (v >= 100 ? format_fixed(v, 0) : sig3(v)) + " s"; }

inline std::string mode_words(int mode) {
  const auto t = static_cast<XferType>(mode);
  return "-x " + std::to_string(mode) + " (" + std::string(xfer_label(t)) + ")";
}

// Ops in report order: what a checkpoint writes, then reads.
inline int op_order(const std::string& op) {
  if (op == "write") return 0;
  if (op == "read") return 1;
  if (op == "checkpoint-save") return 2;
  return 3;
}

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace gdsb::cluster::storage_words
