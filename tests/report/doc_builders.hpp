// Small in-memory gdsbench documents for the report tests.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gdsb/result.hpp"

namespace gdsb::report::test {

// One measurement whose throughput is `gib_s`; latency scales inversely.
inline Measurement measurement(double gib_s) {
  Measurement m;
  m.seconds = 10;
  m.throughput_gib_s = gib_s;
  m.bytes = static_cast<uint64_t>(gib_s * 10 * 1073741824.0);
  m.ops = m.bytes / 1048576;
  m.read_ops = m.ops;
  m.iops = static_cast<double>(m.ops) / 10;
  m.latency = {100 / gib_s * 10, 10,
               100 / gib_s * 10, 150 / gib_s * 10,
               300 / gib_s * 10, 500 / gib_s * 10,
               800 / gib_s * 10, 1000 / gib_s * 10};
  m.cpu = {1.0, 2.0};
  m.timeseries = {{1.0, m.bytes / 10, m.ops / 10}, {2.0, m.bytes / 10, m.ops / 10}};
  m.histogram = {{64, 128, m.ops / 2}, {128, 256, m.ops / 2}};
  return m;
}

// A run of transfer type `xfer`, 1 MiB reads with 8 threads; `reps` repetitions' throughput
// (the result is their median), or a single run of `gib_s` when reps is empty.
inline RunResult run(XferType xfer, double gib_s, const std::vector<double>& reps = {},
                     std::string path = "posix") {
  RunResult r;
  r.workload.xfer = xfer;
  r.workload.io_size = 1 << 20;
  r.workload.threads = 8;
  r.workload.file = "/mnt/nvme/test";
  r.path.path_used = std::move(path);
  r.result = measurement(gib_s);
  for (const double v : reps) r.repetitions.push_back(measurement(v));
  return r;
}

inline nlohmann::json io_doc(const std::vector<RunResult>& runs,
                             const std::string& host = "node1") {
  nlohmann::json doc{{"schema", "gdsbench.io/1"},
                     {"tool", {{"name", "gdsb-io"}, {"version", "0.1.0"}}},
                     {"argv", {"gdsb-io", "-x", "0"}},
                     {"context",
                      {{"host", host},
                       {"kernel", "6.1.0"},
                       {"os", "Debian 12"},
                       {"cpus", 8},
                       {"started_at", "2026-11-20T00:00:00Z"},
                       {"ended_at", "2026-11-20T00:01:00Z"},
                       {"env", nlohmann::json::object()}}},
                     {"interrupted", false},
                     {"runs", nlohmann::json::array()}};
  for (const auto& r : runs) doc["runs"].push_back(r);
  return doc;
}

inline nlohmann::json topo_doc(const std::string& acs_verdict, const std::string& host = "node1") {
  return {
      {"schema", "gdsbench.topo/1"},
      {"tool", {{"name", "gdsb-topo"}, {"version", "0.1.0"}}},
      {"context", {{"host", host}}},
      {"interrupted", false},
      {"source", {{"kind", "snapshot"}, {"path", nullptr}}},
      {"devices",
       {{{"bdf", "0000:00:01.0"}, {"role", "root_port"}, {"parent", nullptr}, {"name", "root"}},
        {{"bdf", "0000:01:00.0"}, {"role", "gpu"}, {"parent", "0000:00:01.0"}, {"name", host}}}},
      {"checks",
       {{{"id", "acs-redirect"},
         {"title", "ACS"},
         {"verdict", acs_verdict},
         {"devices", {"0000:00:01.0"}},
         {"evidence", {"ctl 0x001d"}}},
        {{"id", "iommu"},
         {"title", "IOMMU"},
         {"verdict", "pass"},
         {"devices", nlohmann::json::array()}}}},
      {"verdict", acs_verdict == "fail" ? "fail" : "pass"}};
}

}  // namespace gdsb::report::test
