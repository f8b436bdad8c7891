// gdsio's result line, byte for byte, so scripts that parse gdsio keep working:
//   IoType: READ XferType: CPUONLY Threads: 2 DataSetSize: 262144/262144(KiB) IOSize: 1024(KiB)
//   Throughput: 1.234567 GiB/sec, Avg_Latency: 1583.000000 usecs ops: 256 total_time 0.202500 secs
// (one line; batch types insert "IoDepth: N" after Threads). Throughput is base 1024.
#pragma once

#include <string>

#include "gdsb/result.hpp"

namespace gdsb::report {

// The line for an ok (or interrupted) run, without a trailing newline.
std::string gdsio_line(const RunResult& r);

// What default output prints for one job: the gdsio line, or "not available: <reason>"
// for a waived run, or "failed: <reason>"; with --repeat one "repetition i/N: ..." line per
// repetition; for a GDS run "path: gds-nvfs|gds-p2pdma (<the fact that decided it>)";
// then one "warning: ..." line per path warning (compat's names its cause).
// Every line ends with '\n'. Bounce-buffer runs (-x 2/3/4) add phases_text after the
// gdsio line.
std::string gdsio_block(const RunResult& r);

// Where the time of an I/O went (Measurement::phases), as lines ending with '\n':
//   phases: storage 195.0 us, copy 21.0 us (DMA 20.0 us), wait 3.0 us per I/O (means of N I/Os)
//   synchronous ceiling: storage 195.0 / (195.0 + 21.0) us x storage rate 25.10 GiB/s = ...
// (the second only for -x 2/-x 4 at --iodepth 1; docs/gpu-paths.md, "Phases").
std::string phases_text(const IoPhases& p);

}  // namespace gdsb::report
