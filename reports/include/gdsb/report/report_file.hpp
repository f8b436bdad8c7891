// Writing report files safely: never clobber a user's unrelated file, never leave a
// half-written report behind (temp file in the same directory, then rename).
#pragma once

#include <string>
#include <string_view>

namespace gdsb::report {

// Whether path holds a gdsbench report: a JSON object whose "schema" starts "gdsbench.".
bool is_gdsbench_report(const std::string& path);

// Checks, before any work is done, that path may receive a report: its directory exists
// (or can be created when create_parent) and, if path exists, it is a regular file that
// is a gdsbench report or allow_overwrite is set. Throws gdsb::UsageError naming the
// option and what to do.
void check_report_target(const std::string& path, std::string_view option, bool allow_overwrite);

// Writes content to path through "<path>.tmp.<pid>" and rename(2), creating missing
// parent directories. Throws gdsb::RuntimeError naming the path and the system error.
void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace gdsb::report
