// Saved snapshots: DIR/snapshot.json holds the whole model, config space included, so a
// replay runs every check exactly as on the machine it was recorded on.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "gdsb/error.hpp"
#include "gdsb/report/output_file.hpp"
#include "gdsb/topo/collect.hpp"
#include "internal.hpp"
#include "json_optional.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace gdsb::topo {
namespace {

constexpr const char* kSnapshotSchema = "gdsbench.topo-snapshot/1";

std::string to_hex(const std::vector<uint8_t>& b) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(b.size() * 2);
  for (uint8_t v : b) {
    s += kDigits[v >> 4];
    s += kDigits[v & 15];
  }
  return s;
}

std::vector<uint8_t> from_hex(const std::string& s) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    int hi = nibble(s[i]), lo = nibble(s[i + 1]);
    if (hi < 0 || lo < 0) throw RuntimeError("snapshot: bad hex in config space");
    out.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  return out;
}

using detail::get_opt;
using detail::opt;

json device_json(const Device& d, bool with_config) {
  json bars = json::array();
  for (const auto& b : d.bars)
    bars.push_back({{"index", b.index},
                    {"size", b.size},
                    {"prefetchable", b.prefetchable},
                    {"is_64bit", b.is_64bit}});
  json j = {{"bdf", d.bdf},
            {"vendor", d.vendor},
            {"device", d.device},
            {"class_code", d.class_code},
            {"name", d.name},
            {"role", role_name(d.role)},
            {"parent", d.parent},
            {"root_complex", d.root_complex},
            {"numa_node", opt(d.numa_node)},
            {"iommu_group", opt(d.iommu_group)},
            {"driver", d.driver},
            {"port_type", d.port_type},
            {"ext_config_readable", d.ext_config_readable},
            {"acs_note", d.acs_note},
            {"secondary_bus", opt(d.secondary_bus)},
            {"subordinate_bus", opt(d.subordinate_bus)},
            {"bars_known", d.bars_known},
            {"bars", bars},
            {"block_devices", d.block_devices},
            {"net_devices", d.net_devices}};
  if (with_config) j["config"] = to_hex(d.config);
  if (d.net_speed_mbps) j["net_speed_mbps"] = *d.net_speed_mbps;
  if (d.recorded_link_gb_s) j["recorded_link_gb_s"] = *d.recorded_link_gb_s;
  if (d.package) j["package"] = *d.package;
  j["link"] = d.link ? json{{"cur_speed_gts", d.link->cur_speed_gts},
                            {"cur_width", d.link->cur_width},
                            {"max_speed_gts", d.link->max_speed_gts},
                            {"max_width", d.link->max_width}}
                     : json(nullptr);
  j["acs"] = d.acs ? json{{"cap", d.acs->cap}, {"ctl", d.acs->ctl}, {"offset", d.acs->offset}}
                   : json(nullptr);
  return j;
}

Device device_from(const json& j) {
  Device d;
  d.bdf = j.at("bdf").get<std::string>();
  if (!detail::is_bdf(d.bdf)) throw RuntimeError("snapshot: bad BDF " + d.bdf);
  d.vendor = j.at("vendor").get<uint16_t>();
  d.device = j.at("device").get<uint16_t>();
  d.class_code = j.at("class_code").get<uint32_t>();
  d.name = j.at("name").get<std::string>();
  d.role = role_from_name(j.at("role").get<std::string>()).value_or(Role::Other);
  d.parent = j.at("parent").get<std::string>();
  d.root_complex = j.at("root_complex").get<std::string>();
  d.numa_node = get_opt<int>(j, "numa_node");
  d.iommu_group = get_opt<int>(j, "iommu_group");
  d.driver = j.at("driver").get<std::string>();
  if (j.contains("config")) d.config = from_hex(j.at("config").get<std::string>());
  d.port_type = j.at("port_type").get<int>();
  d.ext_config_readable = j.at("ext_config_readable").get<bool>();
  d.acs_note = j.at("acs_note").get<std::string>();
  d.secondary_bus = get_opt<int>(j, "secondary_bus");
  d.subordinate_bus = get_opt<int>(j, "subordinate_bus");
  d.bars_known = j.at("bars_known").get<bool>();
  for (const auto& b : j.at("bars"))
    d.bars.push_back(Bar{b.at("index").get<int>(), b.at("size").get<uint64_t>(),
                         b.at("prefetchable").get<bool>(), b.at("is_64bit").get<bool>()});
  d.block_devices = j.at("block_devices").get<std::vector<std::string>>();
  d.net_devices = j.at("net_devices").get<std::vector<std::string>>();
  d.net_speed_mbps = get_opt<int>(j, "net_speed_mbps");  // absent in older snapshots
  d.recorded_link_gb_s = get_opt<double>(j, "recorded_link_gb_s");
  d.package = get_opt<int>(j, "package");
  if (const auto& l = j.at("link"); !l.is_null())
    d.link = Link{l.at("cur_speed_gts").get<double>(), l.at("cur_width").get<int>(),
                  l.at("max_speed_gts").get<double>(), l.at("max_width").get<int>()};
  if (const auto& a = j.at("acs"); !a.is_null())
    d.acs = Acs{a.at("cap").get<uint16_t>(), a.at("ctl").get<uint16_t>(),
                a.at("offset").get<uint16_t>()};
  return d;
}

