// This machine's mounts (label integration): what collect_machine reads from /proc/mounts
// against util-linux's findmnt, which reads /proc/self/mountinfo through libmount and decodes
// its escapes; and a FUSE mount made here, which must come out as a network file system GDS
// cannot engage on. Where a test may mount (root, a private mount namespace), it mounts in one
// of its own, so the machine's mounts are never touched; elsewhere it skips, saying why.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "oracle_util.hpp"

namespace gdsb::topo::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool have_findmnt() { return std::system("findmnt -V >/dev/null 2>&1") == 0; }

// /proc/mounts writes space, tab, newline and backslash as octal escapes ("\040"); findmnt
// prints them decoded. The collector decodes them once, into Mount (issue 34): the model holds
// the text findmnt prints, compared as it is.
// This process in a mount namespace of its own whose mounts do not propagate back, so what
// a test mounts is seen by it (and findmnt, its child) only. The process stays there after
// the test; every mount it made is gone by then.
std::string enter_private_mount_namespace() {
  if (::geteuid() != 0) return "not root: no mount namespace of its own";
  if (::unshare(CLONE_NEWNS) != 0)
    return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string("mount --make-rprivate /: ") + std::strerror(errno);
  return "";
}

// A directory under the temp dir, mounted on by the test and unmounted and removed after.
struct MountPoint {
  explicit MountPoint(const std::string& name)
      : path(fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~MountPoint() {
    if (mounted) ::umount2(path.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove(path, ec);
  }
  fs::path path;
  bool mounted = false;
};

const Mount* find_mount(const Machine& m, const std::string& target) {
  const Mount* found = nullptr;
  for (const Mount& mt : m.mounts)
    if (mt.target == target) found = &mt;  // the last: the one on top
  return found;
}

// Every file system findmnt lists (target, source, fstype, options) is one of ours, decoded;
// a tmpfs with a space in its mount point, where the test may mount, exercises the escapes.
TEST(TopoMountsLive, MountsAreWhatFindmntSays) {
  if (!have_findmnt())
    GTEST_SKIP() << "util-linux findmnt is not installed: no oracle for the mounts";
  std::optional<MountPoint> spaced;
  if (enter_private_mount_namespace().empty()) {
    spaced.emplace("gdsb mount\twith space");
    spaced->mounted = ::mount("gdsb tmpfs", spaced->path.c_str(), "tmpfs", 0, "size=1m") == 0;
  }
  // --nofsroot: a bind mount's source without its "[/dir]", as /proc/mounts prints it.
  const auto got = command_json("findmnt --list -J --nofsroot -o TARGET,SOURCE,FSTYPE,OPTIONS");
  ASSERT_TRUE(got && got->contains("filesystems")) << "findmnt -J gave no JSON";
  const Machine m = collect_machine("/", true, CollectOptions{});
  std::vector<bool> used(m.mounts.size(), false);
  int compared = 0;
  for (const json& f : got->at("filesystems")) {
    auto text = [&](const char* k) {
      return f.at(k).is_null() ? std::string() : f.at(k).get<std::string>();
    };
    const std::string target = text("target"), source = text("source"), fstype = text("fstype"),
                      options = text("options");
    bool found = false;
    for (size_t i = 0; i < m.mounts.size() && !found; ++i) {
      const Mount& mt = m.mounts[i];
      if (used[i] || mt.target != target || mt.source != source || mt.fstype != fstype ||
          mt.options != options)
        continue;
      used[i] = found = true;
    }
    EXPECT_TRUE(found) << "findmnt: " << target << " " << source << " " << fstype << " " << options
                       << " is not among the collected mounts";
    ++compared;
  }
  if (spaced && spaced->mounted) {
    const Mount* mt = find_mount(m, spaced->path.string());
    ASSERT_NE(mt, nullptr) << spaced->path;
    EXPECT_EQ(mt->target, spaced->path.string());  // "\040" and "\011" decoded
    EXPECT_EQ(mt->source, "gdsb tmpfs");
    EXPECT_EQ(mount_holding(m.mounts, (spaced->path / "f").string()), mt);
  }
  RecordProperty("findmnt_filesystems", compared);
  RecordProperty("escaped_mount_point", spaced && spaced->mounted ? "mounted" : "not mounted");
  EXPECT_GT(compared, 0);
}

// A FUSE mount of a network client (fstype fuse.sshfs, source "192.0.2.99:/export"), mounted
// here through /dev/fuse with no FUSE daemon: the test opens /dev/fuse, mounts with its fd
// and closes it, which aborts the connection (any access gives ENOTCONN, nothing can hang)
// while the kernel still lists the mount. It must be a network mount GDS does not engage on
// (compat mode, the why says so), naming its server, carried by the device the kernel's
// route to that server leaves through. Skipped where /dev/fuse is absent or the test may not
// mount in a namespace of its own.
TEST(TopoMountsLive, NetworkFuseMountIsANetworkMountGdsCannotEngageOn) {
  if (!fs::exists("/dev/fuse"))
    GTEST_SKIP() << "/dev/fuse is absent: no FUSE here (module not loaded)";
  if (const std::string why = enter_private_mount_namespace(); !why.empty())
    GTEST_SKIP() << "cannot mount in a private mount namespace: " << why;
  MountPoint mp("gdsb-fuse");
  const int fd = ::open("/dev/fuse", O_RDWR | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "open(/dev/fuse): " << std::strerror(errno);
  const std::string data = "fd=" + std::to_string(fd) + ",rootmode=40000,user_id=0,group_id=0";
  const std::string server = "192.0.2.99";
  const int rc = ::mount((server + ":/export").c_str(), mp.path.c_str(), "fuse.sshfs",
                         MS_NOSUID | MS_NODEV, data.c_str());
  const int err = errno;
  ::close(fd);
  if (rc != 0) GTEST_SKIP() << "mount -t fuse.sshfs: " << std::strerror(err);
  mp.mounted = true;

  Snapshot s;
  s.machine = collect_machine("/", true, CollectOptions{});
  const std::vector<NetworkMount> nms = network_mounts(s);
  const NetworkMount* nm = nullptr;
  for (const NetworkMount& n : nms)
    if (n.mount->target == mp.path.string()) nm = &n;
  ASSERT_NE(nm, nullptr) << mp.path << " is not among the network mounts";
  EXPECT_EQ(nm->mount->fstype, "fuse.sshfs");
  EXPECT_EQ(nm->kind, "fuse.sshfs");
  EXPECT_EQ(nm->engage, Engage::No);
  EXPECT_NE(nm->why.find("fuse.sshfs"), std::string::npos) << nm->why;
  EXPECT_NE(nm->why.find("compat mode"), std::string::npos) << nm->why;
  EXPECT_EQ(nm->servers, std::vector<std::string>{server});
  const std::optional<Route> r = route_to(s.machine.network, server);
  if (!r) {
    EXPECT_TRUE(nm->carriers.empty());
    EXPECT_NE(nm->carriers_note.find(server), std::string::npos) << nm->carriers_note;
  } else {
    ASSERT_FALSE(nm->carriers.empty()) << nm->carriers_note;
    EXPECT_NE(nm->carriers.front().how.find("route to " + server), std::string::npos)
        << nm->carriers.front().how;
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
