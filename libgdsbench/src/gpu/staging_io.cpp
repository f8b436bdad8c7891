// The storage side of -x 2/3/4: an adapter from StagingIo to the engine's host I/O worker,
// so --engine psync|io_uring, --iodepth, registered buffers and -n behave as in -x 1.
#include "gdsb/gpu/staging_io.hpp"

#include <stdexcept>
#include <string>

#include "gdsb/host_io.hpp"

namespace gdsb::gpu {
namespace {

class EngineStagingIo final : public StagingIo {
 public:
  EngineStagingIo(const FileSet& files, const StagingSpec& spec) {
    if (spec.depth == 0 || spec.slot_bytes == 0 || spec.slot_bytes > UINT32_MAX) {
      throw std::invalid_argument("staging I/O: depth and slot size must be positive (slot <= 4 GiB)");
    }
    HostIoOptions o;
    o.engine = spec.engine;
    o.depth = spec.depth;
    o.slot_bytes = static_cast<uint32_t>(spec.slot_bytes);
    o.numa_node = spec.numa_node;
    o.register_buffers = spec.register_buffers;
    // The GPU paths build their staging in the PathWorker's constructor, which the runner
    // calls on the thread that then uses and destroys the worker: one thread, as the
    // engine's single-issuer io_uring setup requires.
    o.single_thread = true;
    worker_ = make_host_io_worker(o, files);
    if (worker_->depth() < spec.depth) {
      throw std::logic_error("staging I/O: the host I/O worker has fewer slots than asked");
    }
  }

  uint32_t depth() const override { return worker_->depth(); }
  std::size_t slot_bytes() const override { return worker_->slot_bytes(); }
  std::byte* slot(uint32_t i) override { return worker_->slot_data(i); }
  uint32_t in_flight() const override { return in_flight_; }
  std::string describe() const override { return worker_->describe(); }

  void submit(std::span<const IoRequest> requests) override {
    worker_->submit(requests);
    in_flight_ += static_cast<uint32_t>(requests.size());
  }

  std::size_t reap(std::span<IoCompletion> out, std::size_t min_complete) override {
    if (min_complete > in_flight_) {
      throw std::logic_error("staging I/O: asked to wait for more than was submitted");
    }
    const std::size_t n = worker_->reap(out, min_complete);
    in_flight_ -= static_cast<uint32_t>(n);
    return n;
  }

 private:
  std::unique_ptr<HostIoWorker> worker_;
  uint32_t in_flight_ = 0;
};

}  // namespace

std::unique_ptr<StagingIo> make_engine_staging_io(const FileSet& files, const StagingSpec& spec) {
  return std::make_unique<EngineStagingIo>(files, spec);
}

}  // namespace gdsb::gpu
