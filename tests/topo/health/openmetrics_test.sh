#!/usr/bin/env bash
# gdsb-topo --health --openmetrics read back by real parsers: prometheus_client's OpenMetrics
# parser and its Prometheus text-format parser (the format node_exporter's textfile collector
# reads), from Debian's python3-prometheus-client (ci/install-deps.sh installs it).
# The known-good file is validated against its JSON schema (python3-jsonschema).
# A data NIC's RDMA ports: the recording of NVIDIA/nccl#489 (network_recordings.hpp, written by
# make_topo_fixture) with mlx5_0 port 1 dropped from 200 to 100 Gb/sec.
# Usage: openmetrics_test.sh GDSB_TOPO HGX_LSPCI_TEXT WORKDIR SCHEMA MAKE_TOPO_FIXTURE
set -uo pipefail
topo=$1 hgx=$2 work=$3 schema=$4 make_fixture=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import prometheus_client, jsonschema" 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 with prometheus_client and jsonschema (Debian: python3-prometheus-client python3-jsonschema; ci/install-deps.sh)"
  exit 77
fi
"$topo" --lspci-text "$hgx" --save-fingerprint "$work/good.json" || exit 1
"$py" -c "
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))
print('ok: good.json follows', sys.argv[2])" "$work/good.json" "$schema" || { echo "FAIL: schema"; exit 1; }
# GPU 19:00.0 retrained at x8: one problem.
sed '/^19:00.0 /,/^$/ s/Width x16 (ok)/Width x8 (downgraded)/' "$hgx" >"$work/x8.txt"
NODE_NAME=gpu-node-07 "$topo" --lspci-text "$work/x8.txt" --health --expect "$work/good.json" --openmetrics "$work/gdsb.prom"
rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, want 3"; exit 1; }
# Both parsers over one metrics file, each family a documented gauge: per parser its name,
# the families by name and value(metric, **labels), the one sample with those labels.
cat >"$work/om_read.py" <<'PY'
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
from prometheus_client.parser import text_string_to_metric_families as text_format

def parsed(path):
    text = open(path).read()
    for name, parse in (("OpenMetrics", openmetrics), ("text format", text_format)):
        fams = {f.name: f for f in parse(text)}
        def value(metric, **labels):
            hits = [s.value for s in fams[metric].samples if all(s.labels.get(k) == v for k, v in labels.items())]
            assert len(hits) == 1, (name, metric, labels, hits)
            return hits[0]
        for f in fams.values():
            assert f.type == "gauge", (name, f.name, f.type)
            assert f.documentation, (name, f.name)
        yield name, fams, value
PY
"$py" - "$work/gdsb.prom" "$work" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[2])
from om_read import parsed
for name, fams, value in parsed(sys.argv[1]):
    assert value("gdsb_health_problems") == 1, name
    assert value("gdsb_health_pcie_link_width", bdf="0000:19:00.0", kind="gpu") == 8, name
    assert value("gdsb_health_expected_pcie_link_width", bdf="0000:19:00.0", kind="gpu") == 16, name
    assert value("gdsb_health_pcie_link_width", bdf="0000:3b:00.0", kind="gpu") == 16, name
    # dcgm-exporter's labels for the same GPU: its pci_bus_id (NVML's form) and Hostname.
    assert value("gdsb_health_pcie_link_width", pci_bus_id="00000000:19:00.0", Hostname="gpu-node-07") == 8, name
    assert value("gdsb_health_pcie_link_transfers_per_second", bdf="0000:19:00.0", kind="gpu") == 32e9, name
    assert value("gdsb_health_devices", kind="gpu") == 8, name
    assert value("gdsb_health_expected_devices", kind="nvme") == 8, name
    assert value("gdsb_health_device_present", bdf="0000:19:00.0", kind="gpu") == 1, name
    problems = fams["gdsb_health_problem_info"].samples
    assert [(s.labels["bdf"], s.labels["now"], s.labels["expected"]) for s in problems] == \
        [("0000:19:00.0", "Gen5 x8 of x16", "Gen5 x16")], (name, problems)
    print("ok: %s parser: %d families" % (name, len(fams)))
PY

# RDMA ports, as NVIDIA/nccl#489's ibstatus shows them: mlx5_0 (0000:1b:00.0) port 1 ACTIVE at
# 200 Gb/sec, mlx5_1 (0000:1c:00.0) port 1 DOWN at 10 Gb/sec. Now mlx5_0 runs at half rate.
"$make_fixture" nccl489 "$work/nccl489" >/dev/null || exit 1
"$topo" --sysfs-root "$work/nccl489/root" --save-fingerprint "$work/nccl489-good.json" || exit 1
printf '100 Gb/sec (4X EDR)\n' >"$work/nccl489/root/sys/class/infiniband/mlx5_0/ports/1/rate" || exit 1
"$topo" --sysfs-root "$work/nccl489/root" --health --expect "$work/nccl489-good.json" --openmetrics "$work/ports.prom"
rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: half-rate port: exit $rc, want 3"; exit 1; }
"$py" - "$work/ports.prom" "$work" <<'PY'
import sys
sys.path.insert(0, sys.argv[2])
from om_read import parsed
for name, fams, value in parsed(sys.argv[1]):
    a = dict(bdf="0000:1b:00.0", rdma_dev="mlx5_0", port="1")
    b = dict(bdf="0000:1c:00.0", rdma_dev="mlx5_1", port="1")
    assert value("gdsb_health_nic_port_rate_bits_per_second", **a) == 100e9, name
    assert value("gdsb_health_expected_nic_port_rate_bits_per_second", **a) == 200e9, name
    assert value("gdsb_health_nic_port_up", **a) == 1, name
    assert value("gdsb_health_nic_port_rate_bits_per_second", **b) == 10e9, name
    assert value("gdsb_health_nic_port_up", **b) == 0, name
    assert value("gdsb_health_expected_nic_port_up", **b) == 0, name
    assert value("gdsb_health_problems") == 1, name
    print("ok: %s parser: RDMA port metrics" % name)
PY
