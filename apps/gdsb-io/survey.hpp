// `gdsb-io` with no arguments: a short survey of this machine. Sequential 1 MiB reads and
// random 4 KiB reads for every transfer type (0-7) on a scratch file that is really
// written (1 GiB, less when free space is short) in $GDSB_SCRATCH or the current
// directory; types that cannot run are listed as waived with the probe's reason. Prints a
// table, writes gdsb-report/io.json and always removes the scratch file.
// Test knobs (documented in docs/gdsb-io.md): GDSB_SURVEY_SIZE (file size, e.g. 64M) and
// GDSB_SURVEY_SECONDS (seconds per measured run, default 3).
#pragma once

#include <atomic>
#include <string>

#include "gdsb/runner.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace gdsb::io {

inline constexpr const char* kSurveyReport = "gdsb-report/io.json";

// Seconds per measured run: $GDSB_SURVEY_SECONDS, default 3.
double survey_seconds();

// Returns the exit code; throws gdsb::Error for what stops the survey as a whole.
int run_survey(const Options& opt, const std::atomic<bool>& stop, ProgressLine& progress);

}  // namespace gdsb::io
