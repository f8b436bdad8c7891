#!/usr/bin/env python3
"""deploy/kubernetes read back: every manifest parses (PyYAML, Debian's python3-yaml; the NPD
config with json, as NPD reads it) and holds what deploy/kubernetes/README.md and
docs/gdsb-topo.md say of it, against the rules of the programs that read them:
node-problem-detector v1.36.0 (pkg/custompluginmonitor/types/config.go, types.go) and the Node
Readiness Controller's v1alpha1 API (api/v1alpha1/nodereadinessrule_types.go).

Usage: k8s_manifests_test.py DEPLOY_DIR DOCS_DIR
"""
import json
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("SKIP: no PyYAML (Debian: python3-yaml; ci/install-deps.sh installs it)")
    sys.exit(77)

deploy, docs = sys.argv[1:3]
failures = []


def expect(ok, msg):
    if not ok:
        print("FAIL:", msg)
        failures.append(msg)


def load_all(name):
    with open(os.path.join(deploy, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


kust = load_all("kustomization.yaml")[0]
for r in kust["resources"]:
    expect(os.path.exists(os.path.join(deploy, r)), "kustomization: resource %s missing" % r)
gen = kust["configMapGenerator"][0]
npd_file = gen["files"][0]
config = json.load(open(os.path.join(deploy, npd_file)))  # NPD parses it with encoding/json

# --- The NPD custom plugin monitor config --------------------------------------------------
pc = config["pluginConfig"]
expect(config["plugin"] == "custom", "plugin is not \"custom\" (config.go Validate)")
expect(pc["timeout"] == "5s" and pc["max_output_length"] == 80 and pc["invoke_interval"] == "30s",
       "pluginConfig differs from NPD's defaults the docs name (5s, 80, 30s): %s" % pc)
expect(pc.get("skip_initial_status") is True,
       "skip_initial_status not set: NPD would publish the conditions False before the first check")
conditions = {c["type"]: c for c in config["conditions"]}
rules = config["rules"]
ruled = [r["condition"] for r in rules]
# One rule per condition: two permanent rules on one condition make it flip between their
# verdicts (kubernetes/node-problem-detector#566, #664).
expect(sorted(ruled) == sorted(conditions), "conditions %s and rules %s do not pair one to one" % (
    sorted(conditions), ruled))
kinds = {}
metric_writers = []
for r in rules:
    a = r["args"]
    expect(r["type"] == "permanent", "%s: not a permanent rule" % r["condition"])
    expect(r["path"] == "/usr/bin/gdsb-topo", "%s: path %s is not where the .deb installs" % (r["condition"], r["path"]))
    expect(a[:2] == ["--health", "--npd"], "%s: args %s" % (r["condition"], a))
    expect("--state" not in a and "--slurm-drain" not in a, "%s: --state or --slurm-drain under NPD" % r["condition"])
    expect(r["timeout"] == "5s", "%s: timeout %s" % (r["condition"], r["timeout"]))
    expect("--timeout" not in a, "%s: --timeout given; under --npd it defaults below NPD's" % r["condition"])
    kinds[a[a.index("--npd-kind") + 1]] = r
    if "--openmetrics" in a:
        metric_writers.append(a[a.index("--openmetrics") + 1])
    expect(r["reason"] != conditions[r["condition"]]["reason"], "%s: the fault's reason is the ok one" % r["condition"])
expect(sorted(kinds) == ["hardware", "known-good", "unchecked"], "--npd-kind values: %s" % sorted(kinds))
expect(len(metric_writers) == 1, "metrics written by %d rules, want one" % len(metric_writers))
known_good = {r["args"][r["args"].index("--expect") + 1] for r in rules}
expect(len(known_good) == 1, "rules read different known-good files: %s" % known_good)
known_good = known_good.pop()

# --- The DaemonSet -----------------------------------------------------------------------
docs_ds = {d["kind"]: d for d in load_all("daemonset.yaml")}
ds = docs_ds["DaemonSet"]
spec = ds["spec"]["template"]["spec"]
expect(spec.get("hostPID") is True, "DaemonSet: not hostPID")
expect(spec.get("hostNetwork") is True, "DaemonSet: not hostNetwork (the node's NICs in /sys/class/net)")
(c,) = spec["containers"]
expect(c["securityContext"].get("privileged") is True, "DaemonSet: not privileged")
expect("--config.custom-plugin-monitor=/config/" + npd_file in c["command"], "NPD is not given %s" % npd_file)
env = {e["name"]: e for e in c["env"]}
expect(env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName", "NODE_NAME is not the node's name")
volumes = {v["name"]: v for v in spec["volumes"]}
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}


def host_path_at(mount_path):
    m = mounts.get(mount_path)
    return m and volumes[m["name"]].get("hostPath", {}).get("path")


expect(host_path_at("/dev/kmsg") == "/dev/kmsg", "/dev/kmsg is not the node's")
expect(host_path_at("/sys") == "/sys", "/sys is not the node's")
expect(host_path_at(os.path.dirname(known_good)) == os.path.dirname(known_good),
       "the known-good file %s is not on a hostPath of the same directory" % known_good)
expect(host_path_at(os.path.dirname(metric_writers[0])) is not None,
       "the metrics file %s is not on a hostPath" % metric_writers[0])
cfg = volumes[mounts["/config"]["name"]]
expect(cfg["configMap"]["name"] == gen["name"] and gen.get("namespace") == ds["metadata"]["namespace"],
       "the config volume is not the generated ConfigMap %s" % gen["name"])
crb = docs_ds["ClusterRoleBinding"]
expect(crb["roleRef"]["name"] == "system:node-problem-detector" and
       crb["subjects"][0]["name"] == spec["serviceAccountName"], "NPD's service account is not bound to its role")
tolerated = {(t.get("key"), t.get("operator"), t.get("effect")) for t in spec["tolerations"]}
expect((None, "Exists", "NoSchedule") in tolerated, "the DaemonSet does not tolerate the taint it causes")

# --- The NodeReadinessRule (readiness.node.x-k8s.io/v1alpha1) ------------------------------
(nrr,) = load_all("node-readiness-rule.yaml")
expect(nrr["apiVersion"] == "readiness.node.x-k8s.io/v1alpha1" and nrr["kind"] == "NodeReadinessRule",
       "NodeReadinessRule apiVersion/kind: %s %s" % (nrr["apiVersion"], nrr["kind"]))
ns = nrr["spec"]
expect({c["type"] for c in ns["conditions"]} == set(conditions), "the rule's conditions are not NPD's")
for cond in ns["conditions"]:
    expect(cond["requiredStatus"] == "False", "%s: requiredStatus %s" % (cond["type"], cond["requiredStatus"]))
    expect("defaultStatus" not in cond, "%s: a defaultStatus lets a node in before its first check" % cond["type"])
taint = ns["taint"]
# The CRD's CEL rules on the taint key.
prefix, _, name = taint["key"].partition("/")
expect(prefix == "readiness.k8s.io" and taint["key"].count("/") == 1, "taint key %s" % taint["key"])
expect(0 < len(name) <= 63 and re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", name),
       "taint key name %s" % name)
expect(taint["effect"] in ("NoSchedule", "PreferNoSchedule", "NoExecute"), "taint effect %s" % taint["effect"])
expect(len(taint.get("value", "")) <= 63, "taint value too long")
expect(ns["enforcementMode"] == "continuous", "enforcementMode %s: a fault after boot would not taint" % ns["enforcementMode"])
expect(ns.get("conditionPolicy", "allOf") == "allOf", "conditionPolicy")
expect(ns["nodeSelector"]["matchLabels"] == spec["nodeSelector"], "the rule and the DaemonSet select other nodes")

# --- What the docs say -------------------------------------------------------------------
readme = open(os.path.join(deploy, "README.md")).read()
guide = open(os.path.join(docs, "gdsb-topo.md")).read()
for word in list(conditions) + [r["reason"] for r in rules] + [c["reason"] for c in conditions.values()] + [
        taint["key"], known_good, metric_writers[0], "readiness.node.x-k8s.io/v1alpha1"]:
    expect(word in readme, "README.md does not name %s" % word)
for word in ["--npd", "--npd-kind", "--npd-unchecked-unknown", "deploy/kubernetes"]:
    expect(word in guide, "docs/gdsb-topo.md does not name %s" % word)

print("PASS: deploy/kubernetes parses and agrees with its docs" if not failures else "FAILED: %d" % len(failures))
sys.exit(1 if failures else 0)
