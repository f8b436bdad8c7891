// A device on a GPU's storage path (the GPU, a drive, a NIC, a switch or root port: a hop of
// the path model) whose PCIe AER counters show errors: a link that keeps replaying packets
// loses throughput long before it fails, and the path is only as good as its worst hop.
// The facts are the snapshot's sysfs aer_dev_* counters (topo::HwFaults::aer), the kinds are
// rows of gdsb-topo's AER table; nothing here reads log or display text.
#include "gdsb/topo/hw_faults.hpp"
#include "gdsb/topo/path_model.hpp"
#include "rule_util.hpp"

namespace gdsb::doctor {
namespace {

uint64_t sum(const std::map<std::string, uint64_t>& kinds) {
  uint64_t n = 0;
  for (const auto& [k, v] : kinds) n += v;
  return n;
}

// "BadTLP 3 (the link had to replay a damaged packet)" for each kind that counted.
std::string kinds_line(const std::map<std::string, uint64_t>& kinds, topo::AerClass cls) {
  std::string out;
  for (const auto& [k, v] : kinds) {
    if (v == 0) continue;
    const topo::AerKindRow* row = topo::find_aer_kind(cls, k);
    out += (out.empty() ? "" : ", ") + k + " " + std::to_string(v) +
           (row ? " (" + std::string(row->meaning) + ")" : "");
  }
  return out;
}

bool slow(const GpuDiagnosis& g) { return detail::below_ceiling(g); }

std::vector<Finding> run(const Facts& facts) {
  if (!facts.platform) return {};
  std::vector<Finding> out;
  for (const auto& [bdf, c] : facts.platform->snapshot->faults.aer) {
    if (!c.counters_known) continue;  // lspci's status bits alone: set once, never a rate
    const uint64_t cor = sum(c.correctable), unc = sum(c.nonfatal) + sum(c.fatal);
    if (cor + unc == 0) continue;
    // The GPUs whose storage path crosses the device: it is a hop of theirs, or the GPU.
    const GpuDiagnosis* first = nullptr;
    const Hop* hop = nullptr;
    std::vector<std::string> gpus;
    bool any_slow = false;
    for (const auto& g : facts.gpus) {
      const Hop* on = nullptr;
      for (const auto& h : g.hops)
        if (!h.measured && h.device == bdf) on = &h;
      if (!on && g.bdf != bdf) continue;
      gpus.push_back(g.label);
      any_slow = any_slow || slow(g);
      if (!first || (slow(g) && !slow(*first))) first = &g, hop = on;
    }
    if (!first) continue;  // not on any GPU's storage path: gdsb-topo --health names it
    Finding f;
    f.rule = "aer-path";
    std::string where = hop ? std::string(topo::hop_kind_name(hop->kind)) + " " + hop->what : "GPU link";
    f.title = "PCIe errors on " + bdf + " (" + where + ") on the storage path of ";
    for (size_t i = 0; i < gpus.size(); ++i) f.title += (i ? ", " : "") + gpus[i];
    f.confidence = any_slow || unc > 0 ? Confidence::Likely : Confidence::Possible;
    f.devices = {bdf};
    for (const auto& g : gpus) detail::add_unique(f.devices, g);
    if (cor > 0)
      f.evidence.push_back(bdf + " " + std::string(topo::aer_file_name(topo::AerFile::Correctable)) + ": " +
                           std::to_string(cor) + " correctable: " +
                           kinds_line(c.correctable, topo::AerClass::Correctable));
    for (const auto& [file, kinds] : {std::pair{topo::AerFile::NonFatal, &c.nonfatal},
                                      std::pair{topo::AerFile::Fatal, &c.fatal}})
      if (sum(*kinds) > 0)
        f.evidence.push_back(bdf + " " + std::string(topo::aer_file_name(file)) + ": " +
                             kinds_line(*kinds, topo::AerClass::Uncorrectable));
    if (hop && hop->gb_s)
      f.evidence.push_back("the hop carries up to " + detail::gb(*hop->gb_s) + " (" + hop->source + ")");
    if (first->measured_gb_s && first->ceiling_gb_s)
      f.evidence.push_back(detail::measured_evidence(*first));
    f.fix = "reseat the device and replace its cable or riser (a replaying link slows before it fails); "
            "then watch the counters with gdsb-topo --health against a known-good file";
    if (unc > 0) f.fix += "; uncorrectable errors that recur: drain the node and send the part for service";
    detail::expect_ceiling(f, first, slow(*first) ? first->measured_gb_s : std::nullopt);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Rule aer_path_rule() {
  return {"aer-path", "PCIe AER errors counted on a device of a GPU's storage path", run};
}

}  // namespace gdsb::doctor
