#include "fixture_builder.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace gdsb::topo::fixture {
namespace {

void put16(std::vector<uint8_t>& c, size_t off, uint32_t v) {
  c[off] = static_cast<uint8_t>(v);
  c[off + 1] = static_cast<uint8_t>(v >> 8);
}
void put32(std::vector<uint8_t>& c, size_t off, uint32_t v) {
  put16(c, off, v & 0xffff);
  put16(c, off + 2, v >> 16);
}

// Formats come from this file only (test code); the warning guards user-supplied ones.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
std::string hexs(const char* fmt, unsigned long long v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}
#pragma GCC diagnostic pop

double gts(int code) {
  static const double kSpeeds[] = {0, 2.5, 5, 8, 16, 32, 64};
  return code >= 0 && code <= 6 ? kSpeeds[code] : 0;
}

fs::path device_dir(const Machine& m, const Dev& d, const fs::path& root) {
  if (d.parent.empty()) return root / "sys/devices" / ("pci" + d.bdf.substr(0, 7)) / d.bdf;
  for (const auto& p : m.devs)
    if (p.bdf == d.parent) return device_dir(m, p, root) / d.bdf;
  throw std::logic_error("fixture: unknown parent " + d.parent);
}

// Where the kernel keeps a block device: a disk written below its PCI function (nvme/...)
// stays there, anything else (dm, md, a disk of no PCI device here) in devices/virtual.
fs::path block_dir(const std::string& name, const fs::path& root) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root / "sys/devices", ec), end; !ec && it != end;
       it.increment(ec))
    if (it->is_directory(ec) && it->path().filename() == name) return it->path();
  return root / "sys/devices/virtual/block" / name;
}

void write_blocks(const std::vector<SysBlock>& blocks, const fs::path& root) {
  if (blocks.empty()) return;
  fs::create_directories(root / "sys/class/block");
  std::map<std::string, fs::path> dirs;
  for (const SysBlock& b : blocks) {  // disks and volumes first, then partitions inside them
    if (!b.disk.empty()) continue;
    dirs[b.name] = block_dir(b.name, root);
    fs::create_directories(dirs[b.name]);
    if (!b.dm_name.empty()) write_file(dirs[b.name] / "dm/name", b.dm_name + "\n");
    if (!b.md_level.empty()) write_file(dirs[b.name] / "md/level", b.md_level + "\n");
  }
  for (const SysBlock& b : blocks) {
    if (b.disk.empty()) continue;
    dirs[b.name] = dirs.at(b.disk) / b.name;
    write_file(dirs[b.name] / "partition", "1\n");
  }
  for (const SysBlock& b : blocks) {
    fs::create_directory_symlink(dirs[b.name], root / "sys/class/block" / b.name);
    for (const auto& s : b.slaves) {
      fs::create_directories(dirs[b.name] / "slaves");
      fs::create_directory_symlink(dirs.at(s), dirs[b.name] / "slaves" / s);
    }
  }
}

}  // namespace

std::vector<uint8_t> config_bytes(const Dev& d, size_t size) {
  std::vector<uint8_t> c(4096, 0);
  put16(c, 0x00, d.vendor);
  put16(c, 0x02, d.device);
  put16(c, 0x04, 0x0406);
  c[0x08] = 0x01;
  put32(c, 0x08, (d.class_code << 8) | 0x01);
  c[0x0e] = d.secondary >= 0 ? 0x01 : 0x00;
  if (d.secondary >= 0) {
    c[0x18] = static_cast<uint8_t>(std::stoi(d.bdf.substr(5, 2), nullptr, 16));
    c[0x19] = static_cast<uint8_t>(d.secondary);
    c[0x1a] = static_cast<uint8_t>(d.subordinate);
  }
  if (d.port_type >= 0) {
    put16(c, 0x06, 0x0010);  // capability list
    c[0x34] = 0x60;          // PM first, then PCIe: the walk must follow next pointers
    c[0x60] = 0x01;
    c[0x61] = 0x40;
    put16(c, 0x62, 0x0003);
    c[0x40] = 0x10;
    c[0x41] = 0x00;
    put16(c, 0x42, static_cast<uint32_t>(0x0002 | (d.port_type << 4)));
    put32(c, 0x4c, static_cast<uint32_t>(d.max_speed | (d.max_width << 4) | (0x3 << 10)));
    put16(c, 0x52, static_cast<uint32_t>(d.cur_speed | (d.cur_width << 4)));
    // AER at 0x100, then ACS at 0x148 when present.
    put32(c, 0x100, 0x0001 | (1U << 16) | ((d.acs_cap ? 0x148U : 0U) << 20));
    if (d.acs_cap) {
      put32(c, 0x148, 0x000d | (1U << 16));
      put16(c, 0x14c, *d.acs_cap);
      put16(c, 0x14e, d.acs_ctl.value_or(0));
    }
  } else {
    size = std::min<size_t>(size, 256);
  }
  c.resize(std::min(size, c.size()));
  return c;
}

