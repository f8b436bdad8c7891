// The history gate's labelled corpus (issue 41): series whose truth is known, night by night.
// Seeded synthetic series (steps of 2-10 noise units down and up, masked steps, one-night
// spikes, noise that grows, slow drift, healthy noise of 1-10% with normal and heavy tails,
// 20-500 nights) and the real series recorded on the GPU machines (bench/gate_corpus/real/,
// SOURCES.md there), alone and with a step injected into their real noise.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gdsb::bench {

enum class Truth {
  Healthy,     // nothing got worse: every red night is a false alarm
  Regression,  // a step down at `step`: red expected from step + min_runs - 1 on
  Masked,      // a step down at `step`, then a smaller step up: still a regression to the end
  Drift,       // a slow decline: reported, not scored (no night is clearly right or wrong)
};

struct CorpusSeries {
  std::string name;      // "step-down 4s 2% n100 seed1"
  std::string category;  // "healthy", "step-down 4s", "masked", ...
  Truth truth = Truth::Healthy;
  double step_sigmas = 0;            // Regression/Masked: the drop in noise units
  std::optional<std::size_t> step;   // the first night of the lower level
  std::vector<double> values;        // higher is better (throughput)
};

// The whole corpus; `fast`: the subset CI runs (every series of 200 nights or fewer, one seed).
// `real_dir`: the folder of the recorded series (series.csv and labels.csv); throws
// std::runtime_error naming the file when it cannot be read.
std::vector<CorpusSeries> gate_corpus(bool fast, const std::string& real_dir);

}  // namespace gdsb::bench
