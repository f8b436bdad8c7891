#include "gdsb/report/io_document.hpp"

namespace gdsb::report {

nlohmann::ordered_json io_document(const ToolInfo& tool, const std::vector<std::string>& argv,
                                   const RunContext& context, std::span<const RunResult> runs,
                                   bool interrupted) {
  nlohmann::ordered_json run_list = nlohmann::ordered_json::array();
  // RunResult's to_json (libgdsbench) produces nlohmann::json; convert per run.
  for (const auto& r : runs) run_list.push_back(nlohmann::ordered_json(nlohmann::json(r)));
  nlohmann::ordered_json doc;
  doc["schema"] = kIoSchema;
  doc["tool"] = {{"name", tool.name}, {"version", tool.version}};
  doc["argv"] = argv;
  doc["context"] = nlohmann::ordered_json(nlohmann::json(context));
  doc["interrupted"] = interrupted;
  doc["runs"] = std::move(run_list);
  return doc;
}

}  // namespace gdsb::report
