#include "gdsb/p2p/capabilities.hpp"

#include <algorithm>
#include <functional>

#include "caps_internal.hpp"
#include "gdsb/p2p/legends.hpp"

namespace gdsb::p2p {

namespace {

using nvml::P2PCapsIndex;
using nvml::P2PStatus;

constexpr std::array<P2PCapsIndex, kNvmlCapCount> kCaps = {
    P2PCapsIndex::Read, P2PCapsIndex::Write, P2PCapsIndex::NvLink, P2PCapsIndex::Atomics,
    P2PCapsIndex::Pci};
constexpr const auto& kCapMatrix = detail::kNvmlCapMatrix;
using detail::gpu_matrix;
using detail::verdict_for;

void collect_gpus(CudaLayer& cuda, NvmlLayer& nvml, CapabilityReport& r, bool& have_cuda,
                  std::string& cuda_reason, bool& have_nvml, std::vector<NvmlGpu>& nvml_gpus) {
  const Availability cuda_ok = cuda.probe();
  have_cuda = cuda_ok.ok && cuda.device_count() > 0;
  if (!cuda_ok.ok) {
    cuda_reason = cuda_ok.reason;
  } else if (!have_cuda) {
    cuda_reason = "the CUDA runtime sees no device (CUDA_VISIBLE_DEVICES?)";
  }
  if (!have_cuda) r.waived.push_back({"cuda", cuda_reason});
  const Availability nvml_ok = nvml.probe();
  if (nvml_ok.ok) nvml_gpus = nvml.gpus();
  have_nvml = nvml_ok.ok && !nvml_gpus.empty();
  if (!nvml_ok.ok) {
    r.waived.push_back({"nvml", nvml_ok.reason});
  } else if (!have_nvml) {
    r.waived.push_back({"nvml", "NVML reports no GPU"});
  }

  if (have_cuda) {
    const int n = cuda.device_count();
    for (int i = 0; i < n; ++i) {
      const CudaDeviceProps p = cuda.properties(i);
      GpuInfo g;
      g.index = i;
      g.bdf = p.bdf;
      g.name = p.name;
      g.cc_major = p.cc_major;
      g.cc_minor = p.cc_minor;
      r.gpus.push_back(std::move(g));
    }
  } else if (have_nvml) {
    for (std::size_t i = 0; i < nvml_gpus.size(); ++i) {
      GpuInfo g;
      g.index = static_cast<int>(i);
      g.bdf = nvml_gpus[i].bdf;
      g.name = nvml_gpus[i].name;
      r.gpus.push_back(std::move(g));
    }
  }
  if (!have_nvml) return;
  // CUDA's ordinals need not follow NVML's order (CUDA_DEVICE_ORDER=FASTEST_FIRST is the
  // default): join the two views on the PCI bus id.
  for (GpuInfo& g : r.gpus) {
    for (std::size_t k = 0; k < nvml_gpus.size(); ++k) {
      if (nvml_gpus[k].bdf != g.bdf) continue;
      const NvmlGpu& n = nvml_gpus[k];
      g.nvml_index = static_cast<int>(k);
      g.pcie = n.max_link;
      g.pcie_cur = n.cur_link;
      g.nvlinks = n.nvlinks_active;
      g.numa_node = n.numa_node;
      if (g.name.empty()) g.name = n.name;
    }
    if (!g.nvml_index) {
      r.waived.push_back({"nvml " + gpu_label(g.index),
                          "NVML lists no GPU at " + g.bdf + " (a MIG or vGPU view?)"});
    }
  }
}

}  // namespace

std::string detail::verdict_for(const PairCaps& p) {
  const auto& pci = p.nvml[static_cast<std::size_t>(P2PCapsIndex::Read)];
  std::string where = p.topology.empty() ? std::string("path unknown") : p.topology;
  if (!p.direct) return "unknown: CUDA and NVML are both waived";
  if (*p.direct) {
    std::string v = !p.nvlinks         ? "P2P (link type unknown: NVML waived)"
                    : *p.nvlinks > 0 ? "P2P over NVLink (" + std::to_string(*p.nvlinks) + " links)"
                                     : "P2P over PCIe (" + where + ")";
    if (p.cuda_access && pci && *pci != P2PStatus::Ok) {
      v += "; NVML disagrees: read " + std::string(nvml::p2p_status_code(*pci));
    }
    return v;
  }
  if (p.cuda_access && pci && *pci == P2PStatus::Ok) {
    return "no P2P: CUDA refuses peer access although NVML reports OK (IOMMU, ACS or driver)";
  }
  if (pci) {
    return "no P2P: " + std::string(p2p_status_meaning(*pci)) + " (" +
           std::string(nvml::p2p_status_code(*pci)) + ") across " + where;
  }
  return "no P2P: cudaDeviceCanAccessPeer = 0 across " + where;
}

Matrix detail::gpu_matrix(const CapabilityReport& r, Legend legend,
                          const std::function<std::string(const PairCaps&)>& cell) {
  Matrix m;
  m.legend = std::move(legend);
  for (const GpuInfo& g : r.gpus) {
    m.rows.push_back(gpu_label(g.index));
    m.cols.push_back(gpu_label(g.index));
  }
  const int n = static_cast<int>(r.gpus.size());
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> row;
    for (int b = 0; b < n; ++b) row.push_back(a == b ? "X" : cell(*r.pair(a, b)));
    m.cells.push_back(std::move(row));
  }
  return m;
}

