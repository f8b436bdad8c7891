// Per-job statistics (gdsb-io -J): the figures the gdsio line leaves out, printed under
// it: latency percentiles, IOPS, CPU utilisation, the data path and how it was found.
#pragma once

#include <string>

#include "gdsb/result.hpp"

namespace gdsb::report {

// Indented lines, each ending with '\n'; empty for a run that measured nothing.
std::string job_stats(const RunResult& r);

}  // namespace gdsb::report
