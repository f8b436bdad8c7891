// A stand-in libnvidia-ml.so.1 answering as NVML did on the 2 x H200 test machine
// (tests/p2p/fixtures/h200x2-nvidia-smi-topo.txt; /work/shared/GPU-MACHINE.md): two
// NVIDIA H200 at 0000:00:06.0 and 0000:00:07.0, 18 active NVLinks each, P2P read, write,
// NVLink and atomics OK, PCI P2P NS. Loaded by tests through --nvml-lib / open(path), so
// the real shim (gdsb/nvml.hpp) and everything above it run unchanged.
//
// What the far end of each link is was not recorded on that machine; the environment
// variable GDSB_FAKE_NVML_REMOTE picks one answer so each reading is tested:
//   "switch"  (default) remote PCI 00000000:ff:00.0, nvmlDeviceGetNvLinkRemoteDeviceType SWITCH
//   "gpu"     remote PCI = the other GPU, type GPU
//   "unknown" remote PCI 00000000:ff:00.0, remote device type NOT_SUPPORTED
// Not recorded on that machine, so answered NOT_SUPPORTED unless a test sets them:
// GDSB_FAKE_NVML_CUDA=13000 (nvmlSystemGetCudaDriverVersion_v2) and
// GDSB_FAKE_NVML_VBIOS=96.00.74.00.01 (nvmlDeviceGetVbiosVersion, both GPUs).
// GDSB_FAKE_NVML_UUIDS="GPU-...,GPU-..." answers nvmlDeviceGetUUID by index (an empty or
// missing entry: NOT_SUPPORTED): the 2 x H200 machine's UUIDs were not recorded, so a test
// names the value it uses and where it read it.
// nvmlDeviceGetRemappedRows answers what the 1 x H200 (0000:00:06.0, driver 580.159.04)
// showed in `nvidia-smi -q` on 2026-11-29 (/work/notes/h200-proc/rec/nvidia-smi-q.txt):
// 0 correctable, 0 uncorrectable, not pending, no failure.
// GDSB_FAKE_NVML_GPU1_LINKS=N leaves only GPU 1's first N links active (links down on one
// side of a pair, which bounds what the pair can use through the switches).
// GDSB_FAKE_NVML_FAULT makes nvmlDeviceGetVbiosVersion (a device call) fail as a sick node's
// does: "hang" sleeps forever inside it (a hung driver's ioctl), "lost" answers
// NVML_ERROR_GPU_IS_LOST (15), "unknown" NVML_ERROR_UNKNOWN (999).
// GDSB_FAKE_NVML_LOG=FILE appends a line per nvmlInit_v2 ("init HWLOC_COMPONENTS=<its value
// in the calling process>"), per P2P status query ("p2p") and per NVLink remote query
// ("remote"): what a caller asked, for tests of how little it asks.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

