// cuFile ran in compat mode (POSIX through cuFile's bounce buffers), and why: forced by
// configuration, nvidia-fs not loaded, P2PDMA configured but unusable, udev database
// missing, file system not GDS-capable, O_DIRECT refused. Evidence comes from the run's
// own path evidence (gdsb-io's decide_path and cuFile's log) and the platform's facts.
#include "cufile_evidence.hpp"
#include "gdsb/gds_storage.hpp"
#include "gdsb/topo/ext4_mode.hpp"
#include "gdsb/topo/mounts.hpp"
#include "gdsb/topo/p2pdma.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

using detail::add_unique;
using detail::lines_with;

struct Cause {
  std::string why;  // completes "cuFile in compat mode: "
  Confidence confidence;
  std::vector<std::string> evidence;
  std::string fix;
};

const topo::Mount* mount_of(const Platform* p, const std::string& file) {
  if (!p || !p->snapshot->machine.proc_known) return nullptr;
  return topo::mount_holding(p->snapshot->machine.mounts, file);
}

constexpr const char* kUdevFix =
    "expose /run/udev to the process (containers: -v /run/udev:/run/udev:ro) or start "
    "systemd-udevd so /run/udev/data/b<major>:<minor> exists";

// cuFile finds a file's file system through the udev record of its block device. The
// database is missing for certain when the platform snapshot or gdsb-io's check of the
// record says so; cuFile's own lookup failure alone may also be a device udev records no
// file system for (device mapper, md).
std::optional<Cause> udev_cause(const RunResult& r, const Platform* p) {
  auto ev = detail::udev_record_missing(r);
  const bool certain = !ev.empty() ||
                       (p && p->snapshot->machine.proc_known && !p->snapshot->machine.udev_present);
  for (const auto& l : detail::udev_lookup_failures(r)) add_unique(ev, l);
  if (p && p->snapshot->machine.proc_known && !p->snapshot->machine.udev_present)
    ev.push_back("/run/udev/data absent in the platform snapshot");
  if (certain) return Cause{"the udev database is missing", Confidence::Certain, ev, kUdevFix};
  if (ev.empty()) return std::nullopt;
  return Cause{"cuFile found no udev file-system record for the file's block device",
               Confidence::Likely, ev,
               "udevadm info --query=property --name=<device> must list ID_FS_TYPE and "
               "ID_FS_USAGE; device-mapper (LVM) and md volumes are not GDS-capable, so put the "
               "data on ext4 or xfs directly on NVMe; in a container, " + std::string(kUdevFix)};
}

// Without nvidia-fs, cuFile reaches NVMe only through P2PDMA mode: on a platform with NVMe
// drives, its missing facts (gdsb/topo/p2pdma.hpp) are why compat mode ran, each with its fix.
std::optional<topo::P2pdmaReadiness> p2pdma_not_ready(const Platform* p) {
  if (!p || !p->snapshot->machine.proc_known || p->snapshot->machine.nvidia_fs_loaded ||
      p->snapshot->with_role(topo::Role::Nvme).empty())
    return std::nullopt;
  topo::P2pdmaReadiness r = topo::p2pdma_readiness(*p->snapshot);
  // cufile.json's key alone is the generic cause's fix ("or set use_pci_p2pdma"); a missing
  // host fact is what that fix would not mend.
  for (const topo::P2pdmaFact* f : r.with(topo::FactState::Missing))
    if (f->name != topo::kP2pdmaFactNames[7]) return r;
  return std::nullopt;
}

std::vector<std::string> p2pdma_evidence(const topo::P2pdmaReadiness& r) {
  std::vector<std::string> ev;
  for (const topo::P2pdmaFact* f : r.with(topo::FactState::Missing))
    ev.push_back("P2PDMA " + f->name + ": " + f->evidence);
  return ev;
}

std::string p2pdma_fixes(const topo::P2pdmaReadiness& r) {
  std::string fix;
  for (const topo::P2pdmaFact* f : r.with(topo::FactState::Missing))
    fix += (fix.empty() ? "" : "; ") + f->name + ": " + f->fix;
  return fix;
}

