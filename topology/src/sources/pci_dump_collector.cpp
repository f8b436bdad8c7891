// libpci: the dump method for `lspci -xxxx` files and the pci.ids name database.
// libpci reports fatal errors through a callback that must not return; we leave with
// longjmp back into the C-only frame that called libpci and turn it into an exception.
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <utility>

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

// Declared as pci.h declares the callback (printf-like, never returning): clang checks a
// function pointer's noreturn and format attributes on assignment, GCC does not.
extern "C" __attribute__((noreturn, format(printf, 1, 2))) void libpci_error(char* fmt, ...);
extern "C" void libpci_error(char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t_escape) std::vsnprintf(t_escape->message, sizeof t_escape->message, fmt, ap);
  va_end(ap);
  if (t_escape) std::longjmp(t_escape->env, 1);
  std::abort();  // unreachable: every libpci call below runs with an escape set
}

extern "C" __attribute__((format(printf, 1, 2))) void libpci_quiet(char*, ...);
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

namespace {

// "Intel Corporation Device 09a2" as lspci prints a device its own database lacked:
// returns the vendor part and the device id.
std::optional<std::pair<std::string, uint16_t>> unnamed_device(const std::string& name) {
  static constexpr std::string_view kKey = " Device ";
  auto pos = name.rfind(kKey);
  if (pos == std::string::npos || pos == 0 || name.size() != pos + kKey.size() + 4)
    return std::nullopt;
  unsigned id = 0;
  if (std::sscanf(name.c_str() + pos + kKey.size(), "%4x", &id) != 1) return std::nullopt;
  return std::make_pair(name.substr(0, pos), static_cast<uint16_t>(id));
}

// Loads the ID database inside an escape frame: only C objects live here.
int load_ids(pci_access* acc, LibpciEscape* esc) {
  t_escape = esc;
  if (setjmp(esc->env) != 0) {
    t_escape = nullptr;
    return 0;
  }
  int ok = pci_load_name_list(acc);
  t_escape = nullptr;
  return ok;
}

// Names back to IDs, read straight from a plain-text pci.ids: one pass over the file, where
// asking libpci for every one of 65535 IDs per vendor costs about 0.2 s on a machine with
// ten vendors (a health check's whole budget). nullopt for a compressed database
// (pci.ids.gz), which only libpci reads: then the IDs are scanned through it. The first ID
// of a name wins, as in the scan.
struct ReverseIds {
  std::multimap<std::string, uint16_t> vendors;
  std::map<uint16_t, std::map<std::string, uint16_t>> devices;
};
std::optional<ReverseIds> read_reverse_ids(const std::string& path) {
  if (path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  ReverseIds r;
  std::string line;
  std::optional<uint16_t> vendor;
  auto id_of = [](const std::string& l, std::size_t at) -> std::optional<uint16_t> {
    unsigned v = 0;
    if (l.size() < at + 6 || l[at + 4] != ' ' || std::sscanf(l.c_str() + at, "%4x", &v) != 1) return std::nullopt;
    return static_cast<uint16_t>(v);
  };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == 'C' && line.size() > 1 && line[1] == ' ') break;  // the class list follows the vendors
    if (line[0] != '\t') {
      vendor = id_of(line, 0);
      if (vendor) r.vendors.emplace(line.substr(line.find_first_not_of(' ', 5)), *vendor);
      continue;
    }
    if (line.size() < 2 || line[1] == '\t' || !vendor) continue;  // subsystems
    if (const auto dev = id_of(line, 1)) r.devices[*vendor].emplace(line.substr(line.find_first_not_of(' ', 6)), *dev);
  }
  return r;
}

}  // namespace