namespace {

struct FakeDevice {
  int index;
};
FakeDevice g_devices[2] = {{0}, {1}};
constexpr const char* kBus[2] = {"00000000:00:06.0", "00000000:00:07.0"};
constexpr unsigned kLinks = 18;

int index_of(void* d) { return static_cast<FakeDevice*>(d)->index; }

unsigned active_links(int index) {
  const char* n = std::getenv("GDSB_FAKE_NVML_GPU1_LINKS");
  return index == 1 && n ? static_cast<unsigned>(std::strtoul(n, nullptr, 10)) : kLinks;
}

std::string remote_mode() {
  const char* m = std::getenv("GDSB_FAKE_NVML_REMOTE");
  return m ? m : "switch";
}

struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

void fill_pci(PciInfo* p, const char* bus_id, unsigned bus, unsigned dev) {
  std::memset(p, 0, sizeof *p);
  std::snprintf(p->bus_id, sizeof p->bus_id, "%s", bus_id);
  std::snprintf(p->bus_id_legacy, sizeof p->bus_id_legacy, "%s", bus_id + 4);
  p->bus = bus;
  p->device = dev;
  p->pci_device_id = 0x233510de;
}

void log_call(const std::string& what) {
  if (const char* path = std::getenv("GDSB_FAKE_NVML_LOG"))
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", what.c_str());
      std::fclose(f);
    }
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  const char* hwloc = std::getenv("HWLOC_COMPONENTS");
  log_call(std::string("init HWLOC_COMPONENTS=") + (hwloc ? hwloc : ""));
  return 0;
}
int nvmlShutdown() { return 0; }
const char* nvmlErrorString(int rc) {  // the real library's words for the codes a test makes
  return rc == 15 ? "GPU is lost" : rc == 999 ? "Unknown Error" : "fake NVML";
}
int nvmlSystemGetDriverVersion(char* buf, unsigned n) {
  std::snprintf(buf, n, "580.159.04");
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* v) {
  const char* cuda = std::getenv("GDSB_FAKE_NVML_CUDA");
  if (!cuda) return 3;  // NVML_ERROR_NOT_SUPPORTED
  *v = std::atoi(cuda);
  return 0;
}
int nvmlDeviceGetVbiosVersion(void*, char* buf, unsigned n) {
  if (const char* fault = std::getenv("GDSB_FAKE_NVML_FAULT")) {
    const std::string f = fault;
    if (f == "hang")
      for (;;) ::pause();
    if (f == "lost") return 15;
    if (f == "unknown") return 999;
  }
  const char* vbios = std::getenv("GDSB_FAKE_NVML_VBIOS");
  if (!vbios) return 3;
  std::snprintf(buf, n, "%s", vbios);
  return 0;
}
int nvmlDeviceGetUUID(void* d, char* buf, unsigned n) {
  const char* all = std::getenv("GDSB_FAKE_NVML_UUIDS");
  if (!all) return 3;
  std::string list = all;
  for (int i = 0; i < index_of(d); ++i) {
    const size_t comma = list.find(',');
    if (comma == std::string::npos) return 3;
    list.erase(0, comma + 1);
  }
  list = list.substr(0, list.find(','));
  if (list.empty()) return 3;
  std::snprintf(buf, n, "%s", list.c_str());
  return 0;
}
int nvmlDeviceGetRemappedRows(void*, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failed) {
  *corr = *unc = *pending = *failed = 0;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* n) {
  *n = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** d) {
  if (i >= 2) return 2;
  *d = &g_devices[i];
  return 0;
}
int nvmlDeviceGetName(void*, char* buf, unsigned n) {
  std::snprintf(buf, n, "NVIDIA H200");
  return 0;
}
int nvmlDeviceGetPciInfo_v3(void* d, PciInfo* p) {
  const int i = index_of(d);
  fill_pci(p, kBus[i], 0, static_cast<unsigned>(6 + i));
  return 0;
}
int nvmlDeviceGetMemoryInfo(void*, unsigned long long* m) {  // total, free, used
  m[0] = 150754820096ull;
  m[1] = m[0];
  m[2] = 0;
  return 0;
}
int nvmlDeviceGetBAR1MemoryInfo(void*, unsigned long long* b) {  // total, free, used
  b[0] = 262144ull << 20;
  b[1] = b[0];
  b[2] = 0;
  return 0;
}
int nvmlDeviceGetCurrPcieLinkGeneration(void*, unsigned* v) { return *v = 5, 0; }
int nvmlDeviceGetMaxPcieLinkGeneration(void*, unsigned* v) { return *v = 5, 0; }
int nvmlDeviceGetCurrPcieLinkWidth(void*, unsigned* v) { return *v = 16, 0; }
int nvmlDeviceGetMaxPcieLinkWidth(void*, unsigned* v) { return *v = 16, 0; }
int nvmlDeviceGetMemoryAffinity(void*, unsigned n, unsigned long* set, unsigned) {
  for (unsigned i = 0; i < n; ++i) set[i] = 0;
  set[0] = 1;  // node 0
  return 0;
}
int nvmlDeviceGetP2PStatus(void*, void*, int cap, int* status) {
  log_call("p2p");
  *status = cap == 4 ? 5 : 0;  // PCI: NS; read, write, NVLink, atomics: OK
  return 0;
}
int nvmlDeviceGetNvLinkState(void* d, unsigned link, int* active) {
  if (link >= kLinks) return 2;  // NVML_ERROR_INVALID_ARGUMENT past the last link
  *active = link < active_links(index_of(d)) ? 1 : 0;
  return 0;
}
int nvmlDeviceGetNvLinkRemotePciInfo_v2(void* d, unsigned link, PciInfo* p) {
  log_call("remote");
  if (link >= kLinks) return 2;
  if (remote_mode() == "gpu") {
    const int other = 1 - index_of(d);
    fill_pci(p, kBus[other], 0, static_cast<unsigned>(6 + other));
  } else {
    fill_pci(p, "00000000:ff:00.0", 0xff, 0);
  }
  return 0;
}
int nvmlDeviceGetNvLinkRemoteDeviceType(void*, unsigned link, int* type) {
  if (link >= kLinks) return 2;
  const std::string m = remote_mode();
  if (m == "unknown") return 3;  // NVML_ERROR_NOT_SUPPORTED
  *type = m == "gpu" ? 0 : 2;
  return 0;
}

}  // extern "C"
