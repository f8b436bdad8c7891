// Host facts that are not PCI config space: kernel, CPU, IOMMU, GDS software stack.
#include <sys/utsname.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/ext4_mode.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/p2pdma.hpp"
#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

using detail::read_text;
using detail::trim;

void read_cpu(const fs::path& cpuinfo, Machine& m) {
  auto text = read_text(cpuinfo);
  if (!text) return;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      if (!m.cpu_vendor.empty()) break;  // first processor block is enough
      continue;
    }
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "vendor_id" && m.cpu_vendor.empty()) m.cpu_vendor = value;
    if (key == "CPU implementer" && m.cpu_vendor.empty()) m.cpu_vendor = value;
    if (key == "cpu family" && m.cpu_family < 0) m.cpu_family = std::atoi(value.c_str());
    if (key == "CPU part" && m.cpu_part.empty()) m.cpu_part = value;
    if (key == "model name" && m.cpu_model.empty()) m.cpu_model = value;
  }
}

std::optional<bool> get_bool(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_boolean()) return j[key].get<bool>();
  return std::nullopt;
}

}  // namespace

std::string strip_json_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      auto end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// A list of strings under `key`; nullopt when absent or not a list of strings.
std::optional<std::vector<std::string>> get_string_list(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& v : j[key]) {
    if (!v.is_string()) return std::nullopt;
    out.push_back(v.get<std::string>());
  }
  return out;
}

CufileSettings read_cufile_json(const fs::path& file) {
  CufileSettings c;
  c.path = file.string();
  auto text = read_text(file);
  if (!text) return c;
  c.found = true;
  // NVIDIA's file carries comments and sometimes trailing commas; nlohmann handles the
  // comments itself (ignore_comments) but we strip them to report clean parse errors.
  auto j = nlohmann::json::parse(strip_json_comments(*text), nullptr, false, true);
  if (j.is_discarded() || !j.is_object()) {
    c.error = "not valid JSON (after removing comments)";
    return c;
  }
  if (j.contains("properties") && j["properties"].is_object()) {
    const auto& p = j["properties"];
    c.allow_compat_mode = get_bool(p, "allow_compat_mode");
    c.force_compat_mode = get_bool(p, "force_compat_mode");
    c.use_pci_p2pdma = get_bool(p, "use_pci_p2pdma");
    c.use_poll_mode = get_bool(p, "use_poll_mode");
    if (p.contains("max_direct_io_size_kb") && p["max_direct_io_size_kb"].is_number_integer())
      c.max_direct_io_size_kb = p["max_direct_io_size_kb"].get<int64_t>();
    if (auto list = get_string_list(p, "rdma_dev_addr_list")) c.rdma_dev_addr_list = std::move(*list);
  }
  // fs.<name>.rdma_dev_addr_list: the RDMA NICs cuFile uses for one file system (GDS
  // troubleshooting guide, "JSON Config Parameters"); the shipped file has them commented.
  if (j.contains("fs") && j["fs"].is_object())
    for (const auto& [name, section] : j["fs"].items()) {
      if (auto list = get_string_list(section, "rdma_dev_addr_list"))
        c.fs_rdma_dev_addr_list[name] = std::move(*list);
      if (section.is_object() && section.contains("mount_table") &&
          section["mount_table"].is_object())
        for (const auto& [mount, entry] : section["mount_table"].items())
          if (auto list = get_string_list(entry, "rdma_dev_addr_list"))
            c.mount_rdma_dev_addr_list[mount] = std::move(*list);
    }
  return c;
}

Machine collect_machine(const fs::path& root, bool live, const CollectOptions& opt) {
  Machine m;
  std::error_code ec;
  m.proc_known = live || fs::is_directory(root / "proc", ec);
  if (m.proc_known) {
    if (live) {
      utsname u{};
      if (uname(&u) == 0) {
        m.kernel_release = u.release;
        m.arch = u.machine;
      }
    } else {
      m.kernel_release = read_text(root / "proc/sys/kernel/osrelease").value_or("");
    }
    m.cmdline = trim(read_text(root / "proc/cmdline").value_or(""));
    read_cpu(root / "proc/cpuinfo", m);
    if (m.arch.empty() && !m.cpu_vendor.empty())
      m.arch = m.cpu_vendor.rfind("0x", 0) == 0 ? "aarch64" : "x86_64";
    m.nvidia_fs_loaded = fs::is_directory(root / "proc/driver/nvidia-fs", ec);
    if (m.nvidia_fs_loaded) {
      // The version file reads like "version: 2.17.5"; keep what follows the colon.
      std::string v = read_text(root / "proc/driver/nvidia-fs/version").value_or("");
      auto colon = v.find(':');
      m.nvidia_fs_version = trim(colon == std::string::npos ? v : v.substr(colon + 1));
    }
    m.udev_present = fs::is_directory(root / "run/udev/data", ec);
    fs::path cufile = live && !opt.cufile_env_path.empty() ? fs::path(opt.cufile_env_path)
                                                           : root / "etc/cufile.json";
    m.cufile = read_cufile_json(cufile);
    if (!live) m.cufile.path = "/etc/cufile.json";  // as it was on the recorded machine
    m.mounts = read_mounts(root);
    read_ext4_modes(root, live, m.mounts);
    m.block_devices = read_block_devices(root);
  }
  fs::path groups = root / "sys/kernel/iommu_groups";
  m.iommu_known = fs::is_directory(root / "sys/kernel", ec);
  for (fs::directory_iterator it(root / "sys/class/iommu", ec), end; !ec && it != end;
       it.increment(ec))
    m.iommu_units.push_back(it->path().filename().string());
  for (fs::directory_iterator it(groups, ec), end; !ec && it != end; it.increment(ec)) {
    try {
      int g = std::stoi(it->path().filename().string());
      m.iommu_group_types[g] = trim(read_text(it->path() / "type").value_or("unknown"));
    } catch (const std::exception&) {
    }
  }
  std::sort(m.iommu_units.begin(), m.iommu_units.end());
  for (fs::directory_iterator it(root / "sys/devices/system/node", ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (n.size() > 4 && n.rfind("node", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[4])))
      ++m.numa_nodes;
  }
  m.network = read_network_facts(root, live);
  if (m.proc_known) m.p2pdma = read_p2pdma_facts(root, live, m.kernel_release);
  return m;
}

}  // namespace gdsb::topo
