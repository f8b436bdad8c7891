#include "finding_groups.hpp"

#include <algorithm>
#include <string>

#include "gdsb/topo/said_together.hpp"

namespace gdsb::doctor::detail {

std::vector<const GpuDiagnosis*> named_gpus(const Diagnosis& d, const Finding& f) {
  std::vector<const GpuDiagnosis*> out;
  for (const auto& g : d.gpus)
    for (const auto& dev : f.devices)
      if (dev == g.label || (!g.bdf.empty() && dev.find(g.bdf) != std::string::npos) ||
          dev.rfind(g.label + " ", 0) == 0) {
        out.push_back(&g);
        break;
      }
  return out;
}

namespace {

// The GPU as said_together reads a text about it: its label, and the devices on its path
// (its drive, its NIC, their block and net names) as names of its own.
topo::TextGpu text_gpu(const GpuDiagnosis& g) {
  topo::TextGpu t{g.label, {}};
  for (const auto& h : g.hops) t.own.insert(t.own.end(), h.device_names.begin(), h.device_names.end());
  t.own.erase(std::remove(t.own.begin(), t.own.end(), std::string()), t.own.end());
  return t;
}

struct Member {
  Finding* finding;
  const GpuDiagnosis* gpu;
  std::size_t gpu_index;
};

// The members' texts said once; a device each names of its own is added to `own` (per member).
std::string merge(const std::vector<Member>& ms, const std::vector<std::string>& texts,
                  std::vector<std::vector<std::string>>& own) {
  std::vector<topo::TextGpu> gpus;
  for (const auto& m : ms) gpus.push_back(text_gpu(*m.gpu));
  std::vector<std::vector<std::string>> mine;
  std::string out = topo::said_together(gpus, texts, &mine);
  for (std::size_t i = 0; i < ms.size(); ++i)
    for (auto& d : mine[i])
      if (std::none_of(own[i].begin(), own[i].end(), [&](const std::string& o) { return o.find(d) != std::string::npos; }))
        own[i].push_back(d);
  return out;
}

std::vector<std::string> merged_lines(const std::vector<Member>& ms, std::vector<std::string> Finding::*field,
                                      std::vector<std::vector<std::string>>& own) {
  std::vector<std::string> out;
  for (std::size_t line = 0; line < (ms.front().finding->*field).size(); ++line) {
    std::vector<std::string> texts;
    for (const auto& m : ms) texts.push_back((m.finding->*field)[line]);
    out.push_back(merge(ms, texts, own));
  }
  return out;
}

std::string merged(const std::vector<Member>& ms, std::string Finding::*field,
                   std::vector<std::vector<std::string>>& own) {
  std::vector<std::string> texts;
  for (const auto& m : ms) texts.push_back(m.finding->*field);
  return merge(ms, texts, own);
}

// Rule, confidence, words of title, devices, evidence, fix and expected figure: findings of
// equal keys are one cause.
std::string key_of(const Finding& f, const GpuDiagnosis& g) {
  const topo::TextGpu t = text_gpu(g);
  const auto shape = [&](const std::string& s) { return topo::text_shape(s, t); };
  std::string k = f.rule + "\n" + std::string(confidence_name(f.confidence)) + "\n" + shape(f.title) +
                  "\n" + shape(f.fix) + "\n" + shape(f.expected) + "\n" + (f.storage_fix ? "s" : "") +
                  (f.path_bounded ? "p" : "") + (f.expected_gb_s ? "e" : "") + "\n";
  for (const auto& d : f.devices) k += shape(d) + "\x03";
  k += "\n";
  for (const auto& e : f.evidence) k += shape(e) + "\x04";
  return k;
}

}  // namespace

void group_findings(Diagnosis& d) {
  std::vector<Member> one_gpu;  // findings about exactly one GPU
  std::vector<std::string> keys;
  for (auto& f : d.findings) {
    const auto gpus = named_gpus(d, f);
    if (gpus.size() != 1) continue;
    one_gpu.push_back({&f, gpus.front(), static_cast<std::size_t>(gpus.front() - d.gpus.data())});
    keys.push_back(key_of(f, *gpus.front()));
  }
  std::vector<const Finding*> gone;
  std::vector<bool> done(one_gpu.size(), false);
  for (std::size_t i = 0; i < one_gpu.size(); ++i) {
    if (done[i]) continue;
    std::vector<Member> ms{one_gpu[i]};
    for (std::size_t j = i + 1; j < one_gpu.size(); ++j)
      if (!done[j] && keys[j] == keys[i] &&
          std::none_of(ms.begin(), ms.end(), [&](const Member& m) { return m.gpu == one_gpu[j].gpu; })) {
        ms.push_back(one_gpu[j]);
        done[j] = true;
      }
    if (ms.size() == 1) continue;
    std::stable_sort(ms.begin(), ms.end(), [](const Member& a, const Member& b) { return a.gpu_index < b.gpu_index; });
    // Each GPU's devices: the finding's, then those its texts name of its own (its drive).
    std::vector<std::vector<std::string>> own;
    for (const auto& m : ms) own.push_back(m.finding->devices);
    Finding g = *one_gpu[i].finding;
    g.title = merged(ms, &Finding::title, own);
    g.fix = merged(ms, &Finding::fix, own);
    g.expected = merged(ms, &Finding::expected, own);
    g.evidence = merged_lines(ms, &Finding::evidence, own);
    g.devices.clear();
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const Member& m = ms[k];
      g.devices.insert(g.devices.end(), m.finding->devices.begin(), m.finding->devices.end());
      g.per_gpu.push_back({m.gpu->label, own[k]});
      if (m.finding->expected_gb_s && *m.finding->expected_gb_s > g.expected_gb_s.value_or(0))
        g.expected_gb_s = m.finding->expected_gb_s;
      // What the cause costs the GPU it costs most: the figure the ranking compares.
      g.impact_gb_s = std::max(g.impact_gb_s, m.finding->impact_gb_s);
      if (m.finding != one_gpu[i].finding) gone.push_back(m.finding);
    }
    *one_gpu[i].finding = std::move(g);
  }
  std::vector<Finding> kept;
  for (auto& f : d.findings)
    if (std::find(gone.begin(), gone.end(), &f) == gone.end()) kept.push_back(std::move(f));
  d.findings = std::move(kept);
}

}  // namespace gdsb::doctor::detail
