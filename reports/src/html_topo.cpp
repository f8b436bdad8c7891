// HTML view of a gdsbench.topo/1 document: the PCIe tree with problems on the nodes,
// then every check with its evidence, consequence and remedy.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "gdsb/pcie.hpp"
#include "gdsb/units.hpp"
#include "html_parts.hpp"
#include "svg.hpp"

namespace gdsb::report::html {
namespace {

struct LinkText {
  std::string text;
  bool degraded = false;
};

LinkText link_text(const json& d) {
  if (!d.contains("link") || !d.at("link").is_object()) return {};
  const auto& l = d.at("link");
  const double cs = l.value("cur_speed_gts", 0.0), ms = l.value("max_speed_gts", 0.0);
  const int cw = l.value("cur_width", 0), mw = l.value("max_width", 0);
  LinkText t;
  t.text = gdsb::link_text(cs, cw);
  if ((mw > 0 && cw < mw) || (ms > 0 && cs < ms)) {
    t.degraded = true;
    t.text += " of " + gdsb::link_text(ms, mw);
  }
  return t;
}

// ACS redirect as the kernel's P2PDMA code sees it: ReqRedir | CmpltRedir | EgressCtrl.
bool acs_redirects(const json& d) {
  if (!d.contains("acs") || !d.at("acs").is_object()) return false;
  try {
    return (std::stoul(d.at("acs").value("ctl", std::string("0")), nullptr, 16) & 0x2cUL) != 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::string role_title(const std::string& role) {
  static const std::map<std::string, std::string> kNames{{"gpu", "GPU"},
                                                         {"nvme", "NVMe"},
                                                         {"nic", "NIC"},
                                                         {"root_port", "Root port"},
                                                         {"switch_upstream", "Switch up"},
                                                         {"switch_downstream", "Switch down"},
                                                         {"bridge", "Bridge"},
                                                         {"host_bridge", "Host bridge"},
                                                         {"other", "Device"},
                                                         {"nvswitch", "NVSwitch"}};
  const auto it = kNames.find(role);
  return it == kNames.end() ? role : it->second;
}

std::string verdict_kind(const std::string& v) {
  return v == "pass" ? "ok" : v == "fail" ? "bad" : v == "warn" ? "warn" : "muted";
}

struct Problems {
  std::string worst;  // "fail", "warn" or ""
  std::vector<std::string> ids;
};

std::map<std::string, Problems> problems_by_device(const json& doc) {
  std::map<std::string, Problems> out;
  for (const auto& c : doc.value("checks", json::array())) {
    const auto v = str(c, "verdict");
    if (v != "fail" && v != "warn") continue;
    for (const auto& b : c.value("devices", std::vector<std::string>{})) {
      auto& p = out[b];
      if (v == "fail" || p.worst.empty()) p.worst = v;
      p.ids.push_back(str(c, "id"));
    }
  }
  return out;
}

// A ceiling's GB/s to one decimal, "unknown" when null.
std::string ceiling_figure(const json& c) {
  if (!c.contains("gb_s") || !c.at("gb_s").is_number()) return "unknown";
  return format_fixed(c.at("gb_s").get<double>(), 1);
}

std::string tree_section(const json& doc) {
  const auto problems = problems_by_device(doc);
  std::vector<svg::TreeNode> nodes;
  for (const auto& d : doc.at("devices")) {
    svg::TreeNode n;
    n.id = str(d, "bdf");
    n.parent = str(d, "parent");
    n.role = str(d, "role");
    n.title = role_title(n.role) + " " + str(d, "name");
    const auto lt = link_text(d);
    n.line2 = n.id.substr(n.id.size() > 7 && n.id[4] == ':' ? 5 : 0) +
              (lt.text.empty() ? "" : "  " + lt.text);
    n.line2_warn = lt.degraded;
    std::vector<std::string> flags;
    // Root ports route peer traffic through the root complex anyway; a redirecting switch port
    // is what turns a direct GPU-NVMe path into a detour, so only those are flagged here.
    const bool switch_port = n.role == "switch_downstream" || n.role == "switch_upstream";
    const auto it = problems.find(n.id);
    const bool acs_check =
        it != problems.end() &&
        std::any_of(it->second.ids.begin(), it->second.ids.end(),
                    [](const std::string& id) { return id.find("acs") != std::string::npos; });
    if (switch_port && acs_redirects(d) && !acs_check) flags.push_back("ACS redirect");
    if (it != problems.end()) {
      n.problem = it->second.worst;
      for (const auto& id : it->second.ids) {
        if (std::find(flags.begin(), flags.end(), id) == flags.end()) flags.push_back(id);
      }
    } else if (switch_port && acs_redirects(d)) {
      n.problem = "warn";
    }
    for (const auto& f : flags) n.flag += (n.flag.empty() ? "⚠ " : ", ") + f;
    std::string devs;
    for (const auto& b : d.value("block_devices", std::vector<std::string>{})) devs += " " + b;
    for (const auto& b : d.value("net_devices", std::vector<std::string>{})) devs += " " + b;
    n.tooltip = n.id + " " + str(d, "name") + " [" + str(d, "vendor") + ":" + str(d, "device") +
                "]" + devs + (lt.text.empty() ? "" : "\nlink " + lt.text) +
                (n.flag.empty() ? "" : "\n" + n.flag);
    nodes.push_back(std::move(n));
  }
  std::string legend =
      "<div class=\"legend\"><span><i class=\"sw\" style=\"background:#e3f2e5\"></i>GPU</span>"
      "<span><i class=\"sw\" style=\"background:#e3effb\"></i>NVMe</span>"
      "<span><i class=\"sw\" style=\"background:#f1e7f7\"></i>NIC</span>"
      "<span><i class=\"sw\" style=\"background:#f3f3f3\"></i>switch port</span>"
      "<span><i class=\"sw\" style=\"background:#e4e7ea\"></i>root port / host bridge</span>"
      "<span><i class=\"sw\" style=\"background:#fff;border:2px solid #b71c1c\"></i>failed "
      "check</span>"
      "<span><i class=\"sw\" style=\"background:#fff;border:2px solid #e0a000\"></i>warning</span>"
      "<span class=\"deg\">orange link: below its maximum</span></div>";
  return section(
      "tree", "PCIe tree",
      figure(svg::tree("PCIe tree", nodes), "Devices by PCIe parent; hover a node for details") +
          legend);
}

std::string devices_table(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& d : doc.at("devices")) {
    const auto lt = link_text(d);
    std::string acs = "-";
    if (d.contains("acs") && d.at("acs").is_object()) {
      acs = "cap " + str(d.at("acs"), "cap") + " ctl " + str(d.at("acs"), "ctl");
    }
    std::string devs;
    for (const auto& b : d.value("block_devices", std::vector<std::string>{})) devs += b + " ";
    for (const auto& b : d.value("net_devices", std::vector<std::string>{})) devs += b + " ";
    rows.push_back(
        {"<td class=\"nw\"><code>" + esc(str(d, "bdf")) + "</code></td>",
         esc(role_title(str(d, "role"))), "<td class=\"wrap\">" + esc(str(d, "name")) + "</td>",
         "<td><code>" + esc(str(d, "vendor") + ":" + str(d, "device")) + "</code></td>",
         esc(str(d, "numa_node")), esc(str(d, "iommu_group")),
         lt.degraded ? "<td class=\"bad-text\">" + esc(lt.text) + "</td>" : esc(lt.text),
         acs_redirects(d) ? "<td class=\"bad-text\">" + esc(acs) + " (redirect)</td>" : esc(acs),
         esc(devs)});
  }
  return section(
      "devices", "Devices",
      table({"BDF", "role", "name", "id", "NUMA", "IOMMU group", "link", "ACS", "block/net"}, rows,
            "sortable"));
}

std::string checks_section(const json& doc) {
  std::ostringstream o;
  const auto checks = doc.value("checks", json::array());
  // Failures first, then warnings, passes, waived: what needs action comes first.
  for (const char* want : {"fail", "warn", "pass", "waived"}) {
    for (const auto& c : checks) {
      const auto v = str(c, "verdict");
      if (v != want) continue;
      o << "<div class=\"check v-" << esc(v) << "\"><h3>" << badge(v, verdict_kind(v)) << " "
        << esc(str(c, "title")) << " <span class=\"note\"><code>" << esc(str(c, "id"))
        << "</code></span></h3>";
      const auto devs = c.value("devices", std::vector<std::string>{});
      if (!devs.empty()) {
        o << "<p class=\"note\">Devices:";
        for (const auto& b : devs)
          o << " <a href=\"#node-" << esc(b) << "\"><code>" << esc(b) << "</code></a>";
        o << "</p>";
      }
      const auto ev = c.value("evidence", std::vector<std::string>{});
      if (!ev.empty()) {
        o << "<b>Evidence</b><ul>";
        for (const auto& e : ev) o << "<li><code>" << esc(e) << "</code></li>";
        o << "</ul>";
      }
      if (!str(c, "consequence").empty())
        o << "<p><b>Consequence:</b> " << esc(str(c, "consequence")) << "</p>";
      if (!str(c, "remedy").empty()) o << "<p><b>Remedy:</b> " << esc(str(c, "remedy")) << "</p>";
      if (!str(c, "reason").empty())
        o << "<p class=\"note\"><b>Reason:</b> " << esc(str(c, "reason")) << "</p>";
      o << "</div>";
    }
  }
  if (checks.empty()) o << "<p class=\"note\">The document holds no checks.</p>";
  return section("checks", "Checks", o.str());
}

std::string pairs_section(const json& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : doc.value("pairs", json::array())) {
    const auto map = str(p, "p2pdma");
    const std::string kind = map == "BUS_ADDR" ? "ok" : map == "NOT_SUPPORTED" ? "bad" : "warn";
    std::string ports;
    for (const auto& b : p.value("acs_redirect_ports", std::vector<std::string>{}))
      ports += b + " ";
    rows.push_back({"<td><code>" + esc(str(p, "gpu")) + "</code></td>",
                    "<td><code>" + esc(str(p, "peer")) + "</code></td>", esc(str(p, "peer_role")),
                    esc(str(p, "label")), "<td>" + badge(map, kind) + "</td>",
                    esc(str(p, "distance")),
                    ports.empty() ? "-" : "<td class=\"bad-text\">" + esc(ports) + "</td>"});
  }
  std::vector<svg::Bar> bars;
  std::vector<std::vector<std::string>> crow;
  // Per GPU (NVMe, then remote GDS through NICs), then the node-wide aggregates.
  const auto ceiling_row = [&](const json& c, const std::string& who, const std::string& what,
                               bool chart) {
    const bool known = c.contains("gb_s") && c.at("gb_s").is_number();
    const std::string fig = ceiling_figure(c);
    if (known && chart)
      bars.push_back({who, {c.at("gb_s").get<double>()}, std::nullopt, false, fig + " GB/s"});
    crow.push_back({"<td><code>" + esc(who) + "</code></td>", esc(what), fig,
                    esc(str(c, "limited_by"))});
  };
  for (const auto& c : doc.value("ceilings", json::array()))
    ceiling_row(c, str(c, "gpu"), "NVMe (own switch first)", true);
  for (const auto& c : doc.value("nic_ceilings", json::array()))
    if (c.contains("gb_s") && c.at("gb_s").is_number())
      ceiling_row(c, str(c, "gpu"), "remote GDS through NICs", false);
  const json nodes = doc.value("node_ceilings", json::object());
  if (nodes.contains("nvme")) ceiling_row(nodes.at("nvme"), "node", "all NVMe drives", false);
  if (nodes.contains("nic") && nodes.at("nic").value("gb_s", json()).is_number())
    ceiling_row(nodes.at("nic"), "node", "all NICs", false);
  std::string inner;
  if (!rows.empty())
    inner += "<h3>GPU to NVMe/NIC paths</h3>" +
             table({"GPU", "peer", "role", "level", "P2PDMA", "distance", "ACS redirect ports"},
                   rows, "sortable");
  if (!crow.empty()) {
    inner += "<h3>Throughput ceilings</h3>" +
             table({"GPU", "reading from", "GB/s", "limited by"}, crow);
    if (!bars.empty())
      inner += figure(
          svg::bar_chart({"Storage-to-GPU ceiling", svg::axis("GB/s"), svg::axis(""), 760, 0},
                         {"ceiling"}, bars),
          "Expected storage-to-GPU ceiling per GPU (GB/s, base 1000)");
  }
  std::vector<std::vector<std::string>> vrow;
  for (const auto& d : doc.value("virtual_devices", json::array()))
    vrow.push_back({"<td><code>" + esc(str(d, "bdf")) + "</code></td>", esc(str(d, "reason"))});
  if (!vrow.empty())
    inner += "<h3>Virtual drives and NICs (no GDS P2P)</h3>" + table({"device", "why"}, vrow);
  return inner.empty() ? "" : section("paths", "Paths and ceilings", inner);
}

// One network mount: its GDS verdict with the evidence, the NIC ports that carry it and their
// ceiling node-wide and per GPU (mount_ceilings, matched by target).
std::string network_mount_html(const json& m, const json& ceilings) {
  const std::string engage = str(m, "engage");
  const std::string kind = engage == "yes" ? "ok" : engage == "no" ? "bad" : "warn";
  std::ostringstream o;
  o << "<div class=\"check\"><h3>" << badge("GDS: " + engage, kind) << " <code>"
    << esc(str(m, "target")) << "</code> " << esc(str(m, "kind")) << "</h3><p class=\"note\">"
    << esc(str(m, "fstype")) << " from <code>" << esc(str(m, "source")) << "</code>"
    << (str(m, "transport").empty() ? "" : ", transport " + esc(str(m, "transport"))) << "</p>";
  if (!str(m, "why").empty()) o << "<p><b>Why:</b> " << esc(str(m, "why")) << "</p>";
  if (!str(m, "what_to_run").empty())
    o << "<p><b>What to run:</b> <code>" << esc(str(m, "what_to_run")) << "</code></p>";
  const json carriers = m.value("carriers", json::array());
  o << "<b>Carried by</b>";
  if (carriers.empty()) {
    o << "<p class=\"note\">" << esc(str(m, "carriers_note")) << "</p>";
  } else {
    o << "<ul>";
    for (const auto& c : carriers) o << "<li>" << esc(str(c, "description")) << "</li>";
    o << "</ul>";
  }
  for (const auto& mc : ceilings) {
    if (str(mc, "target") != str(m, "target")) continue;
    std::vector<std::vector<std::string>> rows;
    const json node = mc.value("node", json::object());
    rows.push_back({"node", ceiling_figure(node), esc(str(node, "limited_by"))});
    for (const auto& g : mc.value("gpus", json::array()))
      rows.push_back({"<td><code>" + esc(str(g, "gpu")) + "</code></td>", ceiling_figure(g),
                      esc(str(g, "limited_by"))});
    o << "<b>Ceiling through its carriers</b>" << table({"GPU", "GB/s", "limited by"}, rows);
  }
  o << "</div>";
  return o.str();
}

// Network storage (issue 25): each network mount, then every data NIC's RDMA ports.
std::string network_section(const json& doc) {
  std::string inner;
  const json ceilings = doc.value("mount_ceilings", json::array());
  for (const auto& m : doc.value("network_mounts", json::array()))
    inner += network_mount_html(m, ceilings);
  std::vector<std::vector<std::string>> ports;
  for (const auto& d : doc.at("devices"))
    for (const auto& r : d.value("rdma_devices", json::array()))
      for (const auto& p : r.value("ports", json::array())) {
        const std::string state = str(p, "state");
        ports.push_back({"<td><code>" + esc(str(d, "bdf")) + "</code></td>", esc(str(r, "name")),
                         esc(str(p, "port")), esc(str(p, "netdev")), esc(str(p, "link_layer")),
                         state == "ACTIVE" || state.empty()
                             ? esc(state)
                             : "<td class=\"bad-text\">" + esc(state) + "</td>",
                         esc(str(p, "rate"))});
      }
  if (!ports.empty())
    inner +=
        "<h3>RDMA ports of the data NICs</h3>" +
        table({"NIC", "RDMA device", "port", "net device", "link layer", "state", "rate"}, ports);
  return inner.empty() ? "" : section("network", "Network storage", inner);
}

}  // namespace

std::string render_topo(const json& doc) {
  const auto v = doc.value("verdict", std::string("unknown"));
  std::size_t fails = 0, warns = 0;
  for (const auto& c : doc.value("checks", json::array())) {
    fails += str(c, "verdict") == "fail" ? 1U : 0U;
    warns += str(c, "verdict") == "warn" ? 1U : 0U;
  }
  std::string verdict =
      "<span class=\"badge big b-" + verdict_kind(v) + "\">" + esc("overall: " + v) + "</span>";
  // The path model's applicability (gdsb-topo's verdict line when GDS does not apply).
  if (!doc.value("gds_applicable", true))
    verdict += " " + esc(str(doc, "applicability"));
  const json src = doc.value("source", json::object());
  std::string intro =
      "<p class=\"note\">" + std::to_string(fails) + " failed, " + std::to_string(warns) +
      " warning(s). Source: " + esc(str(src, "kind")) +
      (str(src, "path").empty() ? "" : " <code>" + esc(str(src, "path")) + "</code>") + "</p>";
  const std::string network = network_section(doc);
  std::string body = intro + tree_section(doc) + checks_section(doc) + pairs_section(doc) +
                     network + devices_table(doc) + context_section(doc);
  std::vector<std::pair<std::string, std::string>> nav{
      {"tree", "PCIe tree"}, {"checks", "Checks"}, {"paths", "Paths"}};
  if (!network.empty()) nav.emplace_back("network", "Network storage");
  nav.insert(nav.end(), {{"devices", "Devices"}, {"context", "Context"}});
  const std::string host = str(doc.value("context", json::object()), "host");
  return page(doc, "gdsbench topology report" + (host.empty() ? "" : ": " + host), verdict, nav,
              body);
}

}  // namespace gdsb::report::html
