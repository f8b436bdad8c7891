// libpci: the dump method for `lspci -xxxx` files and the pci.ids name database.
// libpci reports fatal errors through a callback that must not return; we leave with
// longjmp back into the C-only frame that called libpci and turn it into an exception.
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <memory>

extern "C" {
#include <pci/pci.h>
}

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

// libpci's callbacks carry no user pointer, so the escape context is per thread.
struct LibpciEscape {
  std::jmp_buf env;
  char message[512];
};
thread_local LibpciEscape* t_escape = nullptr;

extern "C" void libpci_error(char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t_escape) std::vsnprintf(t_escape->message, sizeof t_escape->message, fmt, ap);
  va_end(ap);
  if (t_escape) std::longjmp(t_escape->env, 1);
  std::abort();  // unreachable: every libpci call below runs with an escape set
}

extern "C" void libpci_quiet(char*, ...) {}

struct RawDev {
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  std::vector<uint8_t> config;
};

// Only C objects live in this frame, so the longjmp skips no destructors.
int scan_dump(const char* file, RawDev* out, int max, int* count, LibpciEscape* esc) {
  pci_access* volatile acc = pci_alloc();  // volatile: read again after longjmp
  t_escape = esc;
  if (setjmp(esc->env) != 0) {
    // libpci failed while parsing: its lists are consistent between allocations, so
    // pci_cleanup() can release them (an error inside cleanup would escape again).
    t_escape = nullptr;
    pci_cleanup(acc);
    return -1;
  }
  acc->error = libpci_error;
  acc->warning = libpci_quiet;
  acc->debug = libpci_quiet;
  acc->method = PCI_ACCESS_DUMP;
  pci_set_param(acc, const_cast<char*>("dump.name"), const_cast<char*>(file));
  pci_init(acc);
  pci_scan_bus(acc);
  *count = 0;
  for (pci_dev* d = acc->devices; d && *count < max; d = d->next) {
    RawDev& r = out[(*count)++];
    r.domain = static_cast<unsigned>(d->domain);
    r.bus = d->bus;
    r.dev = d->dev;
    r.func = d->func;
    // The dump holds 64, 256 or 4096 bytes; read the largest block that is present.
    static constexpr int kSizes[] = {4096, 256, 64};
    for (int size : kSizes) {
      r.config.resize(static_cast<size_t>(size));
      if (pci_read_block(d, 0, r.config.data(), size)) break;
      r.config.clear();
    }
  }
  pci_cleanup(acc);
  t_escape = nullptr;
  return 0;
}

}  // namespace

namespace detail {

void lookup_names(Snapshot& s) {
  LibpciEscape esc{};
  pci_access* volatile acc = pci_alloc();
  t_escape = &esc;
  if (setjmp(esc.env) != 0) {
    t_escape = nullptr;
    pci_cleanup(acc);
    return;  // no usable pci.ids: names stay empty
  }
  acc->error = libpci_error;
  acc->warning = libpci_quiet;
  acc->debug = libpci_quiet;
  char buf[256];
  for (auto& d : s.devices) {
    if (!d.name.empty()) continue;
    const char* n = pci_lookup_name(acc, buf, sizeof buf, PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE,
                                    static_cast<int>(d.vendor), static_cast<int>(d.device));
    if (n) d.name = n;
  }
  pci_cleanup(acc);
  t_escape = nullptr;
}

}  // namespace detail

Snapshot collect_pci_dump(const fs::path& file, const CollectOptions& opt) {
  std::ifstream probe(file);
  if (!probe) throw RuntimeError("cannot open PCI dump " + file.string());
  std::string first;
  std::getline(probe, first);
  if (!detail::is_bdf(first.size() >= 12 ? first.substr(0, 12) : "") &&
      !detail::is_bdf("0000:" + (first.size() >= 7 ? first.substr(0, 7) : "")))
    throw RuntimeError(file.string() +
                       " does not look like `lspci -xxxx` output (first line "
                       "should start with a bus address such as 00:06.0)");
  constexpr int kMax = 4096;
  auto raw = std::make_unique<RawDev[]>(kMax);
  auto esc = std::make_unique<LibpciEscape>();
  int count = 0;
  if (scan_dump(file.c_str(), raw.get(), kMax, &count, esc.get()) != 0)
    throw RuntimeError("libpci could not read the dump " + file.string() + ": " + esc->message);
  Snapshot s;
  s.kind = SourceKind::PciDump;
  s.path = file.string();
  for (int i = 0; i < count; ++i) {
    const RawDev& r = raw[static_cast<size_t>(i)];
    if (r.config.size() < 64) continue;
    Device d;
    char bdf[16];
    std::snprintf(bdf, sizeof bdf, "%04x:%02x:%02x.%u", r.domain & 0xffff, r.bus & 0xff,
                  r.dev & 0x1f, r.func & 7);
    d.bdf = bdf;
    d.config = r.config;
    d.acs_note = "the dump holds " + std::to_string(r.config.size()) +
                 " config bytes; extended space (ACS) needs `lspci -xxxx` run as root";
    s.devices.push_back(std::move(d));
  }
  if (s.devices.empty()) throw RuntimeError("no devices with config space in " + file.string());
  finalize(s);
  size_t short_config = 0;
  for (const auto& d : s.devices) short_config += d.port_type >= 0 && !d.ext_config_readable;
  if (short_config)
    s.notes.push_back(std::to_string(short_config) +
                      " PCIe device(s) have no extended config space in the "
                      "dump (made with -xxx or without root): their ACS state is unknown");
  s.notes.push_back("a PCI dump has no NUMA, IOMMU, driver, BAR size or host facts");
  rebuild_tree_from_bus_numbers(s);
  infer_port_types(s);
  if (opt.lookup_names) detail::lookup_names(s);
  return s;
}

}  // namespace gdsb::topo