namespace {

void add_peer_matrices(CapabilityReport& r) {
  std::vector<std::string> peers;
  for (const PciePair& p : r.peers) {
    if (std::find(peers.begin(), peers.end(), p.peer) == peers.end()) peers.push_back(p.peer);
  }
  Matrix map;
  map.legend = p2pdma_legend();
  Matrix label;
  label.legend = topology_legend();
  for (const std::string& peer : peers) {
    std::string col = peer;
    for (const PciePair& p : r.peers) {
      if (p.peer == peer && !p.peer_name.empty()) col = p.peer_name + " " + peer;
    }
    map.cols.push_back(col);
    label.cols.push_back(col);
  }
  // Rows: the GPUs seen by CUDA/NVML, then any GPU only the PCIe side knows (no driver).
  std::vector<std::pair<std::string, std::string>> gpus;  // bdf, row label
  for (const GpuInfo& g : r.gpus) gpus.emplace_back(g.bdf, gpu_label(g.index));
  for (const PciePair& p : r.peers) {
    const bool known = std::any_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.first == p.gpu; });
    if (!known) gpus.emplace_back(p.gpu, p.gpu);
  }
  for (const auto& [bdf, row_label] : gpus) {
    std::vector<std::string> map_row;
    std::vector<std::string> label_row;
    for (const std::string& peer : peers) {
      std::string m = "-";
      std::string l = "-";
      for (const PciePair& p : r.peers) {
        if (p.gpu == bdf && p.peer == peer) {
          m = std::string(map_type_name(p.p2pdma));
          l = p.label;
        }
      }
      map_row.push_back(m);
      label_row.push_back(l);
    }
    map.rows.push_back(row_label);
    label.rows.push_back(row_label);
    map.cells.push_back(std::move(map_row));
    label.cells.push_back(std::move(label_row));
  }
  r.matrices.emplace_back("p2pdma", std::move(map));
  r.matrices.emplace_back("peer_topology", std::move(label));
}

}  // namespace

std::string gpu_label(int index) { return "GPU" + std::to_string(index); }

const PairCaps* CapabilityReport::pair(int a, int b) const {
  for (const PairCaps& p : pairs) {
    if (p.a == a && p.b == b) return &p;
  }
  return nullptr;
}

const Matrix* CapabilityReport::matrix(const std::string& name) const {
  for (const auto& [n, m] : matrices) {
    if (n == name) return &m;
  }
  return nullptr;
}

