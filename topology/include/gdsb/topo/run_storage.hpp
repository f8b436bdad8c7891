// Where data lay (RunStorage, gdsb/result.hpp): the mount holding a path, from this library's
// reader of /proc/mounts, and its device number from stat(2). The one collector of a run's
// storage: gdsb-io reads it when it writes a document (write_io_report, the one place the runs
// of every mode pass), gdsb-cluster for its --io-dir (the shared-storage phase); the transfer
// engine knows nothing of it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gdsb/result.hpp"
#include "gdsb/topo/model.hpp"

namespace gdsb::topo {

// The storage of `path` (a file or directory) among `mounts` (read_mounts): a path not there
// (a file not yet created) is judged by the nearest directory above it that is; a block
// device is its own storage (source and dev, no file system). nullopt when neither the path
// nor any directory above it exists, or no mount holds it.
std::optional<RunStorage> path_storage(const std::string& path, const std::vector<Mount>& mounts);

// The storage of a run of `w` among `mounts` (topo::read_mounts): of its file, its -D
// directory's files or its file list. A file not there (a run that never created it) is
// judged by the nearest directory above it that is. nullopt when the run has no file, when
// no mount holds it, or when its files lie on more than one file system.
std::optional<RunStorage> run_storage(const Workload& w, const std::vector<Mount>& mounts);

// Fills each run's storage from this machine's /proc/mounts, read once.
void add_run_storage(std::vector<RunResult>& runs);

}  // namespace gdsb::topo
