// GDS software stack: nvidia-fs, kernel P2PDMA, cufile.json, udev database, file systems.
#include <algorithm>
#include <cstdio>
#include <set>

#include "check_util.hpp"
#include "gdsb/gds_storage.hpp"
#include "gdsb/topo/ext4_mode.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/network_storage.hpp"
#include "gdsb/topo/p2pdma.hpp"
#include "gdsb/topo/path_model.hpp"

namespace gdsb::topo {
namespace {

// cuFile's P2PDMA mode (gdsb/topo/p2pdma.hpp): the verdict first, then each fact with its
// evidence; the fixes of the missing ones are the remedy.
CheckResult p2pdma_result(const std::string& id, const Machine& m, const P2pdmaReadiness& r) {
  CheckResult c = make(id, "P2PDMA mode (GDS without nvidia-fs)", Verdict::Pass);
  c.evidence.push_back(r.verdict());
  for (const P2pdmaFact& f : r.facts)
    c.evidence.push_back(f.name + " [" + std::string(fact_state_name(f.state)) + "]: " + f.evidence);
  if (r.ready()) return c;
  const auto missing = r.with(FactState::Missing);
  for (const P2pdmaFact* f : missing) c.remedy += (c.remedy.empty() ? "" : "; ") + f->name + ": " + f->fix;
  const bool asked = m.cufile.use_pci_p2pdma.value_or(false);
  if (missing.empty()) {
    c.verdict = Verdict::Waived;
    c.reason = r.verdict();
  } else if (asked || !m.nvidia_fs_loaded) {
    c.verdict = Verdict::Fail;
    c.consequence = std::string(asked ? "cufile.json asks for P2PDMA mode" : "nvidia-fs is not loaded") +
                    " and P2PDMA mode cannot engage: cuFile reads NVMe in compat mode (POSIX "
                    "through its bounce buffers), or fails where allow_compat_mode is false";
  } else {
    c.verdict = Verdict::Waived;
    c.reason = "fact only: nvidia-fs serves GDS here and cufile.json does not ask for P2PDMA mode";
  }
  return c;
}

std::string yes_no(const std::optional<bool>& v, bool dflt) {
  return v ? (*v ? "true" : "false") : std::string(dflt ? "true" : "false") + " (default)";
}

bool is_data_mount(const Mount& m, const NetworkMount* net) {
  if (net) return true;  // a network mount is data wherever it is mounted
  static const std::set<std::string> kSkipFs{"squashfs", "iso9660",  "vfat",   "proc",
                                             "sysfs",    "devtmpfs", "devpts", "cgroup",
                                             "cgroup2",  "tmpfs",    "autofs", "mqueue"};
  for (const char* sys : {"/proc", "/sys", "/dev", "/run", "/boot", "/snap"})
    if (path_within(m.target, sys)) return false;
  if (kSkipFs.count(m.fstype)) return false;
  const storage::GdsFileSystem* fs = storage::gds_file_system(m.fstype);
  return m.source.rfind("/dev/", 0) == 0 || m.fstype == "overlay" ||
         m.fstype.rfind("fuse", 0) == 0 || (fs && fs->reach == storage::Reach::Network);
}

// What GDS can do with one data mount, and the words that say why.
struct MountJudgement {
  // NotApplicable: a network mount over TCP on a node without any RDMA device: GDS reaches
  // no network storage there, a fact of the hardware (as a node without NVMe), not a fault.
  enum Kind { Capable, Incapable, Unknown, NotApplicable } kind = Capable;
  std::string text;  // Incapable/Unknown: why; Capable: what it stands on, may be ""
  std::string note;  // what this input does not show
};

// The drives under a local mount, each found among the PCI devices by its exact name.
MountJudgement judge_drives(const CheckContext& ctx, const std::vector<std::string>& drives) {
  MountJudgement j;
  if (drives.empty()) j.note = " (its drive is not identified in this input)";
  for (const std::string& drive : drives) {
    const Device* found = nullptr;
    std::string disk;
    for (const Device& d : ctx.snapshot.devices)
      for (const auto& b : d.block_devices)
        if (!found && is_on_disk(drive, b)) {
          found = &d;
          disk = b;
        }
    if (!found) {
      j.note += " (drive " + drive + " is not identified in this input)";
    } else if (std::string v = virtual_device_kind(*found); !v.empty()) {
      return {MountJudgement::Incapable,
              "on virtual storage " + found->bdf + " " + disk + " (" + v +
                  "): GDS cannot reach it, cuFile reads it in compat mode",
              ""};
    } else {
      j.text += (j.text.empty() ? "on " : ", ") + disk + " (" + found->bdf + ")";
    }
  }
  return j;
}

// A network mount's verdict (gdsb/topo/network_storage.hpp) in the check's words, with its
// carriers and their GPU locality.
MountJudgement judge_network(const NetworkMount& nm) {
  std::string carriers;
  for (const MountCarrier& c : nm.carriers)
    carriers += (carriers.empty() ? "" : ", ") + describe_carrier(c);
  const std::string carried =
      carriers.empty() ? (nm.carriers_note.empty() ? "" : "; carriers: " + nm.carriers_note)
                       : "; carried by " + carriers;
  switch (nm.engage) {
    case Engage::Yes: return {MountJudgement::Capable, "(" + nm.kind + ": " + nm.why + ")" + carried, ""};
    case Engage::No:
      return {nm.node_without_rdma && nm.transport.kind == TransportKind::Socket
                  ? MountJudgement::NotApplicable
                  : MountJudgement::Incapable,
              nm.kind + ": " + nm.why + carried, ""};
    case Engage::Unknown: break;
  }
  return {MountJudgement::Unknown,
          nm.kind + ": " + nm.why +
              (nm.what_to_run.empty() ? "" : " (to decide, run: " + nm.what_to_run + ")") + carried,
          ""};
}

MountJudgement judge_storage(const CheckContext& ctx, const Mount& m, const NetworkMount* net) {
  const Machine& host = ctx.snapshot.machine;
  const storage::GdsFileSystem* fs = storage::gds_file_system(m.fstype);
  if (!fs && net) return judge_network(*net);
  if (!fs)
    return {MountJudgement::Incapable,
            m.fstype + " is not supported by GDS (cuFile uses compat mode or fails with 5008)", ""};
  if (std::string why = ext4_mode_refusal(ext4_data_mode(m)); !why.empty())
    return {MountJudgement::Incapable, why, ""};
  // Network file systems and NVMe-oF namespaces: the transport, nvidia-fs and the NICs decide.
  if (net) return judge_network(*net);
  if (!fs->p2pdma && !host.nvidia_fs_loaded)
    return {MountJudgement::Incapable,
            "GDS serves " + m.fstype + " through nvidia-fs only (not kernel P2PDMA), and "
            "nvidia-fs is not loaded",
            ""};
  const std::optional<BlockStack> stack = block_stack(host, m);
  if (!stack) return {};
  if (stack->kind == VolumeKind::DeviceMapper)
    return {MountJudgement::Incapable,
            "on device-mapper volume " + stack->describe() +
                " (LVM, dm-crypt or multipath): cuFile refuses device-mapper block devices "
                "(\"Unsupported block device\" in its log) and reads the mount in compat mode",
            ""};
  if (stack->kind == VolumeKind::MdRaid) {
    if (stack->md_level.empty())
      return {MountJudgement::Unknown,
              "on md RAID " + stack->describe() +
                  ", whose level this input does not show: GDS supports md RAID0 only, "
                  "through nvidia-fs",
              ""};
    if (stack->md_level != "raid0")
      return {MountJudgement::Unknown,
              "on md " + stack->describe() +
                  ": the GDS documents name md RAID0 only (through nvidia-fs) and say "
                  "nothing of other levels",
              ""};
    if (!host.nvidia_fs_loaded)
      return {MountJudgement::Incapable,
              "on md " + stack->describe() +
                  ": GDS reads md RAID0 through nvidia-fs only (kernel P2PDMA does not "
                  "support RAID0), and nvidia-fs is not loaded",
              ""};
    MountJudgement j = judge_drives(ctx, stack->drives);
    if (j.kind == MountJudgement::Capable) j.text = "md " + stack->describe() + ", " + j.text;
    return j;
  }
  return judge_drives(ctx, stack->drives);
}

MountJudgement judge_mount(const CheckContext& ctx, const Mount& m, const NetworkMount* net) {
  MountJudgement j = judge_storage(ctx, m, net);
  const Ext4Mode mode = ext4_data_mode(m);
  if (j.kind == MountJudgement::Capable && mode.mode == Ext4DataMode::NoJournal)
    // The GDS documents name ext4 in ordered mode only and say nothing of an ext4 without
    // a journal: reported as what it is, no verdict invented.
    return {MountJudgement::Unknown,
            "ext4 without a journal, so no data mode (" + mode.evidence +
                "); the GDS documents name ext4 in ordered mode only",
            j.note};
  return j;
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
    const P2pdmaReadiness p2pdma = p2pdma_readiness(ctx.snapshot);
    // Whether P2PDMA mode can stand in for nvidia-fs: the host's facts; each mount's storage
    // is the file-system result's to judge.
    const bool p2pdma_host_ready = std::all_of(
        p2pdma.facts.begin(), p2pdma.facts.end(), [](const P2pdmaFact& f) {
          return f.state == FactState::Met || f.state == FactState::NotNeeded ||
                 f.name == kP2pdmaFactNames[6];  // storage layout
        });

    CheckResult fs = make(id(), "nvidia-fs driver", Verdict::Pass);
    if (m.nvidia_fs_loaded) {
      fs.evidence.push_back(
          "/proc/driver/nvidia-fs present, version " +
          (m.nvidia_fs_version.empty() ? std::string("unknown") : m.nvidia_fs_version));
    } else if (p2pdma_host_ready) {
      fs.evidence.push_back("/proc/driver/nvidia-fs absent; not needed: P2PDMA mode is ready");
    } else {
      fs.verdict = Verdict::Fail;
      fs.evidence.push_back("/proc/driver/nvidia-fs absent (module not loaded)");
      fs.consequence =
          "without nvidia-fs (or a ready P2PDMA mode) cuFile cannot DMA into GPU memory: it runs "
          "in compat mode, i.e. POSIX reads through its own bounce buffers";
      fs.remedy = "modprobe nvidia-fs (packages nvidia-fs-dkms / nvidia-gds), or make P2PDMA "
                  "mode ready (gds-stack: P2PDMA mode lists what is missing)";
    }
    out.push_back(std::move(fs));
    out.push_back(p2pdma_result(id(), m, p2pdma));

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
    int capable = 0, total = 0, unknown = 0, not_applicable = 0;
    const std::vector<NetworkMount> net = network_mounts(ctx.snapshot, &ctx.model.view());
    std::vector<std::string> network_remedies;  // how GDS could engage on each network mount
    for (const NetworkMount& nm : net)
      if (nm.engage == Engage::No && !nm.remedy.empty() &&
          std::find(network_remedies.begin(), network_remedies.end(), nm.remedy) ==
              network_remedies.end())
        network_remedies.push_back(nm.remedy);
    for (const auto& mt : m.mounts) {
      const NetworkMount* nm = find_network_mount(net, mt);
      if (!is_data_mount(mt, nm)) continue;
      ++total;
      const MountJudgement j = judge_mount(ctx, mt, nm);
      const Ext4Mode mode = ext4_data_mode(mt);
      const std::string where = mt.target + " " + mt.fstype + " (" + mt.source + "): ";
      if (j.kind == MountJudgement::Unknown || j.kind == MountJudgement::NotApplicable) {
        ++(j.kind == MountJudgement::Unknown ? unknown : not_applicable);
        fsr.evidence.push_back(where + j.text + j.note);
        continue;
      }
      const bool ok = j.kind == MountJudgement::Capable;
      capable += ok ? 1 : 0;
      fsr.evidence.push_back(
          where + (ok ? "GDS-capable" + (j.text.empty() ? "" : " " + j.text) + j.note : j.text) +
          (mode.evidence.empty() ? "" : " (" + mode.evidence + ")"));
    }
    if (total == 0) {
      fsr.verdict = Verdict::Waived;
      fsr.reason = "no data file system mounted (block device, network or FUSE)";
    } else if (capable == 0 && unknown > 0) {
      fsr.verdict = Verdict::Waived;
      fsr.reason =
          "the data file systems GDS might use are on storage the GDS documents neither list "
          "nor exclude (an ext4 without a journal, an md RAID level other than 0), or are "
          "network mounts whose transport or NICs this input does not show";
    } else if (capable == 0 && not_applicable == total) {
      fsr.verdict = Verdict::Waived;
      fsr.reason =
          "GDS reads none of them on this node: they reach their data over TCP and the node "
          "has no RDMA device (GDS over a network needs a NIC that RDMAs into GPU memory)";
    } else if (capable == 0) {
      fsr.verdict = Verdict::Fail;
      fsr.consequence = "no mounted file system can serve GDS reads";
      fsr.remedy =
          "put the data on ext4 (data=ordered) or xfs on NVMe, or a GDS-enabled parallel file "
          "system";
      // A network mount says how GDS could engage on it: that first (issue 25).
      for (auto it = network_remedies.rbegin(); it != network_remedies.rend(); ++it)
        fsr.remedy = *it + "; or " + fsr.remedy;
    }
    out.push_back(std::move(fsr));
    // Without a P2P-capable path the stack's state changes nothing: facts, not failures.
    if (!ctx.model.gds_applicable())
      for (auto& r : out)
        if (r.verdict == Verdict::Fail || r.verdict == Verdict::Warn) {
          r.verdict = Verdict::Waived;
          // The applicability's why is the verdict's sentence: said there, once (issue 27).
          r.reason = "fact only: GDS does not apply on this node (Platform verification says why)";
          r.remedy.clear();
        }
    return out;
  }
};

}  // namespace

std::unique_ptr<Check> make_gds_stack_check() { return std::make_unique<GdsStackCheck>(); }

}  // namespace gdsb::topo