CapabilityReport collect_capabilities(CudaLayer& cuda, NvmlLayer& nvml, PcieTopologySource& pcie) {
  CapabilityReport r;
  bool have_cuda = false;
  bool have_nvml = false;
  std::string cuda_reason;
  std::vector<NvmlGpu> nvml_gpus;
  collect_gpus(cuda, nvml, r, have_cuda, cuda_reason, have_nvml, nvml_gpus);
  const GpuTree tree = pcie.gpu_tree();
  r.nvswitches = tree.nvswitches;
  r.hypervisor_devices = tree.hypervisor_devices;
  r.gpu_source = have_cuda ? "cuda" : have_nvml ? "nvml" : "";
  if (r.gpus.empty() && tree.gpus.empty()) r.applicability = tree.applicability;
  if (r.gpus.empty() && !tree.gpus.empty()) {
    // A recording (or a machine without a driver): the GPUs as the PCIe input shows them.
    r.gpu_source = "recorded: " + pcie.description();
    detail::add_recorded_gpus(r, tree, pcie.description());
    have_cuda = have_nvml = false;
  }

  const int n = r.gpu_source.rfind("recorded", 0) == 0 ? 0 : static_cast<int>(r.gpus.size());
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      PairCaps p;
      p.a = a;
      p.b = b;
      if (have_cuda) {
        p.cuda_access = cuda.can_access_peer(a, b);
        p.cuda_attr = cuda.p2p_attributes(a, b);
      }
      const auto& ia = r.gpus[static_cast<std::size_t>(a)].nvml_index;
      const auto& ib = r.gpus[static_cast<std::size_t>(b)].nvml_index;
      if (have_nvml && ia && ib) {
        for (std::size_t c = 0; c < kCaps.size(); ++c) p.nvml[c] = nvml.p2p_status(*ia, *ib, kCaps[c]);
        p.level = nvml.common_ancestor(*ia, *ib);
        p.nvlinks = nvml.nvlinks_between(*ia, *ib);
        if (*p.nvlinks > 0) {
          p.topology = "NV" + std::to_string(*p.nvlinks);
        } else if (p.level) {
          p.topology = std::string(nvml::topology_level_name(*p.level));
        }
      }
      if (p.cuda_access) {
        p.direct = *p.cuda_access;
      } else if (p.nvml[0] && p.nvml[1]) {
        p.direct = *p.nvml[0] == P2PStatus::Ok && *p.nvml[1] == P2PStatus::Ok;
      }
      p.verdict = verdict_for(p);
      r.pairs.push_back(std::move(p));
    }
  }

  if (have_nvml) {
    r.matrices.emplace_back("topology", gpu_matrix(r, topology_legend(), [](const PairCaps& p) {
                              return p.topology.empty() ? std::string("U") : p.topology;
                            }));
  } else if (n > 0) {
    r.waived.push_back({"topology", "needs NVML (nvmlDeviceGetTopologyCommonAncestor)"});
  }
  if (have_cuda) {
    r.matrices.emplace_back("cuda_access", gpu_matrix(r, yes_no_legend("cudaDeviceCanAccessPeer"),
                                                      [](const PairCaps& p) {
                                                        return *p.cuda_access ? "Y" : "N";
                                                      }));
    r.matrices.emplace_back(
        "cuda_perf_rank",
        gpu_matrix(r, {{"#", "cudaDevP2PAttrPerformanceRank (lower is faster)"}, {"X", "self"}},
                   [](const PairCaps& p) { return std::to_string(p.cuda_attr->performance_rank); }));
    r.matrices.emplace_back("cuda_atomics",
                            gpu_matrix(r, yes_no_legend("cudaDevP2PAttrNativeAtomicSupported"),
                                       [](const PairCaps& p) {
                                         return p.cuda_attr->native_atomics ? "Y" : "N";
                                       }));
    r.matrices.emplace_back("cuda_array_access",
                            gpu_matrix(r, yes_no_legend("cudaDevP2PAttrCudaArrayAccessSupported"),
                                       [](const PairCaps& p) {
                                         return p.cuda_attr->cuda_array_access ? "Y" : "N";
                                       }));
  } else if (n > 0) {
    r.waived.push_back({"cuda_access", "needs the CUDA runtime: " + cuda_reason});
  }
  if (have_nvml) {
    for (std::size_t c = 0; c < kCaps.size(); ++c) {
      r.matrices.emplace_back(kCapMatrix[c], gpu_matrix(r, p2p_status_legend(), [c](const PairCaps& p) {
                                const auto& s = p.nvml[c];
                                return s ? std::string(nvml::p2p_status_code(*s)) : std::string("U");
                              }));
    }
  } else if (n > 0) {
    for (const char* m : kCapMatrix) r.waived.push_back({m, "needs NVML (nvmlDeviceGetP2PStatus)"});
  }
  if (n > 0 && !tree.gpus.empty()) detail::add_tree_matrix(r, tree);

  const Availability pcie_ok = pcie.probe();
  r.pcie_source = pcie.description();
  if (pcie_ok.ok) {
    r.peers = pcie.pairs();
    add_peer_matrices(r);
  } else {
    r.waived.push_back({"p2pdma", pcie_ok.reason});
  }
  return r;
}

}  // namespace gdsb::p2p