namespace detail {

void lookup_names(Snapshot& s, const std::string& ids_file) {
  auto esc = std::make_unique<LibpciEscape>();
  std::unique_ptr<pci_access, void (*)(pci_access*)> acc(pci_alloc(), pci_cleanup);
  acc->error = libpci_error;
  acc->warning = libpci_quiet;
  acc->debug = libpci_quiet;
  if (!ids_file.empty()) pci_set_name_list_path(acc.get(), const_cast<char*>(ids_file.c_str()), 0);
  const std::string path = acc->id_file_name ? acc->id_file_name : "pci.ids";
  if (!load_ids(acc.get(), esc.get())) {
    size_t unnamed = 0;
    for (auto& d : s.devices)
      if (d.name.empty() && (d.vendor || d.device)) {
        d.name = "[" + pci_ids_text(d) + "]";
        ++unnamed;
      }
    s.notes.push_back("PCI ID database " + path + " not readable: " +
                      (unnamed ? std::to_string(unnamed) + " device(s) are shown by their " +
                                     "vendor:device IDs"
                               : std::string("device names are as recorded")) +
                      "; install the distribution's pci.ids package for names");
    return;
  }
  char buf[256];
  auto lookup = [&](int flags, int a, int b) -> std::optional<std::string> {
    const char* n = pci_lookup_name(acc.get(), buf, sizeof buf, flags | PCI_LOOKUP_NO_NUMBERS, a, b);
    if (!n) return std::nullopt;
    return std::string(n);
  };
  // Scans over every ID read pci.ids only: udev's hwdb answers each miss slowly.
  constexpr int kScan = PCI_LOOKUP_NO_HWDB;
  // Text recorded without -nn names devices only in words: map them back to IDs. One
  // vendor name may stand for several IDs (Red Hat: 1af4 virtio, 1b36 QEMU).
  bool need_vendors = false;
  for (const auto& d : s.devices)
    need_vendors = need_vendors || ((d.vendor == 0 || d.device == 0) && !d.name.empty());
  // libpci drops a ".gz" it could not open, so the name it loaded is known only now.
  const std::string loaded = acc->id_file_name ? acc->id_file_name : path;
  std::optional<ReverseIds> from_file = need_vendors ? read_reverse_ids(loaded) : std::nullopt;
  std::multimap<std::string, uint16_t> vendor_ids;
  std::map<uint16_t, std::map<std::string, uint16_t>> device_ids;  // filled per vendor on use
  if (from_file) {
    vendor_ids = std::move(from_file->vendors);
    device_ids = std::move(from_file->devices);
  } else if (need_vendors) {
    for (int v = 1; v < 0xffff; ++v)
      if (auto n = lookup(PCI_LOOKUP_VENDOR | kScan, v, 0)) vendor_ids.emplace(*n, static_cast<uint16_t>(v));
  }
  const auto device_id = [&](uint16_t vendor, const std::string& dname) -> std::optional<uint16_t> {
    auto [it, fresh] = device_ids.try_emplace(vendor);
    if (fresh && !from_file)
      for (int id = 0; id < 0xffff; ++id)
        if (auto n = lookup(PCI_LOOKUP_DEVICE | kScan, vendor, id))
          it->second.emplace(*n, static_cast<uint16_t>(id));
    auto f = it->second.find(dname);
    if (f == it->second.end()) return std::nullopt;
    return f->second;
  };
  // The IDs of a name as lspci printed it, "<vendor> <device>": a vendor whose name starts
  // the text AND whose device list has the rest. Where none has (the database names the
  // device otherwise: pci.ids of 2018-2021 says "NetXtreme BCM5720 2-port Gigabit Ethernet
  // PCIe"), the IDs stay unknown (0): the first vendor whose name merely starts the text
  // (1166 "Broadcom" for "Broadcom Inc. and subsidiaries ...") was a wrong ID. Only lspci's
  // own "<vendor> Device 1234", for a device its database lacked, names a vendor on its
  // own: exactly, and where one ID has that name. A vendor the collector already knew (the
  // text's "NVIDIA ..." or "Mellanox ...") is kept: only its device is looked for.
  std::size_t unresolved = 0;
  const auto ids_of_name = [&](Device& d) {
    for (const auto& [vname, id] : vendor_ids) {
      if (d.name.size() <= vname.size() || d.name.compare(0, vname.size(), vname) != 0 ||
          d.name[vname.size()] != ' ' || (d.vendor != 0 && id != d.vendor))
        continue;
      if (auto dev = device_id(id, d.name.substr(vname.size() + 1))) {
        d.vendor = id;
        d.device = *dev;
        return;
      }
    }
    if (const auto u = unnamed_device(d.name)) {
      if (d.vendor == 0 && vendor_ids.count(u->first) == 1)
        d.vendor = vendor_ids.find(u->first)->second;
      if (d.vendor != 0) return;  // its device ID is in the name
    }
    ++unresolved;
  };
  for (auto& d : s.devices) {
    if ((d.vendor == 0 || d.device == 0) && !d.name.empty()) ids_of_name(d);
    if (auto u = d.name.empty() ? std::nullopt : unnamed_device(d.name)) {
      if (d.device == 0) d.device = u->second;
      if (d.vendor && d.device == u->second)
        if (auto n = lookup(PCI_LOOKUP_DEVICE, d.vendor, d.device)) d.name = u->first + " " + *n;
      continue;
    }
    if (!d.name.empty()) continue;
    if (auto n = lookup(PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE, d.vendor, d.device)) {
      d.name = *n;
    } else if (const char* numbered = pci_lookup_name(acc.get(), buf, sizeof buf,
                                                        PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE,
                                                        d.vendor, d.device)) {
      // A device the database lacks, named as lspci names it ("Intel Corporation Device
      // 09a2": the vendor is often known), which the text collector also reads back.
      d.name = numbered;
    } else {
      char b[48];
      std::snprintf(b, sizeof b, "Device %04x:%04x (not in %s)", d.vendor, d.device, "pci.ids");
      d.name = b;
    }
  }
  if (unresolved > 0)
    s.notes.push_back(std::to_string(unresolved) +
                      " device(s) recorded by name only are not named so in the PCI ID database " +
                      loaded + ": their vendor:device IDs are unknown (or only the vendor is " +
                      "known); record with `lspci -nn` (or -vvvnn) to keep them");
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
  // libpci keeps no line numbers: each address's header lines, in file order.
  std::map<std::string, std::vector<int>> header_lines;
  probe.clear();
  probe.seekg(0);
  int line_no = 0;
  for (std::string line; std::getline(probe, line);) {
    ++line_no;
    const std::string a = line.substr(0, line.find(' '));
    if (detail::is_bdf(a))
      header_lines[a].push_back(line_no);
    else if (detail::is_bdf("0000:" + a))
      header_lines["0000:" + a].push_back(line_no);
  }
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
  detail::set_origin_lines(s, header_lines);
  size_t short_config = 0;
  for (const auto& d : s.devices) short_config += d.port_type >= 0 && !d.ext_config_readable;
  if (short_config)
    s.notes.push_back(std::to_string(short_config) +
                      " PCIe device(s) have no extended config space in the "
                      "dump (made with -xxx or without root): their ACS state is unknown");
  s.notes.push_back("a PCI dump has no NUMA, IOMMU, driver, BAR size or host facts");
  rebuild_tree_from_bus_numbers(s);
  infer_port_types(s);
  check_consistency(s, true);
  if (opt.lookup_names) detail::lookup_names(s, opt.pci_ids_path);
  return s;
}

}  // namespace gdsb::topo
