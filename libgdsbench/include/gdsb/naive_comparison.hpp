// Why a checkpoint load took longer than the naive load of the same shards (issue 35: on one
// virtual disk, -x 2 and even -x 1 took 1.1-1.6x the naive load's time). Read off the run's
// own figures: the naive load's page-cache state first, then, for the bounce paths, where
// each I/O's time went (storage read against the copy to the GPU: docs/gpu-paths.md "Phases").
#pragma once

#include <optional>
#include <span>
#include <string>

#include "gdsb/result.hpp"

namespace gdsb {

struct SlowerThanNaive {
  double naive_over_load = 0;           // naive time / load time (< 1: the naive load won)
  std::optional<double> storage_share;  // storage / (storage + copy + wait) over the load's I/Os
  // "page_cache" (the naive load read cached data), "storage_direct_reads" (the load's
  // O_DIRECT reads were the time), "storage_reads" (its other reads were), "copies" (the
  // copies to the GPU were), "unknown" (no phase timing on this path).
  std::string cause;
  std::string why;  // one sentence, for the text report
};

// Storage time above this share of a bounce I/O means the storage read, not the GPU path,
// set the load's time.
inline constexpr double kStorageBoundShare = 0.9;
// The naive load "read memory" when at least this share of the shards was resident.
inline constexpr double kNaiveCachedShare = 0.5;

// nullopt unless naive_over_load < 1. `load_runs`: the load's runs (one a GPU); runs that
// did not end Ok are skipped. `naive_cached_share`: resident share of the shards before the
// naive load (nullopt: unknown).
std::optional<SlowerThanNaive> slower_than_naive(std::span<const RunResult> load_runs,
                                                 std::optional<double> naive_cached_share,
                                                 double naive_over_load);

}  // namespace gdsb
