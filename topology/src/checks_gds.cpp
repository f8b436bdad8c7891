// GDS software stack: nvidia-fs, kernel P2PDMA, cufile.json, udev database, file systems.
#include <cstdio>
#include <set>

#include "check_util.hpp"
#include "gdsb/topo/ext4_mode.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {
namespace {

std::pair<int, int> kernel_version(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

std::string yes_no(const std::optional<bool>& v, bool dflt) {
  return v ? (*v ? "true" : "false") : std::string(dflt ? "true" : "false") + " (default)";
}

bool is_data_mount(const Mount& m) {
  static const std::set<std::string> kSkipFs{"squashfs", "iso9660",  "vfat",   "proc",
                                             "sysfs",    "devtmpfs", "devpts", "cgroup",
                                             "cgroup2",  "tmpfs",    "autofs", "mqueue"};
  for (const char* sys : {"/proc", "/sys", "/dev", "/run", "/boot", "/snap"})
    if (m.target.rfind(sys, 0) == 0) return false;
  if (kSkipFs.count(m.fstype)) return false;
  return m.source.rfind("/dev/", 0) == 0 || m.fstype == "overlay" ||
         m.fstype.rfind("fuse", 0) == 0 || m.fstype.rfind("nfs", 0) == 0 || m.fstype == "lustre" ||
         m.fstype == "wekafs" || m.fstype == "gpfs" || m.fstype == "beegfs";
}

// "" when GDS-capable, else why not.
std::string fs_incapable(const Mount& m) {
  if (m.fstype == "ext4") return ext4_mode_refusal(ext4_data_mode(m));
  if (m.fstype == "xfs" || m.fstype.rfind("nfs", 0) == 0 || m.fstype == "lustre" ||
      m.fstype == "wekafs" || m.fstype == "gpfs" || m.fstype == "beegfs")
    return "";
  return m.fstype + " is not supported by GDS (cuFile uses compat mode or fails with 5008)";
}

bool network_fs(const std::string& fs) {
  return fs.rfind("nfs", 0) == 0 || fs == "lustre" || fs == "wekafs" || fs == "gpfs" ||
         fs == "beegfs";
}

// The storage a mount sits on, as the path model sees it: "" when GDS can reach it (a
// PCIe NVMe drive, or a network file system with a data NIC), else why not. `note` gets
// what is unknown (a backing device this input does not show).
std::string unreachable(const CheckContext& ctx, const Mount& m, std::string& note) {
  if (network_fs(m.fstype))
    return ctx.model.data_nics().empty()
               ? "a network file system, and no data NIC here carries GDS (RDMA) traffic"
               : "";
  if (m.source.rfind("/dev/", 0) != 0) return "";
  const std::string dev = m.source.substr(5);
  for (const Device& d : ctx.snapshot.devices)
    for (const auto& b : d.block_devices)
      if (!b.empty() && dev.rfind(b, 0) == 0) {
        if (std::string v = virtual_device_kind(d); !v.empty())
          return "on virtual storage " + d.bdf + " " + b + " (" + v +
                 "): GDS cannot reach it, cuFile reads it in compat mode";
        return "";
      }
  note = " (its drive is not identified in this input)";
  return "";
}

class GdsStackCheck final : public Check {
 public:
  std::string id() const override { return "gds-stack"; }
  std::string title() const override { return "GDS software stack"; }
  std::vector<CheckResult> run(const CheckContext& ctx) const override {
    const Machine& m = ctx.snapshot.machine;
    if (!m.proc_known)
      return {waived(id(), title(),
                     "the " + std::string(source_kind_name(ctx.snapshot.kind)) +
                         " input has no host facts (/proc, /run/udev, cufile.json)")};
    std::vector<CheckResult> out;
    auto [kmaj, kmin] = kernel_version(m.kernel_release);
    bool p2pdma_kernel = kmaj > 6 || (kmaj == 6 && kmin >= 2);
    bool p2pdma_on = m.cufile.use_pci_p2pdma.value_or(false);

    CheckResult fs = make(id(), "nvidia-fs driver", Verdict::Pass);
    if (m.nvidia_fs_loaded) {
      fs.evidence.push_back(
          "/proc/driver/nvidia-fs present, version " +
          (m.nvidia_fs_version.empty() ? std::string("unknown") : m.nvidia_fs_version));
    } else if (p2pdma_kernel && p2pdma_on) {
      fs.evidence.push_back(
          "/proc/driver/nvidia-fs absent; not needed: use_pci_p2pdma with kernel " +
          m.kernel_release);
    } else {
      fs.verdict = Verdict::Fail;
      fs.evidence.push_back("/proc/driver/nvidia-fs absent (module not loaded)");
      fs.consequence =
          "without nvidia-fs (or kernel P2PDMA) cuFile cannot DMA into GPU memory: it runs in "
          "compat "
          "mode, i.e. POSIX reads through its own bounce buffers";
      fs.remedy =
          "modprobe nvidia-fs (packages nvidia-fs-dkms / nvidia-gds)" +
          std::string(p2pdma_kernel ? ", or set properties.use_pci_p2pdma true in cufile.json "
                                      "(CUDA 12.8+, open GPU kernel module)"
                                    : "");
    }
    out.push_back(std::move(fs));

    CheckResult p2p = make(id(), "kernel P2PDMA", Verdict::Pass);
    p2p.evidence.push_back("kernel " + m.kernel_release +
                           (p2pdma_kernel ? " (>= 6.2: P2PDMA-capable)" : " (< 6.2)") +
                           ", use_pci_p2pdma " + yes_no(m.cufile.use_pci_p2pdma, false));
    if (p2pdma_on && !p2pdma_kernel) {
      p2p.verdict = Verdict::Fail;
      p2p.consequence = "cufile.json asks for P2PDMA but this kernel cannot provide it";
      p2p.remedy = "use a 6.2+ kernel or set use_pci_p2pdma false and load nvidia-fs";
    }
    out.push_back(std::move(p2p));

    const auto& c = m.cufile;
    CheckResult cf = make(id(), "cufile.json", Verdict::Pass);
    if (!c.found) {
      cf.verdict = Verdict::Warn;
      cf.evidence.push_back(c.path + " not found: library defaults apply (allow_compat_mode true)");
      cf.consequence = "cuFile falls back to POSIX silently whenever GDS is not possible";
      cf.remedy =
          "install /etc/cufile.json from the GDS packages or point CUFILE_ENV_PATH_JSON at one";
    } else if (!c.error.empty()) {
      cf.verdict = Verdict::Fail;
      cf.evidence.push_back(c.path + ": " + c.error);
      cf.consequence = "cuFile refuses to initialise with a malformed configuration";
      cf.remedy = "fix the JSON syntax of " + c.path;
    } else {
      cf.evidence.push_back(c.path + ": allow_compat_mode " + yes_no(c.allow_compat_mode, true) +
                            ", force_compat_mode " + yes_no(c.force_compat_mode, false) +
                            ", use_poll_mode " + yes_no(c.use_poll_mode, false) +
                            ", max_direct_io_size_kb " +
                            (c.max_direct_io_size_kb ? std::to_string(*c.max_direct_io_size_kb)
                                                     : std::string("16384 (default)")));
      if (c.force_compat_mode.value_or(false)) {
        cf.verdict = Verdict::Fail;
        cf.consequence = "force_compat_mode: cuFile never uses GDS, every read goes through POSIX";
        cf.remedy = "set properties.force_compat_mode false in " + c.path;
      } else if (c.allow_compat_mode.value_or(true)) {
        cf.evidence.push_back(
            "allow_compat_mode: a failed GDS setup falls back to POSIX without an error; "
            "gdsb-io reports which path really ran");
      }
    }
    out.push_back(std::move(cf));

    CheckResult udev = make(id(), "udev database", Verdict::Pass);
    udev.evidence.push_back(std::string("/run/udev/data ") +
                            (m.udev_present ? "present" : "absent"));
    if (!m.udev_present) {
      udev.verdict = Verdict::Fail;
      udev.consequence =
          "cuFile looks up ID_FS_USAGE/ID_FS_TYPE in the udev database: without it "
          "cuFileHandleRegister fails (5027/5030, \"udev property not found: ID_FS_USAGE\")";
      udev.remedy =
          "expose the host's udev database (containers: -v /run/udev:/run/udev:ro; VMs: run "
          "systemd-udevd)";
    }
    out.push_back(std::move(udev));

    CheckResult fsr = make(id(), "file systems of data mounts", Verdict::Pass);
    int capable = 0, total = 0, no_journal = 0;
    for (const auto& mt : m.mounts) {
      if (!is_data_mount(mt)) continue;
      ++total;
      std::string note;
      const Ext4Mode mode = ext4_data_mode(mt);
      std::string why = fs_incapable(mt);
      if (why.empty()) why = unreachable(ctx, mt, note);
      const std::string where = mt.target + " " + mt.fstype + " (" + mt.source + "): ";
      if (why.empty() && mode.mode == Ext4DataMode::NoJournal) {
        // The GDS documents name ext4 in ordered mode only and say nothing of an ext4
        // without a journal: reported as what it is, no verdict invented.
        ++no_journal;
        fsr.evidence.push_back(where + "ext4 without a journal, so no data mode (" +
                               mode.evidence +
                               "); the GDS documents name ext4 in ordered mode only" + note);
        continue;
      }
      capable += why.empty() ? 1 : 0;
      fsr.evidence.push_back(where + (why.empty() ? "GDS-capable" + note : why) +
                             (mode.evidence.empty() ? "" : " (" + mode.evidence + ")"));
    }
    if (total == 0) {
      fsr.verdict = Verdict::Waived;
      fsr.reason = "no data file system mounted (block device, network or FUSE)";
    } else if (capable == 0 && no_journal > 0) {
      fsr.verdict = Verdict::Waived;
      fsr.reason =
          "the data file systems GDS might use are ext4 without a journal, which the GDS "
          "documents neither list nor exclude";
    } else if (capable == 0) {
      fsr.verdict = Verdict::Fail;
      fsr.consequence = "no mounted file system can serve GDS reads";
      fsr.remedy =
          "put the data on ext4 (data=ordered) or xfs on NVMe, or a GDS-enabled parallel file "
          "system";
    }
    out.push_back(std::move(fsr));
    // Without a P2P-capable path the stack's state changes nothing: facts, not failures.
    if (!ctx.model.gds_applicable())
      for (auto& r : out)
        if (r.verdict == Verdict::Fail || r.verdict == Verdict::Warn) {
          r.verdict = Verdict::Waived;
          r.reason = "fact only: " + ctx.model.applicability();
          r.remedy.clear();
        }
    return out;
  }
};

}  // namespace

std::unique_ptr<Check> make_gds_stack_check() { return std::make_unique<GdsStackCheck>(); }

}  // namespace gdsb::topo