void write_file(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
}

fs::path device_path(const Machine& m, const std::string& bdf, const fs::path& root) {
  for (const auto& d : m.devs)
    if (d.bdf == bdf) return device_dir(m, d, root);
  throw std::logic_error("fixture: no PCI function " + bdf);
}

void write_sysfs(const Machine& m, const fs::path& root) {
  uint64_t base = 0x380000000000ULL;
  int nvme_index = 0;
  for (const auto& d : m.devs) {
    fs::path dir = device_dir(m, d, root);
    fs::create_directories(dir);
    auto cfg = config_bytes(d, m.config_size);
    std::ofstream(dir / "config", std::ios::binary)
        .write(reinterpret_cast<const char*>(cfg.data()), static_cast<std::streamsize>(cfg.size()));
    write_file(dir / "vendor", hexs("0x%04llx\n", d.vendor));
    write_file(dir / "device", hexs("0x%04llx\n", d.device));
    write_file(dir / "class", hexs("0x%06llx\n", d.class_code));
    write_file(dir / "numa_node", std::to_string(d.numa) + "\n");
    std::string res;
    for (int i = 0; i < 13; ++i) {
      auto it = d.bars.find(i);
      if (it == d.bars.end() || i > 5) {
        res += "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
        continue;
      }
      // A BAR followed by another at the next index is 32-bit non-prefetchable (BAR0 of
      // an A100/H100 PCIe: BAR1 at index 1); otherwise 64-bit prefetchable.
      const bool is_64 = !d.bars.count(i + 1);
      res += hexs("0x%016llx ", base) + hexs("0x%016llx ", base + it->second - 1) +
             (is_64 ? "0x000000000014220c\n" : "0x0000000000040200\n");
      base += it->second;
    }
    write_file(dir / "resource", res);
    if (d.port_type >= 0) {
      char sp[32];
      std::snprintf(sp, sizeof sp, "%.1f GT/s PCIe\n", gts(d.cur_speed));
      write_file(dir / "current_link_speed", sp);
      std::snprintf(sp, sizeof sp, "%.1f GT/s PCIe\n", gts(d.max_speed));
      write_file(dir / "max_link_speed", sp);
      write_file(dir / "current_link_width", std::to_string(d.cur_width) + "\n");
      write_file(dir / "max_link_width", std::to_string(d.max_width) + "\n");
    }
    if (d.iommu_group) {
      fs::path g = root / "sys/kernel/iommu_groups" / std::to_string(*d.iommu_group);
      fs::create_directories(g / "devices");
      fs::create_directory_symlink(g, dir / "iommu_group");
    }
    if (!d.driver.empty()) {
      fs::path drv = root / "sys/bus/pci/drivers" / d.driver;
      fs::create_directories(drv);
      fs::create_directory_symlink(drv, dir / "driver");
    }
    for (const auto& b : d.block) {
      if (b.rfind("nvme", 0) == 0) {
        fs::create_directories(dir / "nvme" / ("nvme" + std::to_string(nvme_index++)) / b);
      } else {
        fs::create_directories(dir / "virtio0/block" / b);
      }
    }
    for (const auto& n : d.net) fs::create_directories(dir / "net" / n);
    fs::create_directories(root / "sys/bus/pci/devices");
    fs::create_directory_symlink(dir, root / "sys/bus/pci/devices" / d.bdf);
  }
  const Host& h = m.host;
  for (const auto& [g, type] : h.iommu_groups)
    write_file(root / "sys/kernel/iommu_groups" / std::to_string(g) / "type", type + "\n");
  fs::create_directories(root / "sys/kernel/iommu_groups");
  fs::create_directories(root / "sys/class/iommu");
  if (!h.iommu_groups.empty()) fs::create_directories(root / "sys/class/iommu/dmar0");
  for (int n = 0; n < h.numa_nodes; ++n)
    fs::create_directories(root / "sys/devices/system/node" / ("node" + std::to_string(n)));
  write_blocks(h.blocks, root);
  write_network(m, root);
  for (const auto& [path, text] : h.files) {
    if (text.empty())
      fs::create_directories(root / path);
    else
      write_file(root / path, text);
  }
  if (!h.write_proc) return;
  write_file(root / "proc/cmdline", h.cmdline + "\n");
  write_file(root / "proc/sys/kernel/osrelease", h.kernel + "\n");
  if (h.cpu_vendor.rfind("0x", 0) == 0)  // aarch64 /proc/cpuinfo
    write_file(root / "proc/cpuinfo", "processor\t: 0\nCPU implementer\t: " + h.cpu_vendor +
                                          "\nCPU part\t: " + h.cpu_part + "\n\n");
  else
    write_file(root / "proc/cpuinfo", "processor\t: 0\nvendor_id\t: " + h.cpu_vendor +
                                          "\ncpu family\t: " + std::to_string(h.cpu_family) +
                                          "\nmodel name\t: Fixture CPU\n\n");
  std::string mounts;
  for (const auto& l : h.mounts) mounts += l + "\n";
  write_file(root / "proc/mounts", mounts);
  for (const auto& [dev, text] : h.ext4_options)
    write_file(root / "proc/fs/ext4" / dev / "options", text);
  for (const auto& j : h.jbd2) fs::create_directories(root / "proc/fs/jbd2" / j);
  if (h.nvidia_fs) write_file(root / "proc/driver/nvidia-fs/version", "version: 2.20.5\n");
  if (h.udev) fs::create_directories(root / "run/udev/data");
  if (!h.cufile_json.empty()) write_file(root / "etc/cufile.json", h.cufile_json);
}