json machine_json(const Machine& m) {
  const auto& c = m.cufile;
  json mounts = json::array();
  for (const auto& mt : m.mounts) {
    json row = {mt.source, mt.target, mt.fstype, mt.options};
    // ext4's own options file, where read (absent in snapshots before it was recorded).
    if (mt.ext4_options)
      row.push_back({{"ext4_dev", mt.ext4_dev},
                     {"ext4_options", *mt.ext4_options},
                     {"ext4_journal", opt(mt.ext4_journal)}});
    mounts.push_back(std::move(row));
  }
  json blocks = json::array();
  for (const auto& b : m.block_devices)
    blocks.push_back({{"name", b.name},
                      {"parent", b.parent},
                      {"slaves", b.slaves},
                      {"dm_name", b.dm_name},
                      {"md_level", b.md_level}});
  json groups = json::object();
  for (const auto& [g, type] : m.iommu_group_types) groups[std::to_string(g)] = type;
  json cufile = {{"path", c.path},
                 {"found", c.found},
                 {"error", c.error},
                 {"allow_compat_mode", opt(c.allow_compat_mode)},
                 {"force_compat_mode", opt(c.force_compat_mode)},
                 {"use_pci_p2pdma", opt(c.use_pci_p2pdma)},
                 {"use_poll_mode", opt(c.use_poll_mode)},
                 {"max_direct_io_size_kb", opt(c.max_direct_io_size_kb)}};
  // Written only where the file has them, so a snapshot of a default cufile.json reads the
  // same as one written before these keys were kept.
  if (c.rdma_dev_addr_list) cufile["rdma_dev_addr_list"] = *c.rdma_dev_addr_list;
  if (!c.fs_rdma_dev_addr_list.empty()) cufile["fs_rdma_dev_addr_list"] = c.fs_rdma_dev_addr_list;
  if (!c.mount_rdma_dev_addr_list.empty())
    cufile["mount_rdma_dev_addr_list"] = c.mount_rdma_dev_addr_list;
  json j = {{"proc_known", m.proc_known},
          {"iommu_known", m.iommu_known},
          {"kernel_release", m.kernel_release},
          {"arch", m.arch},
          {"cpu_vendor", m.cpu_vendor},
          {"cpu_family", m.cpu_family},
          {"cpu_part", m.cpu_part},
          {"cpu_model", m.cpu_model},
          {"cmdline", m.cmdline},
          {"iommu_units", m.iommu_units},
          {"iommu_group_types", groups},
          {"nvidia_fs_loaded", m.nvidia_fs_loaded},
          {"nvidia_fs_version", m.nvidia_fs_version},
          {"udev_present", m.udev_present},
          {"cufile", cufile},
          {"mounts", mounts},
          {"block_devices", blocks},
          {"numa_nodes", m.numa_nodes},
          {"network", detail::network_json(m.network)}};
  // The live dlopen probe of libcufile_rdma, so a replay shows the recorded machine's answer;
  // written only where probed (a key older readers ignore).
  if (m.cufile_rdma)
    j["cufile_rdma"] = {{"library", m.cufile_rdma->library},
                        {"loaded", m.cufile_rdma->loaded},
                        {"error", m.cufile_rdma->error}};
  const P2pdmaHostFacts& p = m.p2pdma;
  j["p2pdma"] = {{"kallsyms_pgmap_ops", opt(p.kallsyms_pgmap_ops)},
                 {"kernel_config", p.kernel_config},
                 {"kernel_config_file", p.kernel_config_file},
                 {"registry_dwords", opt(p.registry_dwords)},
                 {"nvme_multipath", opt(p.nvme_multipath)}};
  return j;
}

