// Mount points and block devices matched exactly (gdsb/topo/mounts.hpp says why).
#include "gdsb/topo/mounts.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <system_error>

#include "internal.hpp"

namespace fs = std::filesystem;

namespace gdsb::topo {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

const BlockDevice* find_block(const Machine& m, std::string_view name) {
  for (const auto& b : m.block_devices)
    if (b.name == name) return &b;
  return nullptr;
}

// The disks below `name`, through the slaves of dm and md volumes (a volume may stand on
// another volume: LVM on md). `seen` stops a malformed recording that loops.
void collect_drives(const Machine& m, const std::string& name, std::set<std::string>& seen,
                    std::vector<std::string>& out) {
  if (!seen.insert(name).second) return;
  const BlockDevice* b = find_block(m, name);
  if (b && !b->slaves.empty()) {
    for (const auto& s : b->slaves) collect_drives(m, s, seen, out);
    return;
  }
  const std::string disk = b && !b->parent.empty() ? b->parent : name;
  if (std::find(out.begin(), out.end(), disk) == out.end()) out.push_back(disk);
}

}  // namespace

bool path_within(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir == "/") return starts_with(path, "/");
  return starts_with(path, dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

std::vector<Mount> read_mounts(const fs::path& root) {
  std::vector<Mount> mounts;
  std::istringstream in(detail::read_text(root / "proc/mounts").value_or(""));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    Mount mt;
    if (!(f >> mt.source >> mt.target >> mt.fstype >> mt.options)) continue;
    // Decoded once, here: every reader of the model sees "/mnt/my data", not "my\040data".
    for (std::string* field : {&mt.source, &mt.target, &mt.fstype, &mt.options})
      *field = decode_mount_field(*field);
    mounts.push_back(std::move(mt));
  }
  return mounts;
}

const Mount* mount_holding(const std::vector<Mount>& mounts, std::string_view path) {
  const Mount* best = nullptr;
  for (const auto& m : mounts)
    if (path_within(path, m.target) && (!best || m.target.size() >= best->target.size()))
      best = &m;
  return best;
}

std::string decode_mount_field(std::string_view field) {
  std::string out;
  out.reserve(field.size());
  auto octal = [&](size_t i) { return field[i] >= '0' && field[i] <= '7'; };
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] <= '3' && octal(i + 1) &&
        octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                               (field[i + 3] - '0'));
      i += 3;
    } else {
      out += field[i];
    }
  }
  return out;
}

bool is_on_disk(std::string_view name, std::string_view disk) {
  if (!starts_with(name, disk) || disk.empty()) return false;
  std::string_view rest = name.substr(disk.size());
  if (rest.empty()) return true;
  // The kernel puts a 'p' between a disk name ending in a digit and the partition number
  // (nvme0n1p1, mmcblk0p1, loop0p1), and none after a letter (sda1, vda2).
  if (std::isdigit(static_cast<unsigned char>(disk.back()))) {
    if (rest.front() != 'p') return false;
    rest.remove_prefix(1);
  }
  return all_digits(rest);
}

std::string BlockStack::describe() const {
  std::string out = device;
  if (!dm_name.empty() && dm_name != device) out += " (" + dm_name + ")";
  if (!md_level.empty()) out += " (" + md_level + ")";
  if (kind == VolumeKind::Disk || drives.empty()) return out;
  out += " over ";
  for (size_t i = 0; i < drives.size(); ++i) out += (i ? ", " : "") + drives[i];
  return out;
}

std::optional<BlockStack> block_stack(const Machine& m, const Mount& mount) {
  if (!starts_with(mount.source, "/dev/")) return std::nullopt;
  BlockStack s;
  const std::string rest = mount.source.substr(5);
  std::string name;
  if (starts_with(rest, "mapper/")) {
    s.kind = VolumeKind::DeviceMapper;
    s.dm_name = rest.substr(7);
    for (const auto& b : m.block_devices)
      if (b.dm_name == s.dm_name) name = b.name;
  } else if (find_block(m, mount.ext4_dev)) {
    // Live, the kernel's own name of the mounted device (ext4_mode.hpp): /dev/root, links.
    name = mount.ext4_dev;
  } else if (rest.find('/') == std::string::npos) {
    name = rest;
  }
  s.device = name.empty() ? rest : name;
  const BlockDevice* b = name.empty() ? nullptr : find_block(m, name);
  if (b && !b->dm_name.empty()) {
    s.kind = VolumeKind::DeviceMapper;
    s.dm_name = b->dm_name;
  } else if (b && !b->md_level.empty()) {
    s.kind = VolumeKind::MdRaid;
    s.md_level = b->md_level;
  } else if (starts_with(s.device, "dm-")) {
    s.kind = VolumeKind::DeviceMapper;
  } else if (starts_with(s.device, "md")) {  // "md0", "md127", "md/fast"
    s.kind = VolumeKind::MdRaid;
  }
  if (name.empty()) return s;  // a link (/dev/md/fast, /dev/disk/by-uuid/...) not followed
  // A volume this input does not describe shows no drives: its members are unknown.
  if (s.kind != VolumeKind::Disk && (!b || b->slaves.empty())) return s;
  std::set<std::string> seen;
  collect_drives(m, name, seen, s.drives);
  return s;
}

std::vector<BlockDevice> read_block_devices(const fs::path& root) {
  std::vector<BlockDevice> out;
  std::error_code ec;
  const fs::path dir = root / "sys/class/block";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    BlockDevice b;
    b.name = it->path().filename().string();
    const fs::path dev = it->path();
    // A partition's directory sits inside its disk's (.../nvme0n1/nvme0n1p1).
    if (fs::exists(dev / "partition", ec)) {
      const fs::path real = fs::canonical(dev, ec);
      if (!ec) b.parent = real.parent_path().filename().string();
    }
    for (fs::directory_iterator s(dev / "slaves", ec), e; !ec && s != e; s.increment(ec))
      b.slaves.push_back(s->path().filename().string());
    ec.clear();
    std::sort(b.slaves.begin(), b.slaves.end());
    b.dm_name = detail::trim(detail::read_text(dev / "dm/name").value_or(""));
    b.md_level = detail::trim(detail::read_text(dev / "md/level").value_or(""));
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(),
            [](const BlockDevice& a, const BlockDevice& b) { return a.name < b.name; });
  return out;
}

}  // namespace gdsb::topo