std::string lspci_dump(const Machine& m, size_t bytes) {
  std::ostringstream out;
  for (const auto& d : m.devs) {
    out << (d.bdf.rfind("0000:", 0) == 0 ? d.bdf.substr(5) : d.bdf) << " Fixture device: vendor "
        << hexs("%04llx", d.vendor) << "\n";
    auto cfg = config_bytes(d, bytes);
    for (size_t off = 0; off < cfg.size(); off += 16) {
      out << hexs(off < 0x100 ? "%02llx:" : "%03llx:", off);
      for (size_t i = off; i < off + 16 && i < cfg.size(); ++i) out << hexs(" %02llx", cfg[i]);
      out << "\n";
    }
    out << "\n";
  }
  return out.str();
}

namespace {

std::string bdf_of(int bus, int dev) {
  return hexs("0000:%02llx:", static_cast<unsigned>(bus)) +
         hexs("%02llx.0", static_cast<unsigned>(dev));
}

constexpr const char* kCufileJson = R"({
  // NVIDIA's file carries comments like this one
  "logging": { "dir": "/var/log/cufile", "level": "ERROR" },
  "properties": {
    "max_direct_io_size_kb": 16384, /* inline comment */
    "allow_compat_mode": true,
    "use_poll_mode": false,
    "use_pci_p2pdma": false,
    "comment_in_string": "http://example.com/a//b"
  }
})";

}  // namespace

