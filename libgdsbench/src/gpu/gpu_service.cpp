#include "gdsb/gpu/gpu_service.hpp"

#include <string>

namespace gdsb::gpu {

Availability check_mem_type(XferType x, MemType m) {
  const bool host_mem = m == MemType::CudaMallocHost || m == MemType::Malloc || m == MemType::Mmap;
  if (host_mem && !xfer_uses_cufile(x)) {
    return Availability::no("-m " + std::to_string(static_cast<int>(m)) + " (" +
                            std::string(mem_type_name(m)) +
                            ") is host memory, which gdsio allows only with -x 0/5/6/7; use -m 0 "
                            "or -m 1 with -x " +
                            std::to_string(static_cast<int>(x)));
  }
  return Availability::yes();
}

}  // namespace gdsb::gpu
