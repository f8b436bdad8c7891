// The heat maps of cluster.html (and gdsb-report's p2p pages, one drawing function): a shade is
// a cell's share of the highest, from zero (issue 34: 0.68 and 0.75 GB/s were drawn as the
// scale's two ends, with the legend "0.7 ... 0.7 GB/s").
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "gdsb/report/document.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::report {
namespace {

using nlohmann::json;

// The fill of the heat-map cell whose tooltip starts with `tip`, as 0 (the palest shade of the
// ramp, #eff3ff) .. 1 (the darkest, #084594), read from its red channel.
double shade_of(const std::string& html, const std::string& tip) {
  const std::regex cell("<title>" + tip + "[^<]*</title><rect [^>]*fill=\"#([0-9a-f]{2})[0-9a-f]{4}\"");
  std::smatch m;
  if (!std::regex_search(html, m, cell)) {
    ADD_FAILURE() << "no cell " << tip;
    return -1;
  }
  const double red = static_cast<double>(std::strtol(m[1].str().c_str(), nullptr, 16));
  return (239 - red) / (239 - 8);
}

TEST(ClusterHeatMap, AShadeIsTheCellsShareOfTheHighestAndTheLegendSaysHowFarApartTheyAre) {
  json doc = load_document(std::string(GDSB_REPORT_FIXTURES) + "/cluster_plain.json").json;
  const double read[] = {0.68, 0.7, 0.72, 0.75};  // GB/s: the lowest 9.33% below the highest
  for (std::size_t i = 0; i < 4; ++i) doc["nodes"][i]["node_metrics"]["io_x1_read_gb_s"] = read[i];
  const std::string html = render_html(doc);
  // 0.68 of 0.75 is 91% of the way to the darkest shade; a min-to-max scale made it the palest.
  EXPECT_NEAR(shade_of(html, "h.0 -&gt; io_x1_read_gb_s: 0.68 GB/s"), 0.68 / 0.75, 0.01);
  EXPECT_NEAR(shade_of(html, "h.3 -&gt; io_x1_read_gb_s: 0.75 GB/s"), 1, 0.01);
  // Three significant digits in cells and legend: the ends differ where the values do.
  EXPECT_NE(html.find("<span>0</span><i class=\"ramp\""), std::string::npos);
  EXPECT_NE(html.find("<span>0.75 GB/s</span><span>cells 0.68 to 0.75 GB/s: the lowest 9.33% below the highest"),
            std::string::npos);
  EXPECT_EQ(html.find("0.7 GB/s</span>"), std::string::npos);
}

}  // namespace
}  // namespace gdsb::report
