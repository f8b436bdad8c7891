#include "gdsb/report/scaling_words.hpp"

#include "gdsb/report/metrics.hpp"

namespace gdsb::report {

std::string gb_s_words(double gb_s) { return format_three_digits(gb_s) + " GB/s"; }

std::string scaling_steps_words(const std::vector<ScalingStep>& steps) {
  std::string w;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const ScalingStep& s = steps[i];
    w += (i ? ", " : "") + std::to_string(s.nodes) + " -> " + gb_s_words(s.aggregate_gb_s);
    if (i == 0 || !s.gain_percent) continue;
    w += " (";
    if (s.linear_gb_s > 0) w += format_three_digits(100 * s.aggregate_gb_s / s.linear_gb_s) + "% of linear; ";
    const int added = s.nodes - steps[i - 1].nodes;
    w += added == 1 ? std::string("the added node added ")
                    : "the " + std::to_string(added) + " added nodes added ";
    w += format_three_digits(*s.gain_percent) + "% of a node's figure" + (added == 1 ? ")" : " each)");
  }
  if (steps.size() > 1 && steps.front().nodes > 0)
    w += "; a node's figure: " + gb_s_words(steps.front().aggregate_gb_s / steps.front().nodes) +
         ", the first point's per node";
  return w;
}

std::string scaling_stop_words(int nodes, double gain_share_percent) {
  return "Scaling stops at " + std::to_string(nodes) + " nodes (the added nodes added less than " +
         format_three_digits(gain_share_percent) + "% of a node's figure each)";
}

}  // namespace gdsb::report
