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
// repetition; then one "warning: ..." line per path warning.
// Every line ends with '\n'.
std::string gdsio_block(const RunResult& r);

}  // namespace gdsb::report
