// Reads the PCI devices of a sysfs tree (live "/" or a recorded root). Config space is
// read from each device's `config` file, the same file libpci's sysfs backend reads;
// reading it here lets one code path serve live machines, recorded trees and fuzzing.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/pci_config.hpp"
#include "gdsb/topo/hw_faults_collect.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace detail {

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return c != ' ' && c != '\n' && c != '\t' && c != '\r'; };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string s;
  std::array<char, 4096> buf{};
  // Bounded: sysfs and /proc files of interest are small; a recorded tree may hold junk.
  while (s.size() < (1U << 20) && in.read(buf.data(), buf.size()), in.gcount() > 0)
    s.append(buf.data(), static_cast<size_t>(in.gcount()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s;
}

std::optional<long long> read_number(const fs::path& p, int base) {
  auto t = read_text(p);
  if (!t) return std::nullopt;
  std::string s = trim(*t);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, base);
  if (end == s.c_str()) return std::nullopt;
  return v;
}

std::vector<uint8_t> read_binary(const fs::path& p, size_t max_bytes) {
  std::vector<uint8_t> out(max_bytes);
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

bool is_bdf(const std::string& s) {
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  return s.size() == 12 &&
         std::sscanf(s.c_str(), "%4x:%2x:%2x.%1u%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

}  // namespace detail

namespace {

using detail::read_number;
using detail::read_text;

std::optional<double> parse_speed(const fs::path& p) {
  auto t = read_text(p);  // "16.0 GT/s PCIe" or "Unknown"
  if (!t) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t->c_str(), &end);
  return end != t->c_str() && v > 0 ? std::optional<double>(v) : std::nullopt;
}

std::vector<Bar> read_resource(const fs::path& p, bool& known) {
  std::vector<Bar> bars;
  auto text = read_text(p);
  known = text.has_value();
  if (!text) return bars;
  std::istringstream in(*text);
  std::string line;
  for (int index = 0; index < 6 && std::getline(in, line); ++index) {
    unsigned long long start = 0, end = 0, flags = 0;
    if (std::sscanf(line.c_str(), "%llx %llx %llx", &start, &end, &flags) != 3) continue;
    if (end == 0 || end < start || !(flags & 0x200)) continue;  // unset or not memory
    bars.push_back(Bar{index, end - start + 1, (flags & 0x2000) != 0, (flags & 0x100000) != 0});
  }
  return bars;
}

// OS devices below a PCI function: block/<name>, net/<name>, nvme/nvmeX/nvmeXnY.
void find_os_devices(const fs::path& dir, int depth, Device& d) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec)) continue;
    std::string name = it->path().filename().string();
    if (!it->is_directory(ec) || detail::is_bdf(name)) continue;
    if (name == "block" || name == "net") {
      auto& list = name == "block" ? d.block_devices : d.net_devices;
      for (fs::directory_iterator c(it->path(), ec), e; !ec && c != e; c.increment(ec)) {
        list.push_back(c->path().filename().string());
        if (const auto mbps = name == "net" ? detail::read_net_speed_mbps(c->path()) : std::nullopt)
          d.net_speed_mbps = std::max(d.net_speed_mbps.value_or(0), *mbps);
      }
    } else if (name.rfind("nvme", 0) == 0 && name.find('n', 4) != std::string::npos &&
               dir.filename().string().rfind("nvme", 0) == 0) {
      d.block_devices.push_back(name);
    } else if (depth > 0) {
      find_os_devices(it->path(), depth - 1, d);
    }
  }
}

