#include "gdsb/report/io_document.hpp"

namespace gdsb::report {

nlohmann::json io_document(const ToolInfo& tool, const std::vector<std::string>& argv,
                           const RunContext& context, std::span<const RunResult> runs,
                           bool interrupted) {
  nlohmann::json run_list = nlohmann::json::array();
  for (const auto& r : runs) run_list.push_back(r);  // RunResult's to_json (libgdsbench)
  return nlohmann::json{{"schema", kIoSchema},
                        {"tool", {{"name", tool.name}, {"version", tool.version}}},
                        {"argv", argv},
                        {"context", context},
                        {"interrupted", interrupted},
                        {"runs", std::move(run_list)}};
}

}  // namespace gdsb::report
