// Internal: the io_uring HostIoWorker (src/io_uring_worker.cpp).
#pragma once

#include <memory>

#include "gdsb/host_io.hpp"

namespace gdsb::detail {

std::unique_ptr<HostIoWorker> make_io_uring_worker(const HostIoOptions& options,
                                                   const FileSet& files);

}  // namespace gdsb::detail
