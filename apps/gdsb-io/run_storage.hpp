// Where each run's data lay (RunStorage, gdsb/result.hpp): the mount holding its files, from
// the topology library's reader of /proc/mounts, and their device number from stat(2). Read
// when gdsb-io writes a document (write_io_report), the one place the runs of every mode
// (jobs, presets, survey, node) pass; the transfer engine knows nothing of it.
#pragma once

#include <optional>
#include <vector>

#include "gdsb/result.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::io {

// The storage of a run of `w` among `mounts` (topo::read_mounts): of its file, its -D
// directory's files or its file list. A file not there (a run that never created it) is
// judged by the nearest directory above it that is. nullopt when the run has no file, when
// no mount holds it, or when its files lie on more than one file system.
std::optional<RunStorage> run_storage(const Workload& w, const std::vector<topo::Mount>& mounts);

// Fills each run's storage from this machine's /proc/mounts, read once.
void add_run_storage(std::vector<RunResult>& runs);

}  // namespace gdsb::io