Machine machine_from(const json& j) {
  Machine m;
  m.proc_known = j.at("proc_known").get<bool>();
  m.iommu_known = j.at("iommu_known").get<bool>();
  m.kernel_release = j.at("kernel_release").get<std::string>();
  m.arch = j.at("arch").get<std::string>();
  m.cpu_vendor = j.at("cpu_vendor").get<std::string>();
  m.cpu_family = j.at("cpu_family").get<int>();
  m.cpu_part = j.at("cpu_part").get<std::string>();
  m.cpu_model = j.at("cpu_model").get<std::string>();
  m.cmdline = j.at("cmdline").get<std::string>();
  m.iommu_units = j.at("iommu_units").get<std::vector<std::string>>();
  for (const auto& [g, type] : j.at("iommu_group_types").items())
    m.iommu_group_types[std::stoi(g)] = type.get<std::string>();
  m.nvidia_fs_loaded = j.at("nvidia_fs_loaded").get<bool>();
  m.nvidia_fs_version = j.at("nvidia_fs_version").get<std::string>();
  m.udev_present = j.at("udev_present").get<bool>();
  const auto& c = j.at("cufile");
  m.cufile.path = c.at("path").get<std::string>();
  m.cufile.found = c.at("found").get<bool>();
  m.cufile.error = c.at("error").get<std::string>();
  m.cufile.allow_compat_mode = get_opt<bool>(c, "allow_compat_mode");
  m.cufile.force_compat_mode = get_opt<bool>(c, "force_compat_mode");
  m.cufile.use_pci_p2pdma = get_opt<bool>(c, "use_pci_p2pdma");
  m.cufile.use_poll_mode = get_opt<bool>(c, "use_poll_mode");
  m.cufile.max_direct_io_size_kb = get_opt<int64_t>(c, "max_direct_io_size_kb");
  // Absent in snapshots written before issue 25: key absent, as on a default cufile.json.
  if (c.contains("rdma_dev_addr_list"))
    m.cufile.rdma_dev_addr_list = c.at("rdma_dev_addr_list").get<std::vector<std::string>>();
  if (c.contains("fs_rdma_dev_addr_list"))
    m.cufile.fs_rdma_dev_addr_list =
        c.at("fs_rdma_dev_addr_list").get<std::map<std::string, std::vector<std::string>>>();
  if (c.contains("mount_rdma_dev_addr_list"))
    m.cufile.mount_rdma_dev_addr_list =
        c.at("mount_rdma_dev_addr_list").get<std::map<std::string, std::vector<std::string>>>();
  for (const auto& mt : j.at("mounts")) {
    Mount mount;
    mount.source = mt.at(0).get<std::string>();
    mount.target = mt.at(1).get<std::string>();
    mount.fstype = mt.at(2).get<std::string>();
    mount.options = mt.at(3).get<std::string>();
    if (mt.size() > 4 && mt[4].is_object()) {  // older snapshots: the data mode is unknown
      mount.ext4_dev = mt[4].at("ext4_dev").get<std::string>();
      mount.ext4_options = mt[4].at("ext4_options").get<std::string>();
      mount.ext4_journal = get_opt<bool>(mt[4], "ext4_journal");
    }
    m.mounts.push_back(std::move(mount));
  }
  // Absent in snapshots written before it was recorded: sources resolve by name.
  if (const auto it = j.find("block_devices"); it != j.end())
    for (const auto& b : *it)
      m.block_devices.push_back({b.at("name").get<std::string>(), b.at("parent").get<std::string>(),
                                 b.at("slaves").get<std::vector<std::string>>(),
                                 b.at("dm_name").get<std::string>(),
                                 b.at("md_level").get<std::string>()});
  m.numa_nodes = j.at("numa_nodes").get<int>();
  // Absent in snapshots written before the probe was recorded, and where it did not run.
  if (const auto it = j.find("cufile_rdma"); it != j.end() && it->is_object())
    m.cufile_rdma = gpu::cufile::LibraryProbe{it->at("library").get<std::string>(),
                                              it->at("loaded").get<bool>(),
                                              it->at("error").get<std::string>()};
  // Absent in snapshots written before it was recorded: every *_known stays false.
  if (const auto it = j.find("network"); it != j.end()) m.network = detail::network_from(*it);
  // Absent in snapshots written before issue 43: every P2PDMA fact unread.
  if (const auto it = j.find("p2pdma"); it != j.end() && it->is_object()) {
    m.p2pdma.kallsyms_pgmap_ops = get_opt<bool>(*it, "kallsyms_pgmap_ops");
    m.p2pdma.kernel_config = it->at("kernel_config").get<std::string>();
    m.p2pdma.kernel_config_file = it->at("kernel_config_file").get<std::string>();
    m.p2pdma.registry_dwords = get_opt<std::string>(*it, "registry_dwords");
    m.p2pdma.nvme_multipath = get_opt<std::string>(*it, "nvme_multipath");
  }
  return m;
}