Device read_device(const fs::path& link, const std::string& bdf) {
  Device d;
  d.bdf = bdf;
  std::error_code ec;
  fs::path real = fs::canonical(link, ec);
  if (!ec) {
    std::string parent = real.parent_path().filename().string();
    if (detail::is_bdf(parent)) d.parent = parent;
    for (const auto& part : real) {
      std::string s = part.string();
      if (s.rfind("pci", 0) == 0 && s.size() == 10) d.root_complex = s.substr(3);
    }
  }
  fs::path dir = ec ? link : real;
  d.config = detail::read_binary(dir / "config", 4096);
  if (d.config.size() < 64) {
    d.vendor = static_cast<uint16_t>(read_number(dir / "vendor", 16).value_or(0));
    d.device = static_cast<uint16_t>(read_number(dir / "device", 16).value_or(0));
    d.class_code = static_cast<uint32_t>(read_number(dir / "class", 16).value_or(0));
  }
  d.acs_note = "extended config space not readable (" + std::to_string(d.config.size()) +
               " bytes of " + (dir / "config").string() + "; reading it needs root)";
  if (auto n = read_number(dir / "numa_node", 10); n && *n >= 0) d.numa_node = static_cast<int>(*n);
  if (auto g = fs::read_symlink(dir / "iommu_group", ec); !ec) {
    try {
      d.iommu_group = std::stoi(g.filename().string());
    } catch (const std::exception&) {
    }
  }
  if (auto drv = fs::read_symlink(dir / "driver", ec); !ec) d.driver = drv.filename().string();
  d.bars = read_resource(dir / "resource", d.bars_known);
  // Link from sysfs; config space (when readable) overrides it in finalize().
  auto cs = parse_speed(dir / "current_link_speed");
  auto ms = parse_speed(dir / "max_link_speed");
  auto cw = read_number(dir / "current_link_width", 10);
  auto mw = read_number(dir / "max_link_width", 10);
  if (cs && ms && cw && mw && *cw > 0 && *mw > 0)
    d.link = Link{*cs, static_cast<int>(*cw), *ms, static_cast<int>(*mw)};
  find_os_devices(dir, 3, d);
  std::sort(d.block_devices.begin(), d.block_devices.end());
  std::sort(d.net_devices.begin(), d.net_devices.end());
  return d;
}

Snapshot collect_tree(const fs::path& root, bool live, const CollectOptions& opt) {
  Snapshot s;
  fs::path bus = root / "sys/bus/pci/devices";
  std::error_code ec;
  if (!fs::is_directory(bus, ec))
    throw RuntimeError("cannot read " + bus.string() +
                       ": not a sysfs tree (expected DIR/sys/bus/pci/devices)");
  for (fs::directory_iterator it(bus, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!detail::is_bdf(name)) continue;
    s.devices.push_back(read_device(it->path(), name));
    try {
      if (auto aer = read_aer_dir(it->path())) s.faults.aer[name] = std::move(*aer);
    } catch (const RuntimeError& e) {
      s.notes.push_back(std::string("AER counters not read: ") + e.what());
    }
  }
  if (ec) throw RuntimeError("cannot list " + bus.string() + ": " + ec.message());
  s.machine = collect_machine(root, live, opt);
  read_boot_clock(root, live, s.faults);
  finalize(s);
  bool has_hierarchy = std::all_of(s.devices.begin(), s.devices.end(),
                                   [](const Device& d) { return !d.root_complex.empty(); });
  if (!has_hierarchy) {
    s.notes.push_back(
        "sysfs entries are not links into sys/devices/pci*: tree rebuilt from "
        "bridge bus numbers");
    rebuild_tree_from_bus_numbers(s);
  }
  infer_port_types(s);
  check_consistency(s, !has_hierarchy);
  if (opt.lookup_names) detail::lookup_names(s, opt.pci_ids_path);
  return s;
}

}  // namespace

Snapshot collect_live(const CollectOptions& opt) {
  Snapshot s = collect_tree("/", true, opt);
  s.kind = SourceKind::Live;
  s.machine.cufile_rdma = gpu::cufile::probe_library(gpu::cufile::kCufileRdmaLibrary);
  if (opt.use_hwloc)
    if (std::string note = enrich_with_hwloc(s); !note.empty()) s.notes.push_back(note);
  return s;
}

Snapshot collect_sysfs_root(const fs::path& root, const CollectOptions& opt) {
  Snapshot s = collect_tree(root, false, opt);
  s.kind = SourceKind::SysfsRoot;
  s.path = root.string();
  return s;
}

}  // namespace gdsb::topo
