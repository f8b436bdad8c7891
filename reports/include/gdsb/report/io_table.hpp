// A human table of io runs (gdsb-io --format table, and the survey): throughput, IOPS,
// latency percentiles, CPU, status and the data path that really ran. Waived and failed
// runs keep their row; their reasons are listed under the table.
#pragma once

#include <span>
#include <string>

#include "gdsb/result.hpp"

namespace gdsb::report {

std::string io_table(std::span<const RunResult> runs);

// "1 MiB", "4 KiB", "512 B", "1.5 GiB": binary units, exact where possible.
std::string format_bytes(uint64_t bytes);

}  // namespace gdsb::report