json nvlinks_json(const std::optional<std::vector<NvLink>>& links) {
  if (!links) return nullptr;
  json out = json::array();
  for (const NvLink& l : *links)
    out.push_back({{"link", l.link},
                   {"active", l.active},
                   {"remote", l.remote},
                   {"remote_type", l.remote_type},
                   {"count", l.count},
                   {"bandwidth_mbps", opt(l.bandwidth_mbps)}});
  return out;
}

std::optional<std::vector<NvLink>> nvlinks_from(const json& f) {
  if (!f.contains("nvlinks") || f["nvlinks"].is_null()) return std::nullopt;  // older snapshots
  std::vector<NvLink> out;
  for (const auto& l : f["nvlinks"]) {
    NvLink n;
    n.link = l.at("link").get<int>();
    n.active = l.at("active").get<bool>();
    n.remote = l.at("remote").get<std::string>();
    n.remote_type = l.at("remote_type").get<std::string>();
    n.count = l.at("count").get<int>();
    n.bandwidth_mbps = get_opt<uint64_t>(l, "bandwidth_mbps");
    out.push_back(std::move(n));
  }
  return out;
}

json gpu_pairs_json(const std::vector<GpuPairFacts>& pairs) {
  json out = json::array();
  for (const GpuPairFacts& p : pairs)
    out.push_back({{"a", p.a}, {"b", p.b}, {"p2p", p.p2p}, {"common_ancestor", p.common_ancestor}});
  return out;
}

}  // namespace

json snapshot_json(const Snapshot& s, bool with_config) {
  json devices = json::array();
  for (const auto& d : s.devices) devices.push_back(device_json(d, with_config));
  json facts = json::object();
  for (const auto& [bdf, f] : s.gpu_facts)
    facts[bdf] = {{"memory_bytes", opt(f.memory_bytes)},
                  {"source", f.source},
                  {"name", f.name},
                  {"bar1_total_bytes", opt(f.bar1_total_bytes)},
                  {"bar1_used_bytes", opt(f.bar1_used_bytes)},
                  {"pcie_cur_gen", opt(f.pcie_cur_gen)},
                  {"pcie_cur_width", opt(f.pcie_cur_width)},
                  {"pcie_max_gen", opt(f.pcie_max_gen)},
                  {"pcie_max_width", opt(f.pcie_max_width)},
                  {"numa_node", opt(f.numa_node)},
                  {"nvlinks", nvlinks_json(f.nvlinks)},
                  {"nvml_index", opt(f.nvml_index)},
                  {"uuid", f.uuid}};
  return {{"schema", kSnapshotSchema},
          {"recorded_from", {{"kind", source_kind_name(s.kind)}, {"path", s.path}}},
          {"devices", devices},
          {"machine", machine_json(s.machine)},
          {"gpu_facts", facts},
          {"gpu_pairs", gpu_pairs_json(s.gpu_pairs)},
          {"hw_faults", detail::hw_faults_json(s.faults)},
          {"notes", s.notes}};
}

