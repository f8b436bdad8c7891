// Damaged documents: every field of each example, replaced by a value of the wrong type,
// must end in a gdsb::Error naming the file (exit 1 or 2 at the CLI) or a rendered page;
// never in another exception, a crash or a sanitizer report.
#include <gtest/gtest.h>

#include <optional>

#include "gdsb/error.hpp"
#include "gdsb/report/document.hpp"
#include "gdsb/report/html.hpp"

namespace gdsb::report {
namespace {

using nlohmann::json;

// JSON pointers of every value, visiting only the first two elements of each array (the
// examples repeat one shape many times).
void pointers(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) pointers(v, at / k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size() && i < 2; ++i) pointers(j.at(i), at / i, out);
  }
}

// Arrays of objects (runs, repetitions, time series, devices) cut to three elements: the
// shapes stay, the renders get cheap. Matrices (arrays of arrays) keep their sizes.
json trimmed(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) out[k] = trimmed(v);
    return out;
  }
  if (!j.is_array()) return j;
  json out = json::array();
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (i >= 3 && j.at(i).is_object()) break;
    out.push_back(trimmed(j.at(i)));
  }
  return out;
}

class Damaged : public ::testing::TestWithParam<const char*> {};

TEST_P(Damaged, EveryWrongTypeIsAGdsbErrorOrRenders) {
  const auto doc =
      trimmed(load_document(std::string(GDSB_REPORT_FIXTURES) + "/" + GetParam()).json);
  std::vector<json::json_pointer> all;
  pointers(doc, json::json_pointer(), all);
  const std::vector<json> replacements{json("x"), json(nullptr), json(-1), json::array(),
                                       json::object()};
  std::size_t rendered = 0, refused = 0;
  for (const auto& p : all) {
    if (p.empty()) continue;
    for (const auto& r : replacements) {
      json bad = doc;
      bad[p] = r;
      std::optional<Document> d;
      try {
        d = parse_document(bad.dump(), "damaged.json");
      } catch (const gdsb::Error& e) {
        EXPECT_NE(std::string(e.what()).find("damaged.json"), std::string::npos)
            << p.to_string() << ": " << e.what();
        ++refused;
        continue;
      } catch (const std::exception& e) {
        ADD_FAILURE() << p.to_string() << " = " << r.dump() << ": " << e.what();
        continue;
      }
      try {
        const auto html = render_html(d->json);
        EXPECT_NE(html.find("</html>"), std::string::npos);
        ++rendered;
      } catch (const gdsb::Error& e) {
        ++refused;  // validation let it through, rendering refused it cleanly
      } catch (const std::exception& e) {
        ADD_FAILURE() << p.to_string() << " = " << r.dump() << ": " << e.what();
      }
    }
  }
  EXPECT_GT(rendered, 0u);
  EXPECT_GT(refused, 0u);
}

INSTANTIATE_TEST_SUITE_P(Examples, Damaged,
                         ::testing::Values("io_dgx.json", "topo_switch_acs.json", "p2p_4gpu.json"));

}  // namespace
}  // namespace gdsb::report
