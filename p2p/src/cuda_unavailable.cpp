#include "gdsb/p2p/layers.hpp"

namespace gdsb::p2p {

namespace {

class UnavailableCudaLayer final : public CudaLayer {
 public:
  explicit UnavailableCudaLayer(std::string reason) : reason_(std::move(reason)) {}
  Availability probe() override { return Availability::no(reason_); }
  int device_count() override { return 0; }
  CudaDeviceProps properties(int) override { return {}; }
  bool can_access_peer(int, int) override { return false; }
  CudaP2PAttributes p2p_attributes(int, int) override { return {}; }

 private:
  std::string reason_;
};

}  // namespace

std::unique_ptr<CudaLayer> make_unavailable_cuda_layer(std::string reason) {
  return std::make_unique<UnavailableCudaLayer>(std::move(reason));
}

}  // namespace gdsb::p2p