Snapshot snapshot_from_json(const json& j, const std::string& what) {
  if (!j.is_object() || j.value("schema", "") != kSnapshotSchema)
    throw RuntimeError(what + " is not a gdsb-topo snapshot (schema " + kSnapshotSchema + ")");
  Snapshot s;
  s.kind = SourceKind::Snapshot;
  try {
    for (const auto& d : j.at("devices")) {
      s.devices.push_back(device_from(d));
      s.devices.back().origin = "devices[" + std::to_string(s.devices.size() - 1) + "]";
    }
    s.machine = machine_from(j.at("machine"));
    for (const auto& [bdf, f] : j.at("gpu_facts").items()) {
      // Snapshots recorded before the NVML provider carry only memory_bytes and source.
      GpuFacts g;
      g.memory_bytes = get_opt<uint64_t>(f, "memory_bytes");
      g.source = f.at("source").get<std::string>();
      g.name = f.value("name", "");
      g.bar1_total_bytes = get_opt<uint64_t>(f, "bar1_total_bytes");
      g.bar1_used_bytes = get_opt<uint64_t>(f, "bar1_used_bytes");
      g.pcie_cur_gen = get_opt<int>(f, "pcie_cur_gen");
      g.pcie_cur_width = get_opt<int>(f, "pcie_cur_width");
      g.pcie_max_gen = get_opt<int>(f, "pcie_max_gen");
      g.pcie_max_width = get_opt<int>(f, "pcie_max_width");
      g.numa_node = get_opt<int>(f, "numa_node");
      g.nvlinks = nvlinks_from(f);
      g.nvml_index = get_opt<int>(f, "nvml_index");  // absent before issue 42
      g.uuid = f.value("uuid", "");
      s.gpu_facts[bdf] = std::move(g);
    }
    for (const auto& p : j.value("gpu_pairs", json::array()))
      s.gpu_pairs.push_back(GpuPairFacts{p.at("a").get<std::string>(), p.at("b").get<std::string>(),
                                         p.at("p2p").get<std::map<std::string, std::string>>(),
                                         p.at("common_ancestor").get<std::string>()});
    s.notes = j.at("notes").get<std::vector<std::string>>();
    // Absent in snapshots written before issue 36: no fault facts, said so.
    if (const auto it = j.find("hw_faults"); it != j.end() && it->is_object()) s.faults = detail::hw_faults_from(*it);
    else s.faults.kernel_log_unread = "the snapshot predates fault facts";
  } catch (const json::exception& e) {
    throw RuntimeError(what + " is damaged: " + e.what());
  }
  std::stable_sort(s.devices.begin(), s.devices.end(),
                   [](const Device& a, const Device& b) { return a.bdf < b.bdf; });
  check_consistency(s, false, what);
  return s;
}

void save_snapshot(const Snapshot& s, const fs::path& dir, bool allow_overwrite) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw RuntimeError("cannot create snapshot directory " + dir.string() + ": " + ec.message());
  // The project's one atomic writer: an earlier snapshot is replaced, a foreign
  // snapshot.json only with allow_overwrite, and a reader never sees half a file.
  report::write_output_atomic({(dir / "snapshot.json").string(), "--save-snapshot", kSnapshotSchema},
                              snapshot_json(s, true).dump(1) + "\n", allow_overwrite);
}

Snapshot load_snapshot(const fs::path& dir) {
  fs::path file = fs::is_directory(dir) ? dir / "snapshot.json" : dir;
  auto text = detail::read_text(file);
  if (!text)
    throw RuntimeError("cannot read snapshot " + file.string() + " (made by --save-snapshot DIR)");
  auto j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) j = nullptr;
  Snapshot s = snapshot_from_json(j, "snapshot " + file.string());
  s.path = dir.string();
  return s;
}

}  // namespace gdsb::topo
