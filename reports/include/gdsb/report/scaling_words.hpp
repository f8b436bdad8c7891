// A shared-storage scaling curve in words (docs/gdsb-cluster.md, "How to read the curve"):
// one writer for cluster.txt and cluster.html, so both say the same. Each point after the
// first states its share of linear (aggregate over linear) and what its added nodes added,
// each, in percent of a node's figure (the first point's per-node aggregate): two numbers
// that read alike as "N% of linear" and differ (issue 34: "-2% of linear" was the gain of a
// point at 17% of linear).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gdsb::report {

struct ScalingStep {
  int nodes = 0;
  double aggregate_gb_s = 0;
  double linear_gb_s = 0;              // a node's figure times nodes
  std::optional<double> gain_percent;  // none at the first point
};

// GB/s (1e9 B/s) to three significant digits, whole above 100: "0.683 GB/s", "25.3 GB/s".
std::string gb_s_words(double gb_s);

// "1 -> 3.51 GB/s, 2 -> 2.6 GB/s (37% of linear; the added node added -25.9% of a node's
// figure), 4 -> 2.43 GB/s (17.3% of linear; the 2 added nodes added -2.42% of a node's figure
// each); a node's figure: 3.51 GB/s, the first point's per node"
std::string scaling_steps_words(const std::vector<ScalingStep>& steps);

// "Scaling stops at 2 nodes (the added nodes added less than 50% of a node's figure each)"
std::string scaling_stop_words(int nodes, double gain_share_percent);

}  // namespace gdsb::report