Machine make_box(int sockets, int switches, int gpus, int nvmes, int nics) {
  Machine m;
  int group = 0, nvme_no = 0;
  for (int s = 0; s < sockets; ++s) {
    int root = s * (0x100 / std::max(sockets, 2));
    int next = root + 1;
    Dev hb;
    hb.bdf = bdf_of(root, 0);
    hb.vendor = 0x8086;
    hb.device = 0x2020;  // Skylake-E host bridge: on the kernel's P2PDMA whitelist
    hb.class_code = 0x060000;
    hb.numa = s;
    m.devs.push_back(hb);
    for (int k = 0; k < switches; ++k) {
      Dev rp;
      rp.bdf = bdf_of(root, 1 + k);
      rp.vendor = 0x8086;
      rp.device = 0x352a;
      rp.class_code = 0x060400;
      rp.port_type = 4;
      rp.max_speed = rp.cur_speed = 5;
      rp.max_width = rp.cur_width = 16;
      rp.acs_cap = 0x005f;
      rp.acs_ctl = 0x001d;  // the kernel's default on root ports; above the switch, so harmless
      rp.secondary = next;
      rp.numa = s;
      rp.iommu_group = group++;
      rp.driver = "pcieport";
      Dev usp = rp;
      usp.bdf = bdf_of(next, 0);
      usp.parent = rp.bdf;
      usp.vendor = 0x1000;
      usp.device = 0xc030;
      usp.port_type = 5;
      usp.acs_cap.reset();
      usp.acs_ctl.reset();
      usp.secondary = next + 1;
      usp.iommu_group = group++;
      int dsp_bus = next + 1;
      int ep_bus = next + 2;
      std::vector<Dev> below;
      int endpoints = gpus + nvmes + nics;
      for (int e = 0; e < endpoints; ++e) {
        Dev dsp = usp;
        dsp.bdf = bdf_of(dsp_bus, e);
        dsp.parent = usp.bdf;
        dsp.port_type = 6;
        dsp.acs_cap = 0x007f;
        dsp.acs_ctl = 0x0000;  // ACS off on switch ports: P2P turns inside the switch
        dsp.secondary = dsp.subordinate = ep_bus + e;
        dsp.iommu_group = group++;
        Dev ep;
        ep.bdf = bdf_of(ep_bus + e, 0);
        ep.parent = dsp.bdf;
        ep.port_type = 0;
        ep.numa = s;
        ep.iommu_group = group++;
        if (e < gpus) {
          ep.vendor = 0x10de;
          ep.device = 0x2330;
          ep.class_code = 0x030200;
          ep.max_speed = ep.cur_speed = 5;
          ep.max_width = ep.cur_width = 16;
          ep.bars = {{0, 16ULL << 20}, {1, 128ULL << 30}, {3, 32ULL << 20}};
          ep.driver = "nvidia";
        } else if (e < gpus + nvmes) {
          ep.vendor = 0x144d;
          ep.device = 0xa80a;
          ep.class_code = 0x010802;
          ep.max_speed = ep.cur_speed = 4;
          ep.max_width = ep.cur_width = 4;
          ep.bars = {{0, 16ULL << 10}};
          ep.block = {"nvme" + std::to_string(nvme_no++) + "n1"};
          ep.driver = "nvme";
        } else {
          ep.vendor = 0x15b3;
          ep.device = 0x1021;
          ep.class_code = 0x020700;
          ep.max_speed = ep.cur_speed = 5;
          ep.max_width = ep.cur_width = 16;
          ep.bars = {{0, 32ULL << 20}};
          ep.net = {"ibp" + std::to_string(ep_bus + e) + "s0"};
          ep.driver = "mlx5_core";
        }
        below.push_back(dsp);
        below.push_back(ep);
      }
      int last = ep_bus + endpoints - 1;
      rp.subordinate = usp.subordinate = last;
      m.devs.push_back(rp);
      m.devs.push_back(usp);
      for (auto& d : below) m.devs.push_back(d);
      next = last + 1;
    }
  }
  for (const auto& d : m.devs)
    if (d.iommu_group) m.host.iommu_groups[*d.iommu_group] = "identity";
  m.host.numa_nodes = sockets;
  m.host.cufile_json = kCufileJson;
  m.host.mounts = {"/dev/nvme0n1p2 / ext4 rw,relatime 0 0",
                   "/dev/md0 /raid ext4 rw,relatime,data=ordered 0 0", "proc /proc proc rw 0 0",
                   "tmpfs /run tmpfs rw 0 0"};
  return m;
}

Machine make_flat_vm() {
  Machine m;
  auto add = [&](int dev, uint16_t vendor, uint16_t device, uint32_t cls) -> Dev& {
    Dev d;
    d.bdf = bdf_of(0, dev);
    d.vendor = vendor;
    d.device = device;
    d.class_code = cls;
    m.devs.push_back(d);
    return m.devs.back();
  };
  add(0, 0x8086, 0x0d57, 0x060000);
  add(1, 0x1af4, 0x1045, 0xff0000);
  add(2, 0x1af4, 0x1042, 0x018000).block = {"vda"};
  add(3, 0x1af4, 0x1041, 0x020000).net = {"eth0"};
  Dev& gpu = add(6, 0x10de, 0x2330, 0x030200);
  gpu.port_type = 0;
  gpu.max_speed = gpu.cur_speed = 5;
  gpu.max_width = gpu.cur_width = 16;
  gpu.bars = {{0, 16ULL << 20}, {1, 128ULL << 30}, {3, 32ULL << 20}};
  gpu.driver = "nvidia";
  m.host.kernel = "6.18.0";
  m.host.cmdline = "console=ttyS0 reboot=k panic=1";
  m.host.nvidia_fs = false;
  m.host.udev = false;
  m.host.cufile_json = R"({ "properties": { "allow_compat_mode": true } })";
  m.host.mounts = {"/dev/vda / ext4 rw,relatime 0 0", "proc /proc proc rw 0 0"};
  return m;
}

Dev* find(Machine& m, const std::string& bdf) {
  for (auto& d : m.devs)
    if (d.bdf == bdf) return &d;
  return nullptr;
}

Dev* first(Machine& m, uint32_t class_prefix) {
  for (auto& d : m.devs)
    if ((d.class_code >> 8) == class_prefix) return &d;
  return nullptr;
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "gdsb-topo-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace gdsb::topo::fixture
