// Metamorphic invariants of the network-storage judgement (issue 25) on the HGX node with
// network facts (hgx_recording.hpp): an edit that touches one mount or one NIC changes what
// depends on it and nothing else, and ceilings move the way a flow over shared links must.
// The expected relations are the invariants themselves, never a copy of an earlier output.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gdsb/topo/network_storage.hpp"
#include "hgx_recording.hpp"
#include "topo_test_util.hpp"

namespace gdsb::topo::testing {
namespace {

// Everything a ceiling, hop, carrier or verdict says, as one comparable text.
std::string text(const std::optional<double>& v) {
  std::ostringstream o;
  o << (v ? std::to_string(*v) : "unknown");
  return o.str();
}

std::string text(const PathHop& h) {
  return std::string(hop_kind_name(h.kind)) + "|" + h.device + "|" + h.key + "|" + text(h.gb_s) +
         "|" + std::string(capacity_source_name(h.source)) + "|" + h.what;
}

std::string text(const Ceiling& c) {
  std::string out = c.gpu + "|" + text(c.gb_s) + "|" + c.limited_by + "|" + c.basis + "|peers";
  for (const auto& p : c.peers) out += " " + p;
  for (const auto& h : c.hops) out += "\n  " + text(h);
  return out;
}

std::string text(const MountCarrier& c) {
  std::string out = c.netdev + "|" + c.bdf + "|" + c.rdma_dev + "|" + std::to_string(c.rdma_port) +
                    "|" + c.how + "|" + c.rdma_state + "|" + c.nearest_gpu;
  for (const auto& g : c.gpus)
    out += " " + g.gpu + ":" + g.label + ":" + std::string(path_label_name(g.path));
  return out;
}

std::string text(const NetworkMount& nm) {
  std::string out = nm.mount->source + " " + nm.mount->target + " " + nm.mount->fstype + " " +
                    nm.mount->options + "|" + nm.kind + "|" + nm.transport.name + "|" +
                    std::string(engage_name(nm.engage)) + "|" + nm.why + "|" + nm.what_to_run +
                    "|" + nm.carriers_note + "|servers";
  for (const auto& s : nm.servers) out += " " + s;
  for (const auto& c : nm.carriers) out += "\n  " + text(c);
  return out;
}

std::string text(const CheckResult& r) {
  std::string out = r.id + "|" + r.title + "|" + std::string(verdict_name(r.verdict)) + "|" +
                    r.consequence + "|" + r.remedy + "|" + r.reason + "|devices";
  for (const auto& d : r.devices) out += " " + d;
  for (const auto& e : r.evidence) out += "\n  " + e;
  return out;
}

const NetworkMount& mount_at(const std::vector<NetworkMount>& v, const std::string& target) {
  for (const auto& nm : v)
    if (nm.mount->target == target) return nm;
  throw std::runtime_error("no network mount at " + target);
}

const Report::MountCeilings& ceilings_at(const Report& r, const std::string& target) {
  for (const auto& mc : r.mount_ceilings)
    if (mc.target == target) return mc;
  throw std::runtime_error("no mount ceiling for " + target);
}

std::string text(const Report::MountCeilings& mc) {
  std::string out = mc.target + "|" + mc.kind + "\n node " + text(mc.node);
  for (const auto& g : mc.gpus) out += "\n gpu " + text(g);
  return out;
}

// A port at a recorded rate, number and text ("400 Gb/sec (4X)"), so its network hop has a
// figure.
void set_rate(RdmaPort& p, double gbps) {
  std::ostringstream t;
  t << gbps << " Gb/sec (4X)";
  p.rate = t.str();
  p.rate_gbps = gbps;
}

// Two NFS mounts over RDMA on different NICs: /mnt/a to 10.10.1.5 through ib0 (the HGX
// network's own storage subnet), /mnt/b to 10.10.3.5 through ib3 (a second /24 added here).
std::string nfs(const std::string& target, const std::string& server, const std::string& proto,
                const std::string& extra = "") {
  return server + ":/export " + target + " nfs4 rw,relatime,vers=4.1,hard,proto=" + proto +
         (proto == "rdma" ? ",port=20049" : "") + ",timeo=600,retrans=2,sec=sys" + extra +
         ",addr=" + server + " 0 0";
}

Snapshot two_mounts(const std::string& proto_a, const std::string& proto_b) {
  Snapshot s =
      hgx_with_network({nfs("/mnt/a", "10.10.1.5", proto_a), nfs("/mnt/b", "10.10.3.5", proto_b)});
  NetworkFacts& n = s.machine.network;
  n.interfaces[3].addresses = {"10.10.3.21/24"};
  n.routes.push_back({"10.10.3.0/24", "", "ib3", 0});
  for (auto& d : n.rdma_devices) set_rate(d.ports[0], 400);
  return s;
}

// proto=rdma -> proto=tcp on one of two NFS mounts: that mount's verdict turns (yes -> no) and
// nothing else does. The other mount's NetworkMount and ceilings, the flipped mount's carriers
// and ceilings, every data path, every NIC ceiling and every check result that does not speak
// of the flipped mount are identical; the file-system result differs only in its line.
TEST(TopoInvariantsNetwork, FlippingOneMountToTcpChangesOnlyThatMountsVerdict) {
  for (const std::string flipped : {"/mnt/a", "/mnt/b"}) {
    SCOPED_TRACE(flipped);
    const std::string other = flipped == "/mnt/a" ? "/mnt/b" : "/mnt/a";
    const Outcome before = evaluate_snapshot(two_mounts("rdma", "rdma"));
    const Outcome after = evaluate_snapshot(flipped == "/mnt/a" ? two_mounts("tcp", "rdma")
                                                                : two_mounts("rdma", "tcp"));
    const auto nb = network_mounts(before.snapshot, before.view.get());
    const auto na = network_mounts(after.snapshot, after.view.get());
    ASSERT_EQ(nb.size(), 2U);
    ASSERT_EQ(na.size(), 2U);

    EXPECT_EQ(mount_at(nb, flipped).engage, Engage::Yes) << mount_at(nb, flipped).why;
    EXPECT_EQ(mount_at(na, flipped).engage, Engage::No) << mount_at(na, flipped).why;
    EXPECT_EQ(mount_at(na, flipped).transport.name, "tcp");
    EXPECT_EQ(text(mount_at(na, other)), text(mount_at(nb, other)));
    ASSERT_EQ(mount_at(na, flipped).carriers.size(), mount_at(nb, flipped).carriers.size());
    for (size_t i = 0; i < mount_at(nb, flipped).carriers.size(); ++i)
      EXPECT_EQ(text(mount_at(na, flipped).carriers[i]), text(mount_at(nb, flipped).carriers[i]));
    for (const std::string& t : {flipped, other}) {
      EXPECT_TRUE(ceilings_at(before.report, t).node.gb_s)
          << ceilings_at(before.report, t).node.limited_by;
      EXPECT_EQ(text(ceilings_at(after.report, t)), text(ceilings_at(before.report, t))) << t;
    }

    ASSERT_EQ(after.report.data_paths.size(), before.report.data_paths.size());
    for (size_t i = 0; i < before.report.data_paths.size(); ++i)
      for (size_t h = 0; h < before.report.data_paths[i].hops.size(); ++h)
        EXPECT_EQ(text(after.report.data_paths[i].hops.at(h)),
                  text(before.report.data_paths[i].hops[h]));
    ASSERT_EQ(after.report.nic_ceilings.size(), before.report.nic_ceilings.size());
    for (size_t i = 0; i < before.report.nic_ceilings.size(); ++i)
      EXPECT_EQ(text(after.report.nic_ceilings[i]), text(before.report.nic_ceilings[i]));
    EXPECT_EQ(text(after.report.node_nic), text(before.report.node_nic));

    // Check results: those that do not name the flipped mount are identical; the ones that
    // do keep every evidence line of the other mount.
    ASSERT_EQ(after.report.checks.size(), before.report.checks.size());
    int differing = 0;
    for (size_t i = 0; i < before.report.checks.size(); ++i) {
      const CheckResult &b = before.report.checks[i], &a = after.report.checks[i];
      if (text(a) == text(b)) continue;
      ++differing;
      EXPECT_TRUE(any_contains(b.evidence, flipped) || any_contains(a.evidence, flipped))
          << "changed without naming " << flipped << ":\n"
          << text(b) << "\n->\n"
          << text(a);
      auto of_other = [&](const CheckResult& r) {
        std::vector<std::string> out;
        for (const auto& e : r.evidence)
          if (e.find(other) != std::string::npos && e.find(flipped) == std::string::npos)
            out.push_back(e);
        return out;
      };
      EXPECT_EQ(of_other(a), of_other(b)) << b.id << " / " << b.title;
    }
    EXPECT_GE(differing, 1);  // the file-system result at least: the flipped mount's line
  }
}

// One NFS mount over RDMA carried by ib0, then by ib0 and ib<k>, in the two ways a carrier is
// found: VAST's localports= (ib0 -> ib0~ib<k>), and a route (the mount names a second server,
// 10.20.<k>.5, and a route to its /24 through ib<k> is added). The second carrier adds a source
// of at most its port's rate to the flow, so the mount's ceiling, node-wide and into each GPU,
// never falls and rises by at most that rate (Gb/s / 8 = GB/s). ib4 and ib5 are DOWN in this
// network: they add nothing. Ports at 200 Gb/s but ib<k> at 400, in both snapshots, so a rise
// is possible where the links allow it.
TEST(TopoInvariantsNetwork, AddingACarrierRaisesTheMountCeilingByAtMostItsRate) {
  auto node = [](size_t k, const std::string& options) {
    Snapshot s = hgx_with_network({nfs("/mnt/a", "10.10.1.5", "rdma", options)});
    for (auto& d : s.machine.network.rdma_devices) set_rate(d.ports[0], 200);
    set_rate(s.machine.network.rdma_devices[k].ports[0], 400);
    return s;
  };
  int rose[2] = {0, 0};  // by localports=, by a route
  for (size_t k = 1; k < 8; ++k) {
    const std::string ib = "ib" + std::to_string(k), subnet = "10.20." + std::to_string(k);
    const double added = 400 / 8.0;
    std::vector<std::pair<Snapshot, Snapshot>> edits;
    edits.emplace_back(node(k, ",localports=ib0"), node(k, ",localports=ib0~" + ib));
    const std::string two_servers = ",remoteports=10.10.1.5~" + subnet + ".5";
    edits.emplace_back(node(k, two_servers), node(k, two_servers));
    edits.back().second.machine.network.routes.push_back({subnet + ".0/24", "", ib, 0});
    for (auto& [b, a] : edits) {
      SCOPED_TRACE(ib + (&b == &edits.front().first ? " by localports=" : " by a route"));
      const Outcome before = evaluate_snapshot(std::move(b)),
                    after = evaluate_snapshot(std::move(a));
      ASSERT_EQ(network_mounts(before.snapshot, before.view.get()).front().carriers.size(), 1U);
      ASSERT_EQ(network_mounts(after.snapshot, after.view.get()).front().carriers.size(), 2U);
      const auto &mb = ceilings_at(before.report, "/mnt/a"),
                 &ma = ceilings_at(after.report, "/mnt/a");
      ASSERT_TRUE(mb.node.gb_s && ma.node.gb_s)
          << mb.node.limited_by << " / " << ma.node.limited_by;
      EXPECT_GE(*ma.node.gb_s, *mb.node.gb_s - 1e-9) << text(mb.node) << "\n->\n" << text(ma.node);
      EXPECT_LE(*ma.node.gb_s, *mb.node.gb_s + added + 1e-9) << text(mb.node) << "\n->\n"
                                                             << text(ma.node);
      if (*ma.node.gb_s > *mb.node.gb_s + 1e-9) ++rose[&b == &edits.front().first ? 0 : 1];
      ASSERT_EQ(ma.gpus.size(), mb.gpus.size());
      for (size_t g = 0; g < mb.gpus.size(); ++g) {
        if (!mb.gpus[g].gb_s) continue;
        ASSERT_TRUE(ma.gpus[g].gb_s) << ma.gpus[g].limited_by;
        EXPECT_GE(*ma.gpus[g].gb_s, *mb.gpus[g].gb_s - 1e-9) << mb.gpus[g].gpu;
        EXPECT_LE(*ma.gpus[g].gb_s, *mb.gpus[g].gb_s + added + 1e-9) << mb.gpus[g].gpu;
      }
    }
  }
  EXPECT_GE(rose[0], 1);  // not vacuous: some second carrier did raise it, in each way
  EXPECT_GE(rose[1], 1);
}

// Halving one port's rate (ib<k>: 400 -> 200 Gb/s, number and text) changes that port's network
// hop only: every other hop of every data path, every NIC ceiling and every mount ceiling that
// does not count ib<k>'s NIC are identical, and no ceiling that counts it rises.
TEST(TopoInvariantsNetwork, HalvingOnePortsRateChangesOnlyWhatCountsThatNic) {
  const Outcome before = evaluate_snapshot(two_mounts("rdma", "rdma"));
  for (size_t k = 0; k < 8; ++k) {
    SCOPED_TRACE("ib" + std::to_string(k));
    Snapshot s = two_mounts("rdma", "rdma");
    set_rate(s.machine.network.rdma_devices[k].ports[0], 200);
    const Outcome after = evaluate_snapshot(std::move(s));
    const std::string nic = kHgx[k].nic;
    int network_hops_changed = 0;
    ASSERT_EQ(after.report.data_paths.size(), before.report.data_paths.size());
    for (size_t i = 0; i < before.report.data_paths.size(); ++i) {
      const auto &hb = before.report.data_paths[i].hops, &ha = after.report.data_paths[i].hops;
      ASSERT_EQ(ha.size(), hb.size());
      for (size_t h = 0; h < hb.size(); ++h) {
        if (hb[h].kind == HopKind::Network && hb[h].device == nic) {
          network_hops_changed += text(ha[h]) != text(hb[h]);
          continue;
        }
        EXPECT_EQ(text(ha[h]), text(hb[h]));
      }
    }
    if (k != 4 && k != 5) {  // a DOWN port carries nothing: no network hop of its own
      EXPECT_GE(network_hops_changed, 1);
    }
    auto same_unless_counted = [&](const Ceiling& b, const Ceiling& a) {
      const bool counts = std::find(b.peers.begin(), b.peers.end(), nic) != b.peers.end();
      if (!counts) {
        EXPECT_EQ(text(a), text(b));
      } else if (a.gb_s && b.gb_s) {
        EXPECT_LE(*a.gb_s, *b.gb_s + 1e-9) << text(b) << "\n->\n" << text(a);
      }
    };
    ASSERT_EQ(after.report.nic_ceilings.size(), before.report.nic_ceilings.size());
    for (size_t i = 0; i < before.report.nic_ceilings.size(); ++i)
      same_unless_counted(before.report.nic_ceilings[i], after.report.nic_ceilings[i]);
    same_unless_counted(before.report.node_nic, after.report.node_nic);
    for (const std::string t : {"/mnt/a", "/mnt/b"}) {
      const auto &mb = ceilings_at(before.report, t), &ma = ceilings_at(after.report, t);
      same_unless_counted(mb.node, ma.node);
      ASSERT_EQ(ma.gpus.size(), mb.gpus.size());
      for (size_t g = 0; g < mb.gpus.size(); ++g) same_unless_counted(mb.gpus[g], ma.gpus[g]);
    }
  }
}

}  // namespace
}  // namespace gdsb::topo::testing
