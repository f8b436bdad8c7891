// The health check's comparison with the known-good facts and its metrics (health.hpp).
#include "gdsb/topo/health.hpp"

#include <set>
#include <sstream>

#include "gdsb/report/openmetrics.hpp"
#include "health_labels.hpp"

namespace gdsb::topo {
namespace {

namespace om = report::openmetrics;

std::string kind_label(FactKind k) {
  switch (k) {
    case FactKind::Gpu: return "gpu";
    case FactKind::Nvme: return "nvme";
    case FactKind::Nic: return "nic";
    case FactKind::Port: return "port";
    case FactKind::Node: break;
  }
  return "node";
}

void link_metrics(std::ostream& o, const FactMap* f, const std::string& prefix, const char* what,
                  const HealthMetricsContext& ctx) {
  const std::string width = prefix + "pcie_link_width", speed = prefix + "pcie_link_transfers_per_second";
  std::ostringstream w, s;
  for (const auto& [k, v] : f ? *f : FactMap{}) {
    const auto* link = std::get_if<LinkFact>(&v);
    if (!link || k.fact != Fact::Link || k.kind == FactKind::Port) continue;
    const om::Labels l = detail::device_labels(k.bdf.text(), ctx, {{"kind", kind_label(k.kind)}});
    om::sample(w, width, l, link->width);
    if (link->width == 0) om::sample(s, speed, l, 0);
    else if (link->gts) om::sample(s, speed, l, *link->gts * 1e9);  // a speed the table lacks: no sample
  }
  om::gauge_family(o, width, std::string("PCIe link width in lanes of each GPU, NVMe drive and data NIC, ") + what + " (0: link down)");
  o << w.str();
  om::gauge_family(o, speed,
                   std::string("PCIe link rate in transfers per second of each device (a GPU's: the most it and its "
                               "slot can train to, not its idle rate), ") +
                       what + " (0: link down)");
  o << s.str();
}

// A data NIC's RDMA ports: rate in bits per second (base 1000, as the kernel's Gb/sec) and
// whether the port is ACTIVE, each only where the facts hold it. Labelled by the NIC's PCI
// function, its RDMA device and the port number, so a port that goes DOWN keeps its series.
void port_metrics(std::ostream& o, const FactMap* f, const std::string& prefix, const char* what,
                  const HealthMetricsContext& ctx) {
  const std::string rate = prefix + "nic_port_rate_bits_per_second", up = prefix + "nic_port_up";
  std::ostringstream r, u;
  for (const auto& [k, v] : f ? *f : FactMap{}) {
    if (k.kind != FactKind::Nic || (k.fact != Fact::RdmaRate && k.fact != Fact::RdmaState)) continue;
    const om::Labels l =
        detail::device_labels(k.bdf.text(), ctx, {{"rdma_dev", k.rdma_dev}, {"port", std::to_string(k.port)}});
    if (const auto* g = std::get_if<Gbps>(&v)) om::sample(r, rate, l, g->gbps * 1e9);
    if (const auto* state = std::get_if<std::string>(&v); state && k.fact == Fact::RdmaState)
      om::sample(u, up, l, *state == "ACTIVE" ? 1 : 0);
  }
  om::gauge_family(o, rate, std::string("Rate in bits per second of each data NIC's RDMA port, ") + what);
  o << r.str();
  om::gauge_family(o, up, std::string("1 when the data NIC's RDMA port is ACTIVE, 0 in any other state, ") + what);
  o << u.str();
}

}  // namespace

std::vector<HealthDifference> compare_with_expected(const Fingerprint& now_facts, const FactMap& expected) {
  const FactMap& now = now_facts.facts;
  std::vector<HealthDifference> devices, facts;
  std::set<FactKey> gone;  // subjects absent now: their other facts are not repeated
  for (const auto& [k, v] : expected)
    if (k.is_presence() && now.count(k) == 0) {
      devices.push_back({k, "absent", value_text(v), key_text(k) + " absent, expected " + value_text(v)});
      gone.insert(k);
    }
  for (const auto& [k, v] : now)
    if (k.is_presence() && expected.count(k) == 0)
      devices.push_back({k, value_text(v), "absent", key_text(k) + " " + value_text(v) + ", expected absent"});
  // An RDMA port whose state is not as expected is one line: a DOWN port's rate says nothing.
  std::set<FactKey> port_changed;
  for (const auto& [k, want] : expected)
    if (k.fact == Fact::RdmaState && !(now.count(k) && now.at(k) == want)) port_changed.insert(k);
  for (const auto& [k, want] : expected) {
    if (k.is_presence()) continue;
    if (k.kind != FactKind::Node && gone.count(k.subject())) continue;
    if (k.fact != Fact::RdmaState && port_changed.count(FactKey{k.kind, k.bdf, Fact::RdmaState, k.port})) continue;
    const auto it = now.find(k);
    if (it == now.end()) {
      const auto u = now_facts.unreadable.find(k);
      const Unreadable why = u != now_facts.unreadable.end() ? u->second : Unreadable{"this input does not record it", false};
      facts.push_back({k, "cannot read", value_text(want), "cannot read " + key_text(k) + " now (" + why.why + ")",
                       !why.chosen});
      continue;
    }
    if (it->second != want)  // named as now (an RDMA device's name as the kernel gives it today)
      facts.push_back({it->first, value_text(it->second), value_text(want),
                       key_text(it->first) + " " + value_text(it->second) + ", expected " + value_text(want)});
  }
  devices.insert(devices.end(), facts.begin(), facts.end());
  return devices;
}

std::string health_openmetrics(const Fingerprint* now, const FactMap* expected,
                               const std::vector<HealthDifference>& differences,
                               const HealthMetricsContext& ctx, const FaultMetrics& faults) {
  std::ostringstream o;
  om::generator_info(o, ctx.tool, ctx.version);
  om::gauge_family(o, "gdsb_health_info", "The health check: node, known-good file (always 1)");
  om::sample(o, "gdsb_health_info", {{"node", ctx.node}, {"expect", ctx.expect_file}}, 1);
  const bool collected = now != nullptr && expected != nullptr;
  om::gauge_family(o, "gdsb_health_collected",
                   "1 when the node's facts were collected and compared; 0 when the check itself failed "
                   "(a timeout, an NVML error, an unreadable input or known-good file): the node is not known good");
  om::sample(o, "gdsb_health_collected", {}, collected ? 1 : 0);
  size_t problems = 0;
  for (const auto& d : differences) problems += d.problem ? 1 : 0;
  if (!collected && problems == 0) problems = 1;
  om::gauge_family(o, "gdsb_health_problems", "Differences from the known-good fingerprint (0: healthy)");
  om::sample(o, "gdsb_health_problems", {}, static_cast<double>(problems));
  om::gauge_family(o, "gdsb_health_last_check_timestamp_seconds", "When the check ran (Unix time)");
  om::sample(o, "gdsb_health_last_check_timestamp_seconds", {}, ctx.checked_at_unix_s);
  om::gauge_family(o, "gdsb_health_problem_info",
                   "One per difference: the fact, its value now and the known-good value (always 1)");
  for (const auto& d : differences) {
    if (!d.problem) continue;
    om::sample(o, "gdsb_health_problem_info",
               detail::device_labels(d.key ? d.key->bdf.text() : "", ctx,
                                     {{"fact", d.key ? key_text(*d.key) : d.words},
                                      {"now", d.now},
                                      {"expected", d.expected}}),
               1);
  }
  const DeviceCounts have = now ? count_devices(*now) : DeviceCounts{};
  const DeviceCounts want = expected ? count_devices(*expected) : DeviceCounts{};
  om::gauge_family(o, "gdsb_health_devices", "GPUs, NVMe drives and data NICs present now");
  om::sample(o, "gdsb_health_devices", {{"kind", "gpu"}}, have.gpus);
  om::sample(o, "gdsb_health_devices", {{"kind", "nvme"}}, have.drives);
  om::sample(o, "gdsb_health_devices", {{"kind", "nic"}}, have.data_nics);
  om::gauge_family(o, "gdsb_health_expected_devices", "GPUs, NVMe drives and data NICs of the known-good fingerprint");
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "gpu"}}, want.gpus);
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "nvme"}}, want.drives);
  om::sample(o, "gdsb_health_expected_devices", {{"kind", "nic"}}, want.data_nics);
  om::gauge_family(o, "gdsb_health_device_present",
                   "1 when the device is present now, 0 when only the known-good fingerprint holds it");
  std::set<FactKey> subjects;
  for (const FactMap* f : {now ? &now->facts : nullptr, expected})
    if (f)
      for (const auto& [k, v] : *f)
        if (k.is_presence() && k.kind != FactKind::Port) subjects.insert(k);
  for (const auto& s : subjects)
    om::sample(o, "gdsb_health_device_present",
               detail::device_labels(s.bdf.text(), ctx, {{"kind", kind_label(s.kind)}}),
               now && now->facts.count(s) ? 1 : 0);
  link_metrics(o, now ? &now->facts : nullptr, "gdsb_health_", "now", ctx);
  link_metrics(o, expected, "gdsb_health_expected_", "known-good", ctx);
  port_metrics(o, now ? &now->facts : nullptr, "gdsb_health_", "now", ctx);
  port_metrics(o, expected, "gdsb_health_expected_", "known-good", ctx);
  fault_metrics(o, faults, ctx);
  o << om::kEof;
  return o.str();
}

}  // namespace gdsb::topo
