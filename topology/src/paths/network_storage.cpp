// Network storage, end to end (issue 25): per network mount, whether GDS can engage and which
// NICs carry it. docs/gdsb-topo.md ("File systems GDS can use") cites the document behind
// every rule; each rule below names its row there.
#include "gdsb/topo/network_storage.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "gdsb/topo/mounts.hpp"
#include "network_carriers.hpp"

namespace gdsb::topo {

std::string_view engage_name(Engage e) {
  switch (e) {
    case Engage::Yes: return "yes";
    case Engage::No: return "no";
    case Engage::Unknown: break;
  }
  return "unknown";
}

namespace {

using net::CarrierFinder;
using net::join;
using net::mount_options;
using net::split;

// ---- verdicts -----------------------------------------------------------------------------

bool no_rdma_device(const NetworkFacts& n) { return n.rdma_known && n.rdma_devices.empty(); }

// The verdict of a mount whose transport is RDMA: nvidia-fs, then an ACTIVE RDMA port on a
// carrier (nvidia-fs "Key Features"; O_DIRECT guide, "Summary of Basic Requirements": for
// remote storage a NIC performs the RDMA).
void judge_rdma(NetworkMount& nm, const Snapshot& s, const std::string& evidence,
                const std::string& served) {
  const Machine& m = s.machine;
  const NetworkFacts& n = m.network;
  // The first server's address ("10.0.0.1@o2ib" is a Lustre NID: address, then its LNet).
  const std::string server =
      nm.servers.empty() ? "<server>" : nm.servers.front().substr(0, nm.servers.front().find('@'));
  if (m.proc_known && !m.nvidia_fs_loaded) {
    nm.engage = Engage::No;
    nm.why = "GDS serves " + served + " through nvidia-fs only (not kernel P2PDMA), and "
             "nvidia-fs is not loaded";
    nm.remedy = "modprobe nvidia-fs (packages nvidia-fs-dkms / nvidia-gds)";
    return;
  }
  if (!n.net_known || !n.rdma_known) {
    nm.why = evidence + ", but this input does not show the node's routes and RDMA ports";
    nm.what_to_run = "ip route get " + server + "; rdma link (or ibdev2netdev)";
    return;
  }
  std::vector<std::string> active, inactive, plain;
  for (const MountCarrier& c : nm.carriers) {
    const std::string name = c.netdev.empty() ? c.rdma_dev : c.netdev;
    const std::string port = c.rdma_dev + " port " + std::to_string(c.rdma_port);
    if (c.rdma_dev.empty())
      plain.push_back(name);
    else if (c.rdma_state == "ACTIVE")
      active.push_back(name + " (" + port + ")");
    else
      inactive.push_back(name + " (" + port + " " + c.rdma_state + ")");
  }
  if (!active.empty()) {
    nm.engage = Engage::Yes;
    nm.why = evidence + ", nvidia-fs loaded, RDMA port ACTIVE on " + join(active);
  } else if (!inactive.empty()) {
    nm.engage = Engage::No;
    nm.why = evidence + ", but no NIC that carries it has an ACTIVE RDMA port: " + join(inactive);
    nm.remedy = "bring the port up (ibstat; the cable, transceiver and switch port), or carry "
                "the mount on a NIC whose port is ACTIVE";
  } else if (!plain.empty()) {
    // The mount stands, so an RDMA path exists: the main table is not the whole story (a
    // policy routing table, ip rule, as multi-rail nodes use). Not a verdict either way.
    nm.why = evidence + ", but the main routing table sends its traffic through " + join(plain) +
             ", which has no RDMA device; another routing table (ip rule) may carry it";
    nm.what_to_run = "ip route get " + server + "; ip rule; rdma link (or ibdev2netdev)";
  } else {
    nm.why = evidence + ", but no route or local address in this input reaches " +
             (nm.servers.empty() ? std::string("its servers") : join(nm.servers));
    nm.what_to_run = "ip route get " + server + "; rdma link (or ibdev2netdev)";
  }
}

// A file system whose client picks RDMA or TCP where /proc/mounts does not show it: the
// transport is known only where the node leaves no choice (no RDMA device) or the mount
// names a socket mode (WekaFS net=udp).
void judge_hidden_transport(NetworkMount& nm, const Snapshot& s, const std::string& what_to_run,
                            const std::string& needs) {
  const Machine& m = s.machine;
  if (m.proc_known && !m.nvidia_fs_loaded) {
    nm.engage = Engage::No;
    nm.why = "GDS serves " + nm.mount->fstype +
             " through nvidia-fs only (not kernel P2PDMA), and nvidia-fs is not loaded";
    nm.remedy = "modprobe nvidia-fs (packages nvidia-fs-dkms / nvidia-gds)";
  } else if (nm.transport.kind == TransportKind::Socket) {
    nm.engage = Engage::No;
    nm.why = needs + ", and " + nm.transport.evidence;
    nm.remedy = nm.node_without_rdma
                    ? "an RDMA NIC (InfiniBand or RoCE) with its driver, near the GPUs"
                    : "mount it over the NICs with RDMA (without net=udp)";
  } else {
    nm.why = needs + "; /proc/mounts does not show which transport its client uses";
    nm.what_to_run = what_to_run;
  }
}

void judge_nfs(NetworkMount& nm, const Snapshot& s, CarrierFinder& f) {
  const auto o = mount_options(nm.mount->options);
  auto get = [&](const char* k) {
    auto it = o.find(k);
    return it == o.end() ? std::string() : it->second;
  };
  nm.kind = "NFS";
  if (!get("addr").empty()) nm.servers.push_back(get("addr"));
  if (const std::string rp = get("remoteports"); !rp.empty() && rp != "dns")
    for (const auto& a : net::expand_ports(rp))
      if (std::find(nm.servers.begin(), nm.servers.end(), a) == nm.servers.end())
        nm.servers.push_back(a);
  if (nm.servers.empty()) {
    const std::string& src = nm.mount->source;
    const auto colon = src.rfind(":/");
    if (colon != std::string::npos && colon > 0) nm.servers.push_back(src.substr(0, colon));
  }
  // The kernel binds to localports= where VAST's client is given them; else the routes.
  if (const std::string lp = get("localports"); !lp.empty()) {
    // VAST's <INT-SPEC>: local addresses ("a~b", "first-last") or interface names.
    for (const auto& a : net::expand_ports(lp))
      if (!f.by_local_address(a, "localports=" + a) && f.has_interface(a))
        f.add_netdev(a, "localports=" + a);
  } else {
    for (const auto& srv : nm.servers) f.by_route(srv);
  }
  net::add_cufile_carriers(f, s.machine.cufile, "nfs", *nm.mount);
  nm.carriers = f.take();
  const std::string port = get("port");
  const std::string& proto = nm.transport.name;
  std::string evidence = "proto=" + proto + (port.empty() ? "" : ",port=" + port);
  if (!get("vers").empty()) evidence += ",vers=" + get("vers");
  if (!get("nconnect").empty()) evidence += ",nconnect=" + get("nconnect");
  if (nm.transport.rdma()) return judge_rdma(nm, s, evidence, nm.mount->fstype);
  if (nm.transport.kind == TransportKind::Unknown) {
    nm.why = "the mount options do not name its transport (no proto=); GDS needs NFS over RDMA";
    nm.what_to_run = "nfsstat -m (proto=rdma is needed)";
    return;
  }
  nm.engage = Engage::No;
  nm.why = evidence + ": NFS over " + proto +
           " moves data through the kernel's socket buffers; GDS engages on NFS over RDMA only "
           "(proto=rdma), so cuFile reads this mount in compat mode";
  // Over IPv6 the RDMA netid is rdma6 (nfs(5)).
  const bool v6 = proto.size() > 1 && proto.back() == '6';
  nm.remedy = "remount over RDMA: umount " + nm.mount->target + "; mount -o proto=rdma" +
              (v6 ? "6" : "") + ",port=20049" + (get("vers").empty() ? "" : ",vers=" + get("vers")) +
              " " + nm.mount->source + " " + nm.mount->target +
              " (the server must export over RDMA; modprobe rpcrdma)";
}

void judge_lustre(NetworkMount& nm, const Snapshot& s, CarrierFinder& f) {
  nm.kind = "Lustre";
  std::vector<std::string> addrs;
  for (const auto& nid : net::lustre_nids(nm.mount->source)) {
    nm.servers.push_back(nid);
    if (const auto at = nid.find('@'); at != std::string::npos) addrs.push_back(nid.substr(0, at));
  }
  // LNet's own list of local interfaces per network: "o2ib0(ib0,ib1),tcp0(eth0)"; those of
  // the networks the mount's transport uses carry it.
  const std::vector<std::string> types = split(nm.transport.name, ",");
  const std::string& networks = s.machine.network.lnet_networks;
  bool from_lnet = false;
  for (size_t pos = 0; pos < networks.size();) {
    const auto open = networks.find('(', pos), close = networks.find(')', pos);
    if (open == std::string::npos || close == std::string::npos || close < open) break;
    const std::string net = split(networks.substr(pos, open - pos), ", ").back();
    for (const auto& type : types)
      if (net.rfind(type, 0) == 0 && net.find_first_not_of("0123456789", type.size()) ==
                                         std::string::npos)
        for (const auto& dev : split(networks.substr(open + 1, close - open - 1), ", ")) {
          f.add_netdev(dev, "lnet " + net + "(" + dev + ")");
          from_lnet = true;
        }
    pos = close + 1;
  }
  if (!from_lnet)
    for (const auto& a : addrs) f.by_route(a);
  net::add_cufile_carriers(f, s.machine.cufile, "lustre", *nm.mount);
  nm.carriers = f.take();
  if (nm.transport.rdma())
    return judge_rdma(nm, s, "LNet " + nm.transport.name + " (NIDs " + join(nm.servers) + ")",
                      "lustre");
  if (nm.transport.kind == TransportKind::Socket) {
    nm.engage = Engage::No;
    nm.why = "LNet over TCP (NIDs " + join(nm.servers) +
             ", ksocklnd): no RDMA, and GDS needs the NIC to RDMA into GPU memory (EXAScaler's "
             "GDS path is LNet o2ib); cuFile reads this mount in compat mode";
    nm.remedy = "configure LNet on the RDMA fabric (lnetctl net add --net o2ib0 --if <ib0>) "
                "and mount through the servers' @o2ib NIDs";
    return;
  }
  nm.why = "LNet network " + (nm.transport.name.empty() ? std::string("unknown") : nm.transport.name) +
           " (NIDs " + join(nm.servers) + "): the GDS documents name LNet o2ib only";
  nm.what_to_run = "lnetctl net show (the local NIDs and their LND)";
}

// Types no GDS document lists that reach their data over a network: still data mounts.
bool unlisted_network_fs(const std::string& fstype) {
  static const std::set<std::string> kNet{"cifs",  "smb3",   "smbfs",     "ceph",    "glusterfs",
                                          "afs",   "9p",     "orangefs",  "pvfs2",   "ncpfs",
                                          "coda",  "davfs",  "moosefs"};
  static const std::set<std::string> kFuse{
      "sshfs",      "s3fs",      "juicefs",     "ceph-fuse", "glusterfs", "gcsfuse",
      "rclone",     "goofys",    "mountpoint-s3", "blobfuse2", "hf3fs",   "hf3fs_fuse_main",
      "alluxio-fuse", "mfs",     "lizardfs",    "cvmfs2",    "geesefs",   "weed"};
  if (kNet.count(fstype)) return true;
  return fstype.rfind("fuse.", 0) == 0 && kFuse.count(fstype.substr(5));
}

void judge_unlisted(NetworkMount& nm, CarrierFinder& f) {
  nm.kind = nm.mount->fstype;
  // cifs prints the server's address as addr=; others name their servers in the source.
  const auto opts = mount_options(nm.mount->options);
  std::string host = opts.count("addr") ? opts.at("addr") : nm.mount->source;
  if (host.rfind("//", 0) == 0) host = host.substr(2, host.find('/', 2) - 2);  // cifs //srv/share
  if (auto c = host.rfind(":/"); c != std::string::npos) host = host.substr(0, c);
  for (const auto& h : split(host, ",")) {
    if (!net::is_ip_address(h)) continue;
    nm.servers.push_back(h);
    f.by_route(h);
  }
  nm.carriers = f.take();
  nm.engage = Engage::No;
  nm.why = nm.mount->fstype +
           " is a network file system no GDS document lists: cuFile reads it in compat mode "
           "(or fails with 5008 without it)";
  nm.remedy = "read the data from a file system GDS lists (NFS over RDMA, Lustre, WekaFS, IBM "
              "Storage Scale, BeeGFS, or ext4/xfs on NVMe)";
}

void judge_nvmeof(NetworkMount& nm, const Snapshot& s, const NvmeController& c,
                  CarrierFinder& f) {
  nm.kind = "NVMe-oF";
  const auto o = mount_options(c.address);
  auto get = [&](const char* k) {
    auto it = o.find(k);
    return it == o.end() ? std::string() : it->second;
  };
  if (!get("traddr").empty()) nm.servers.push_back(get("traddr"));
  const std::string src = !get("src_addr").empty() ? get("src_addr") : get("host_traddr");
  if (src.empty() || !f.by_local_address(src, "src_addr=" + src))
    for (const auto& srv : nm.servers) f.by_route(srv);
  nm.carriers = f.take();
  const std::string evidence = c.name + " transport " + c.transport +
                               (nm.servers.empty() ? "" : " to " + nm.servers.front());
  if (nm.transport.rdma()) return judge_rdma(nm, s, "NVMe-oF " + evidence, "NVMe-oF");
  if (nm.transport.kind == TransportKind::Socket) {
    nm.engage = Engage::No;
    nm.why = "NVMe/TCP (" + evidence +
             "): the data crosses the kernel's TCP stack, no NIC RDMA into GPU memory; the GDS "
             "documents name NVMe-oF through nvidia-fs over RDMA (nvme-rdma)";
    nm.remedy = "connect the namespace over RDMA (nvme connect -t rdma ...) instead of TCP";
    return;
  }
  nm.why = "NVMe-oF " + evidence + ": the GDS documents say nothing of this transport";
  nm.what_to_run = "nvme list-subsys";
}

}  // namespace

std::vector<NetworkMount> network_mounts(const Snapshot& s, const TopologyView* view) {
  std::optional<TopologyView> own;
  if (!view) view = &own.emplace(s);
  std::vector<NetworkMount> out;
  for (const Mount& m : s.machine.mounts) {
    NetworkMount nm;
    nm.mount = &m;
    nm.transport = mount_transport(s.machine, m);
    nm.node_without_rdma = no_rdma_device(s.machine.network);
    CarrierFinder f(s);
    const std::string& t = m.fstype;
    if (t == "nfs" || t == "nfs4") {
      judge_nfs(nm, s, f);
    } else if (t == "lustre") {
      judge_lustre(nm, s, f);
    } else if (t == "wekafs") {
      nm.kind = "WekaFS";
      const auto slash = m.source.find('/');
      if (slash != std::string::npos && slash > 0) nm.servers.push_back(m.source.substr(0, slash));
      // net= may repeat (one per NIC: "net=ib0,net=ib1"); "net=udp" names a mode, not a NIC.
      for (const auto& opt : split(m.options, ","))
        if (opt.rfind("net=", 0) == 0 && opt != "net=udp")
          f.add_netdev(split(opt.substr(4), "/").front(), "mount option " + opt);
      net::add_cufile_carriers(f, s.machine.cufile, "weka", m);
      nm.carriers = f.take();
      judge_hidden_transport(nm, s,
                             "gdscheck -p (the WekaFS and Userspace RDMA lines); weka local "
                             "resources (the client's NICs)",
                             "WEKA uses RDMA and GDS only where its client's NICs support RDMA");
    } else if (t == "gpfs") {
      nm.kind = "IBM Storage Scale";
      net::add_cufile_carriers(f, s.machine.cufile, "gpfs", m);
      nm.carriers = f.take();
      judge_hidden_transport(nm, s, "mmlsconfig verbsRdma; mmlsconfig verbsPorts; mmdiag --config",
                             "IBM Storage Scale serves GDS over verbs RDMA only (InfiniBand or "
                             "RoCE, verbsRdma enabled, verbsPorts naming the NICs)");
    } else if (t == "beegfs") {
      nm.kind = "BeeGFS";
      net::add_cufile_carriers(f, s.machine.cufile, "beegfs", m);
      nm.carriers = f.take();
      judge_hidden_transport(nm, s,
                             "beegfs-net (BeeGFS 7) or beegfs node list --with-nics (BeeGFS 8): "
                             "each server connection shows RDMA or TCP",
                             "BeeGFS serves GDS over RDMA connections only (a client built with "
                             "RDMA and nvidia-fs support)");
    } else if (unlisted_network_fs(t)) {
      judge_unlisted(nm, f);
    } else if (const NvmeController* c = fabric_controller(s.machine, m)) {
      judge_nvmeof(nm, s, *c, f);
    } else {
      continue;
    }
    for (MountCarrier& c : nm.carriers) net::add_locality(c, s, *view);
    if (nm.carriers.empty())
      nm.carriers_note = !s.machine.network.net_known
                             ? "this input does not show the node's network interfaces and routes"
                         : nm.servers.empty()
                             ? "the mount names no server address"
                             : "no route or local address in this input reaches " +
                                   join(nm.servers);
    out.push_back(std::move(nm));
  }
  return out;
}

const NetworkMount* find_network_mount(const std::vector<NetworkMount>& mounts, const Mount& m) {
  for (const NetworkMount& nm : mounts)
    if (nm.mount == &m) return &nm;
  return nullptr;
}

}  // namespace gdsb::topo
