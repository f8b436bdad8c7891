#include "gdsb/gpu/cufile_api.hpp"

#include <dlfcn.h>

namespace gdsb::gpu::cufile {
namespace {

// The one dlopen of this file: load_cufile and probe_library share it (flags, dlerror).
void* open_library(const std::string& library, std::string& why) {
  void* lib = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = ::dlerror();
    why = e != nullptr ? std::string(e) : std::string("unknown reason");
  }
  return lib;
}

template <typename Fn>
void lookup(void* lib, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(lib, name));
}

}  // namespace

std::vector<std::string> CufileApi::missing_stream_symbols() const {
  std::vector<std::string> out;
  if (read_async == nullptr) out.emplace_back("cuFileReadAsync");
  if (write_async == nullptr) out.emplace_back("cuFileWriteAsync");
  if (stream_register == nullptr) out.emplace_back("cuFileStreamRegister");
  if (stream_deregister == nullptr) out.emplace_back("cuFileStreamDeregister");
  return out;
}

std::vector<std::string> CufileApi::missing_batch_symbols() const {
  std::vector<std::string> out;
  if (batch_setup == nullptr) out.emplace_back("cuFileBatchIOSetUp");
  if (batch_submit == nullptr) out.emplace_back("cuFileBatchIOSubmit");
  if (batch_get_status == nullptr) out.emplace_back("cuFileBatchIOGetStatus");
  if (batch_destroy == nullptr) out.emplace_back("cuFileBatchIODestroy");
  return out;
}

std::string choose_library(const std::string& from_workload, const char* from_env) {
  if (!from_workload.empty()) return from_workload;
  if (from_env != nullptr && *from_env != '\0') return from_env;
  return "libcufile.so.0";
}

LoadResult load_cufile(const std::string& library) {
  std::string why;
  void* lib = open_library(library, why);
  if (lib == nullptr) {
    return {nullptr, "cuFile library " + library + " could not be loaded (" + why +
                         "): install NVIDIA GPUDirect Storage (package libcufile-<cuda "
                         "version>) or name the library with --cufile-lib or GDSB_CUFILE_LIB"};
  }
  auto api = std::make_shared<CufileApi>();
  api->library = library;
  lookup(lib, "cuFileDriverOpen", api->driver_open);
  lookup(lib, "cuFileDriverClose_v2", api->driver_close);
  if (api->driver_close == nullptr) lookup(lib, "cuFileDriverClose", api->driver_close);
  lookup(lib, "cuFileDriverGetProperties", api->driver_get_properties);
  lookup(lib, "cuFileGetVersion", api->get_version);
  lookup(lib, "cuFileHandleRegister", api->handle_register);
  lookup(lib, "cuFileHandleDeregister", api->handle_deregister);
  lookup(lib, "cuFileBufRegister", api->buf_register);
  lookup(lib, "cuFileBufDeregister", api->buf_deregister);
  lookup(lib, "cuFileRead", api->read);
  lookup(lib, "cuFileWrite", api->write);
  lookup(lib, "cuFileReadAsync", api->read_async);
  lookup(lib, "cuFileWriteAsync", api->write_async);
  lookup(lib, "cuFileStreamRegister", api->stream_register);
  lookup(lib, "cuFileStreamDeregister", api->stream_deregister);
  lookup(lib, "cuFileBatchIOSetUp", api->batch_setup);
  lookup(lib, "cuFileBatchIOSubmit", api->batch_submit);
  lookup(lib, "cuFileBatchIOGetStatus", api->batch_get_status);
  lookup(lib, "cuFileBatchIOCancel", api->batch_cancel);
  lookup(lib, "cuFileBatchIODestroy", api->batch_destroy);

  std::string missing;
  const auto need = [&](bool present, const char* name) {
    if (!present) missing += std::string(missing.empty() ? "" : ", ") + name;
  };
  need(api->driver_open != nullptr, "cuFileDriverOpen");
  need(api->driver_close != nullptr, "cuFileDriverClose");
  need(api->handle_register != nullptr, "cuFileHandleRegister");
  need(api->handle_deregister != nullptr, "cuFileHandleDeregister");
  need(api->buf_register != nullptr, "cuFileBufRegister");
  need(api->buf_deregister != nullptr, "cuFileBufDeregister");
  need(api->read != nullptr, "cuFileRead");
  need(api->write != nullptr, "cuFileWrite");
  if (!missing.empty()) {
    return {nullptr, library + " lacks " + missing + ": it is not a usable libcufile"};
  }
  return {std::move(api), {}};
}

LibraryProbe probe_library(const std::string& library) {
  LibraryProbe p;
  p.library = library;
  p.loaded = open_library(library, p.error) != nullptr;
  return p;
}

}  // namespace gdsb::gpu::cufile
