// The process's cuFile driver, opened once and shared by every run that uses it.
//
// cuFile's I/O calls are thread safe (GDS Best Practices Guide, "API Usage"), but a driver
// opened, queried and closed by each GPU job on its own thread is not: on 4 GPUs a job's
// cuFileDriverGetProperties crashed inside libcufile while the other jobs opened and closed
// the same driver (issue 35), and each job set and restored CUFILE_ENV_PATH_JSON, the one
// piece of process-wide state, under the others' feet. So the first run opens the driver,
// reads its properties and points its log at a private directory, once, under a lock; the
// runs that start while it is open share it; the last one to end closes it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gdsb/gpu/cufile_api.hpp"
#include "gdsb/gpu/path_evidence.hpp"

namespace gdsb::gpu {

struct EvidenceRoots;

class CufileDriver {
 public:
  // Opens the driver (after pointing its log at a private directory when roots.private_log);
  // throws RuntimeError with cuFile's error explained when it cannot.
  CufileDriver(std::shared_ptr<const cufile::CufileApi> api, const EvidenceRoots& roots);
  ~CufileDriver();  // closes the driver, restores the environment, removes the private log
  CufileDriver(const CufileDriver&) = delete;
  CufileDriver& operator=(const CufileDriver&) = delete;

  const cufile::CufileApi& api() const { return *api_; }
  const DriverProps& props() const { return props_; }
  // cuFile's configuration as the user's cufile.json has it (read before the private log).
  const CufileConfig& config() const { return config_; }
  // The private log directory, "" where cuFile logs where it always does.
  const std::string& log_dir() const { return log_dir_; }

 private:
  void make_private_log(const EvidenceRoots& roots);
  void restore_env() noexcept;

  std::shared_ptr<const cufile::CufileApi> api_;
  CufileConfig config_;
  DriverProps props_;
  std::string log_dir_;
  bool env_saved_ = false;
  bool had_env_ = false;
  std::string old_env_;
};

// The drivers open in this process, one a libcufile: what GpuPathDeps carries, so every
// path made from one set of deps (every job of one Runner) shares them. Opening and closing
// happen under one lock, so a run that starts while the last user closes the driver waits
// for the close and opens it anew.
class CufileDrivers {
 public:
  CufileDrivers();
  // The driver of this library, opened here when no run holds it open; closed when the
  // last pointer handed out for it is released.
  std::shared_ptr<const CufileDriver> acquire(const std::shared_ptr<const cufile::CufileApi>& api,
                                              const EvidenceRoots& roots);
  // The user's cuFile configuration: an open driver's (read before it pointed
  // CUFILE_ENV_PATH_JSON at its private copy), else read now. For the facts a run judges
  // before it opens anything (--require-gds).
  CufileConfig user_config() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // outlives this object while a driver is in use
};

}  // namespace gdsb::gpu