std::vector<Cause> causes_of(const RunResult& r, const Platform* p) {
  std::vector<Cause> out;
  const auto p2pdma = p2pdma_not_ready(p);
  const auto forced = lines_with(r, {"CUFILE_FORCE_COMPAT_MODE=true", "force_compat_mode is true",
                                     "force_compat_mode=true"});
  if (!forced.empty())
    out.push_back({"cufile.json or the environment forces it", Confidence::Certain, forced,
                   "set \"properties\": {\"force_compat_mode\": false} in cufile.json "
                   "(CUFILE_ENV_PATH_JSON or /etc/cufile.json) and unset CUFILE_FORCE_COMPAT_MODE"});
  const auto no_nvfs = lines_with(r, {"nvidia-fs not loaded", "nvidia-fs module is not loaded"});
  const auto p2p_on = lines_with(r, {"use_pci_p2pdma=true"});
  const auto p2p_off_driver = lines_with(r, {"P2P feature off"});
  if (!no_nvfs.empty() && forced.empty() && p2pdma) {
    // The platform names what P2PDMA mode lacks: "compat because RMForceStaticBar1 is not set".
    auto ev = no_nvfs;
    for (const auto& l : p2p_on) add_unique(ev, l);
    for (const auto& l : p2p_off_driver) add_unique(ev, l);
    for (const auto& l : p2pdma_evidence(*p2pdma)) add_unique(ev, l);
    out.push_back({"nvidia-fs is not loaded and P2PDMA mode cannot engage: " + p2pdma->why_not(),
                   Confidence::Certain, ev,
                   p2pdma_fixes(*p2pdma) + "; or load nvidia-fs instead: sudo modprobe nvidia-fs"});
  } else if (!no_nvfs.empty() && !p2p_on.empty() && !p2p_off_driver.empty()) {
    auto ev = no_nvfs;
    ev.insert(ev.end(), p2p_on.begin(), p2p_on.end());
    ev.insert(ev.end(), p2p_off_driver.begin(), p2p_off_driver.end());
    out.push_back({"P2PDMA is configured but not enabled in the driver", Confidence::Certain, ev,
                   "P2PDMA needs kernel >= 6.2, the NVIDIA open kernel modules and CUDA 12.8+ "
                   "(cuFileDriverGetProperties must report the P2P feature); otherwise load "
                   "nvidia-fs: sudo modprobe nvidia-fs"});
  } else if (!no_nvfs.empty() && forced.empty()) {
    auto ev = no_nvfs;
    for (const auto& l : lines_with(r, {"use_pci_p2pdma"})) add_unique(ev, l);
    out.push_back({"nvidia-fs is not loaded", Confidence::Certain, ev,
                   "sudo modprobe nvidia-fs (package nvidia-fs/nvidia-gds; check "
                   "/proc/driver/nvidia-fs/version), or on kernel >= 6.2 with the open GPU "
                   "driver set \"properties\": {\"use_pci_p2pdma\": true} in cufile.json"});
  }
  if (auto udev = udev_cause(r, p)) out.push_back(std::move(*udev));
  // Only where an O_DIRECT open was tried and refused (gdsb-io's hint, cuFile's log), not
  // every line that names O_DIRECT.
  const auto odirect = lines_with(r, {"refuses O_DIRECT", "O_DIRECT failed"});
  if (!odirect.empty())
    out.push_back({"the file system refused O_DIRECT", Confidence::Certain, odirect,
                   "put the data on a file system that supports O_DIRECT (ext4, xfs) on NVMe"});
  std::string info;  // a fact about the file's mount that is no cause
  auto fs_lines = lines_with(r, {"filesystem not supported", "file system not supported",
                                 "fs-not-supported", "data=ordered"});
  if (const topo::Mount* m = mount_of(p, r.workload.file.empty() ? r.workload.directory
                                                                 : r.workload.file)) {
    const std::string where = m->source + " on " + m->target + " type " + m->fstype + " (" +
                              m->options + ")";
    const topo::Ext4Mode mode = topo::ext4_data_mode(*m);
    if (const std::string why = topo::ext4_mode_refusal(mode); !why.empty()) {
      fs_lines.push_back("mount: " + where + "; " + mode.evidence);
      out.push_back({"ext4 mount " + m->target + " uses data=" +
                         std::string(topo::ext4_data_mode_name(mode.mode)) +
                         ", GDS supports ext4 in ordered mode only",
                     Confidence::Likely, fs_lines,
                     "mount " + m->target + " with data=ordered (in /etc/fstab), then umount "
                         "and mount it (ext4 cannot change the data mode on remount)"});
      fs_lines.clear();
    } else if (mode.mode == topo::Ext4DataMode::NoJournal) {
      // What it is, not a cause: the GDS documents neither list nor exclude it.
      info = "mount: " + where + " is ext4 without a journal (" + mode.evidence +
             "); the GDS documents name ext4 in ordered mode only";
    } else if (!storage::gds_file_system(m->fstype)) {
      fs_lines.push_back("mount: " + where);
      out.push_back({"file system " + m->fstype + " is not GDS-capable", Confidence::Likely,
                     fs_lines, "put the data on ext4 (data=ordered) or xfs on NVMe, or a "
                               "GDS-capable distributed file system"});
      fs_lines.clear();
    }
  }
  if (!fs_lines.empty())
    out.push_back({"cuFile does not support the file system", Confidence::Certain, fs_lines,
                   "put the data on ext4 (data=ordered) or xfs on NVMe"});
  if (out.empty()) {
    auto ev = lines_with(r, {"compat"});
    out.push_back({"cuFile's reason: " + (ev.empty() ? std::string("not stated") : ev.front()),
                   Confidence::Likely, ev,
                   "run gdsb-io -x 0 --require-gds and read the quoted cuFile log lines"});
  }
  if (!info.empty()) out.front().evidence.push_back(info);
  return out;
}

