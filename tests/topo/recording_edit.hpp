// Edits of recorded inputs for the metamorphic tests: `lspci -vvv` text and `lspci -xxxx`
// dumps as stanzas (one per function, its config bytes where the dump has them), hwloc XML
// as text. Every edit says what it did to bus addresses so outcomes can be compared.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gdsb::topo::testing {

struct Stanza {
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  bool long_form = false;  // the header printed the domain
  std::string rest;        // header after the address
  std::vector<std::string> lines;
  std::string bdf() const;  // "0000:00:06.0"
  // Config bytes of its hex lines (empty for text recordings), and writing them back.
  std::vector<uint8_t> config() const;
  void set_config(const std::vector<uint8_t>& bytes);
  // The first tab-indented line starting (after tabs) with `key`, or nullptr.
  std::string* line(const std::string& key);
};

struct Recording {
  std::vector<std::string> preamble;  // lines before the first stanza
  std::vector<Stanza> stanzas;
  static Recording parse(const std::string& text);
  std::string text() const;
  Stanza* find(const std::string& bdf);
};

// A monotone renumbering of bus numbers that keeps every bridge's bus range whole: the
// used numbers below the highest unused one move up past it. Domains move by +2.
struct BusMap {
  std::map<unsigned, unsigned> bus;  // old -> new, for every bus number 0..255
  unsigned domain_shift = 2;
  unsigned map_bus(unsigned b) const { return bus.at(b & 0xff); }
  std::string map_bdf(const std::string& bdf) const;
  std::string unmap_bdf(const std::string& bdf) const;
};
// Used numbers: buses of devices and every number inside a bridge range.
BusMap make_bus_map(const std::vector<unsigned>& used);

// Renumbers a text or dump recording (headers, "Bus: primary=" lines, bridge config bytes).
Recording renumber(Recording r, const BusMap& m);
// Renumbers hwloc XML (pci_busid and bridge_pci attributes).
std::string renumber_xml(const std::string& xml, const BusMap& m);
std::vector<unsigned> used_buses_xml(const std::string& xml);
std::vector<unsigned> used_buses(const Recording& r);

// Saved snapshots (snapshot.json): bus numbers used, renumbered (addresses, parents, root
// complexes, bridge ranges and their config bytes, GPU facts and pairs), devices reversed.
std::vector<unsigned> used_buses_snapshot(const std::string& json);
std::string renumber_snapshot(const std::string& json, const BusMap& m);
std::string reverse_snapshot_devices(const std::string& json);

// Removes the PCIDev element of `bdf` (and its OS devices) from hwloc XML; nullopt if absent.
std::optional<std::string> remove_xml_pcidev(const std::string& xml, const std::string& bdf);
// A copy of `bdf`'s element (its OS devices left out, gp_index made unique) right after it.
std::optional<std::string> duplicate_xml_object(const std::string& xml, const std::string& bdf);
// `bdf`'s Bridge element removed with its children kept in its place; nullopt if absent.
std::optional<std::string> unwrap_xml_bridge(const std::string& xml, const std::string& bdf);
// Replaces the class of `bdf`'s PCIDev element (pci_type="cccc ...").
std::optional<std::string> set_xml_class(const std::string& xml, const std::string& bdf,
                                         uint16_t class_id);

}  // namespace gdsb::topo::testing
