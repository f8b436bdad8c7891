// Shared helpers for the gdsb-topo tests: collect a fixture and evaluate it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "fixture_builder.hpp"
#include "gdsb/topo/checks.hpp"
#include "gdsb/topo/collect.hpp"

namespace gdsb::topo::testing {

struct Outcome {
  Snapshot snapshot;
  std::unique_ptr<TopologyView> view;
  Report report;

  std::vector<const CheckResult*> results(const std::string& id) const {
    std::vector<const CheckResult*> out;
    for (const auto& c : report.checks)
      if (c.id == id) out.push_back(&c);
    return out;
  }
  // The single worst verdict among the results of one check.
  Verdict worst(const std::string& id) const {
    Verdict w = Verdict::Waived;
    auto rank = [](Verdict v) {
      return v == Verdict::Fail ? 3 : v == Verdict::Warn ? 2 : v == Verdict::Pass ? 1 : 0;
    };
    for (const auto* c : results(id))
      if (rank(c->verdict) > rank(w)) w = c->verdict;
    return w;
  }
  const CheckResult* titled(const std::string& id, const std::string& part) const {
    for (const auto* c : results(id))
      if (c->title.find(part) != std::string::npos) return c;
    return nullptr;
  }
};

inline Outcome evaluate_snapshot(Snapshot s) {
  Outcome o;
  o.snapshot = std::move(s);
  o.view = std::make_unique<TopologyView>(o.snapshot);
  o.report = evaluate(o.snapshot, *o.view);
  return o;
}

// A fake GPU facts provider (the NVML one's stand-in): the same facts for every GPU.
class FixedFacts final : public GpuFactsProvider {
 public:
  explicit FixedFacts(GpuFacts facts) : facts_(std::move(facts)) {}
  std::string name() const override { return facts_.source; }
  std::optional<GpuFacts> facts_for(const Device&) const override { return facts_; }

 private:
  GpuFacts facts_;
};

inline GpuFacts memory_facts(uint64_t bytes) {
  GpuFacts f;
  f.memory_bytes = bytes;
  f.source = "test";
  return f;
}

class FixedMemory final : public GpuFactsProvider {
 public:
  explicit FixedMemory(uint64_t bytes) : facts_(memory_facts(bytes)) {}
  std::string name() const override { return "test"; }
  std::optional<GpuFacts> facts_for(const Device&) const override {
    return facts_.facts_for(Device{});
  }

 private:
  FixedFacts facts_;
};

inline CollectOptions offline() {
  CollectOptions o;
  o.lookup_names = false;
  o.use_hwloc = false;
  return o;
}

inline Outcome run_sysfs(const fixture::Machine& m,
                         std::optional<uint64_t> gpu_memory = std::nullopt) {
  fixture::TempDir dir;
  fixture::write_sysfs(m, dir.path());
  Snapshot s = collect_sysfs_root(dir.path(), offline());
  if (gpu_memory) apply_gpu_facts(s, FixedMemory(*gpu_memory));
  return evaluate_snapshot(std::move(s));
}

inline bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every failed result of an outcome, one line each ("id / title: consequence"); "" for none.
inline std::string failed_checks(const Outcome& o) {
  std::string out;
  for (const auto& c : o.report.checks)
    if (c.verdict == Verdict::Fail) out += c.id + " / " + c.title + ": " + c.consequence + "\n";
  return out;
}

inline bool any_contains(const std::vector<std::string>& v, const std::string& part) {
  return std::any_of(v.begin(), v.end(),
                     [&](const std::string& s) { return s.find(part) != std::string::npos; });
}

}  // namespace gdsb::topo::testing