std::vector<Finding> run(const Facts& facts) {
  std::vector<Finding> out;
  // A cuFile run that failed to register the file without a udev record never reached
  // compat mode: the same cause, named from the failure.
  for (const auto& r : facts.figures.runs) {
    if (!xfer_uses_cufile(r.workload.xfer) || r.status != RunStatus::Failed) continue;
    // gdsb-io checked the file's device: a file on no block device (tmpfs, overlay) has no
    // udev record to find, whatever the database holds.
    const auto no_block = detail::no_block_device(r);
    auto udev = no_block.empty() ? udev_cause(r, facts.platform) : std::nullopt;
    if (!udev && no_block.empty()) continue;
    Finding f;
    f.rule = "compat-mode";
    f.confidence = Confidence::Certain;
    if (!no_block.empty()) {
      f.title = "cuFile failed to open the file: it lies on no block device";
      f.evidence = no_block;
      f.fix = "put the file on ext4 or xfs on a block device (NVMe) for cuFile, or read it "
              "through a CPU path (-x 1, -x 2)";
    } else {
      f.title = "cuFile failed to open the file: " + udev->why;
      f.confidence = udev->confidence;
      f.evidence = std::move(udev->evidence);
      f.fix = std::move(udev->fix);
    }
    const GpuDiagnosis* g = facts.gpu_of(r);
    if (g) f.devices.push_back(g->label);
    detail::expect_ceiling(f, g, std::nullopt);
    out.push_back(std::move(f));
    break;
  }
  std::vector<const GpuDiagnosis*> seen;
  for (const auto& r : facts.figures.runs) {
    if (!xfer_uses_cufile(r.workload.xfer) || r.status != RunStatus::Ok ||
        path_used_of(r.path.path_used) != PathUsed::Compat)
      continue;
    const GpuDiagnosis* g = facts.gpu_of(r);
    if (std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
    seen.push_back(g);
    const auto measured = run_gb_s(r);
    if (g && g->source_kind == "virtual") {
      // No GDS fix applies: the hypervisor moves the data, compat is the expected path.
      Finding f;
      f.rule = "compat-mode";
      f.title = "cuFile in compat mode, as expected: the storage is virtual (" +
                g->virtual_storage + ")";
      f.confidence = Confidence::Possible;
      f.devices.push_back(g->label + (g->bdf.empty() ? "" : " " + g->bdf));
      f.evidence.push_back(detail::run_line(r, measured.value_or(0)) +
                           " (path_used compat: POSIX I/O through cuFile's bounce buffers)");
      if (const RunResult* x1 = facts.storage_alone())
        f.evidence.push_back("storage alone " + detail::run_line(*x1, *run_gb_s(*x1)));
      f.fix = "none on this node: GDS peer-to-peer needs a PCIe NVMe drive or a data NIC (a VM "
              "with NVMe passthrough, or bare metal)";
      detail::expect_ceiling(f, g, std::nullopt);
      out.push_back(std::move(f));
      continue;
    }
    for (auto& c : causes_of(r, facts.platform)) {
      Finding f;
      f.rule = "compat-mode";
      f.title = "cuFile in compat mode: " + c.why;
      f.confidence = c.confidence;
      if (g) f.devices.push_back(g->label + (g->bdf.empty() ? "" : " " + g->bdf));
      f.evidence.push_back(detail::run_line(r, measured.value_or(0)) +
                           " (path_used compat: POSIX I/O through cuFile's bounce buffers)");
      for (const auto& e : c.evidence) add_unique(f.evidence, e);
      if (const RunResult* x1 = facts.storage_alone())
        f.evidence.push_back("storage alone " + detail::run_line(*x1, *run_gb_s(*x1)));
      f.fix = c.fix;
      detail::expect_ceiling(f, g, measured);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

Rule compat_mode_rule() {
  return {"compat-mode",
          "cuFile fell back to compat mode: forced, nvidia-fs not loaded, P2PDMA unusable, no "
          "udev database, file system or O_DIRECT refused",
          run};
}

}  // namespace gdsb::doctor
