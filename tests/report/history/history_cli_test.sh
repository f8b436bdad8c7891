#!/usr/bin/env bash
# gdsb-report history and gate --history from the command line (issue 37): exit codes and
# named errors, the same document twice as one run, two writers adding 1,000 documents each
# at once (2,000 runs, none lost), a truncated database (exit 1, the file left as it was), a
# newer schema, the gate on a regression, on noise and on series of 1, 2 and 3 runs, the
# HTML and JSON of `history show`, and the export in Apache Otava's CSV layout. Issue 41:
# each run's status in show (text, JSON, HTML, the badge), attribution at the boundary,
# fleet events of per-node documents, a series per storage, a read-only directory, export
# over our own files, an empty foreign SQLite file, `html DIR`.
#   history_cli_test.sh GDSB_REPORT FIXTURES_DIR WORK_DIR
set -uo pipefail
bin=$(realpath "$1") fx=$(realpath "$2") work=$3
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
ok() { echo "ok:   $1"; }
bad() { echo "FAIL: $1"; failures=$((failures + 1)); }
# run WANT_RC CMD...: output in out.txt / err.txt
run() {
  local want=$1; shift
  "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" -eq "$want" ] && return 0
  echo "  exit $rc, expected $want: $*"; head -5 out.txt err.txt
  return 1
}

# Documents: the CPUONLY run of the io_dgx example, trimmed, with the figures and settings
# each case needs. gen.py SERIES HOST N 'level(i)' 'threads(i)' [NOISE SEED]
cat >gen.py <<'PY'
import datetime, json, random, sys, os
fx, out, host, n, level, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
noise = float(sys.argv[7]) if len(sys.argv) > 7 else 0.02
rng = random.Random(int(sys.argv[8]) if len(sys.argv) > 8 else 1)
base = json.load(open(os.path.join(fx, "io_dgx.json")))
run = base["runs"][2]
run["result"]["timeseries"] = []
run["result"]["histogram"] = []
run.pop("repetitions", None)
os.makedirs(out, exist_ok=True)
for i in range(n):
    d = json.loads(json.dumps(base))
    r = json.loads(json.dumps(run))
    v = eval(level, {"i": i}) * (1 + noise * rng.gauss(0, 1))
    r["result"]["throughput_gib_s"] = v
    r["result"]["iops"] = v * 1024
    r["workload"]["threads"] = eval(threads, {"i": i})
    d["runs"] = [r]
    d["context"]["host"] = host
    d["context"]["started_at"] = (datetime.datetime(2026, 1, 1, 2, tzinfo=datetime.timezone.utc) +
                                  datetime.timedelta(days=i)).strftime("%Y-%m-%dT%H:%M:%SZ")  # one night a day
    json.dump(d, open(os.path.join(out, "%s-%04d.json" % (host, i)), "w"), indent=1)
PY
gen() { python3 gen.py "$fx" "$@" || { echo "FAIL: generating documents"; exit 1; }; }
# edit.py DIR 'python statements on d (the document) and i (its night)': one document per night
cat >edit.py <<'PY'
import glob, json, sys
for i, f in enumerate(sorted(glob.glob(sys.argv[1] + "/*.json"))):
    d = json.load(open(f))
    exec(sys.argv[2], {"d": d, "i": i})
    json.dump(d, open(f, "w"), indent=1)
PY
edit() { python3 edit.py "$@" || { echo "FAIL: editing documents"; exit 1; }; }

# --- idempotence -------------------------------------------------------------------------
gen one nodeA 3 '10.0' '8'
if run 0 "$bin" history add h.db one/nodeA-0000.json && grep -q "added one/nodeA-0000.json as run 1" out.txt &&
   run 0 "$bin" history add h.db one/nodeA-0000.json && grep -q "already there" out.txt &&
   python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1])), open('same.json','w'))" one/nodeA-0000.json &&
   run 0 "$bin" history add h.db same.json && grep -q "already there same.json as run 1" out.txt; then
  ok "the same document, added twice and re-indented, is one run"
else bad "idempotence"; fi

# --- two writers at once -----------------------------------------------------------------
gen wa w1 1000 '10.0' '8' 0.05 11
gen wb w2 1000 '10.0' '8' 0.05 12
writer() {  # ten invocations of 100 documents each, one transaction per document
  local dir=$1 rc=0
  for b in 0 1 2 3 4 5 6 7 8 9; do
    "$bin" history add mt.db "$dir"/*-0"$b"??.json >/dev/null 2>>"$dir.err" || rc=1
  done
  return $rc
}
writer wa & pa=$!
writer wb & pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
if [ $ra -eq 0 ] && [ $rb -eq 0 ] && run 0 "$bin" history show mt.db --json mt.json &&
   python3 -c "import json; d=json.load(open('mt.json')); assert len(d['runs']) == 2000, len(d['runs'])"; then
  ok "two writers adding 1,000 documents each at once: 2,000 runs"
else bad "two writers: exit $ra/$rb, $(cat wa.err wb.err 2>/dev/null | head -3)"; fi

# --- a truncated database ---------------------------------------------------------------
cp mt.db tr.db && truncate -s $(( $(stat -c %s tr.db) / 2 )) tr.db
before=$(sha256sum tr.db)
if run 1 "$bin" history add tr.db one/nodeA-0001.json && grep -q "database damaged" err.txt &&
   run 1 "$bin" history show tr.db && run 1 "$bin" gate --history tr.db &&
   [ "$(sha256sum tr.db)" = "$before" ]; then
  ok "a truncated database: 'database damaged', exit 1, the file unchanged"
else bad "truncated database: $(head -2 err.txt)"; fi

echo "a note, not a database; long enough to hold an SQLite header and more" >notes.txt
cp notes.txt notes.orig
if run 1 "$bin" history add notes.txt one/nodeA-0001.json && grep -q "not a gdsbench history" err.txt &&
   cmp -s notes.txt notes.orig; then ok "a text file: 'not a gdsbench history', exit 1, unchanged"
else bad "text file as a history"; fi

cp h.db newer.db
python3 -c "import sqlite3; c=sqlite3.connect('newer.db'); c.execute(\"UPDATE gdsb_history SET value='2' WHERE key='schema_version'\"); c.commit()"
if run 2 "$bin" history show newer.db && grep -q "newer schema" err.txt; then ok "a newer schema: exit 2, named"
else bad "newer schema"; fi

if run 1 "$bin" history show missing.db && [ ! -e missing.db ]; then ok "show of a missing history: exit 1, nothing created"
else bad "missing history"; fi
if run 2 "$bin" history add h.db "$fx/topo_clean.json"; then ok "a topology document: exit 2 (no figures)"
else bad "topology document"; fi

# --- the gate ---------------------------------------------------------------------------
# 40 nights: 10 GiB/s in 2% noise, then from night 25 the thread count drops to 2 and the figure to 6.
gen reg nodeR 40 '10.0 if i < 25 else 6.0' '8 if i < 25 else 2'
"$bin" history add g.db reg/*.json >/dev/null
if run 3 "$bin" gate --history g.db --junit g.xml --markdown g.md &&
   grep -q "thread count went from 8 to 2" g.md && grep -q "<failure" g.xml &&
   grep -q "thread count went from 8 to 2" g.xml && grep -q "FAIL" out.txt; then
  ok "gate --history: a regression fails (exit 3), JUnit and Markdown name the change and the setting"
else bad "gate on a regression"; fi
# A team takes the regression as the new normal: --accept-through its run passes, said as
# accepted; the run before it still fails; a run id the history lacks is a usage error.
cp_run=$(grep -o "regression: .* at run [0-9]*" g.md | head -1 | grep -o "[0-9]*$")
if [ -n "$cp_run" ] && run 0 "$bin" gate --history g.db --accept-through "$cp_run" &&
   grep -q "accepted regression (--accept-through $cp_run)" out.txt &&
   run 3 "$bin" gate --history g.db --accept-through "$((cp_run - 1))" &&
   run 2 "$bin" gate --history g.db --accept-through 99999 && grep -q "no run with that id" err.txt; then
  ok "gate --history --accept-through: the named regression passes as accepted, an earlier run does not"
else bad "gate --accept-through (change point at run '${cp_run}')"; fi
if run 2 "$bin" gate --history g.db --max-throughput-drop 5% && run 2 "$bin" gate &&
   run 2 "$bin" gate --history g.db --baseline reg/nodeR-0000.json --current reg/nodeR-0039.json; then
  ok "gate: --history with thresholds or documents, or nothing at all, is a usage error"
else bad "gate usage"; fi

for n in 1 2 3; do
  gen "short$n" "nodeS$n" "$n" '10.0' '8' 0.01 $n
  "$bin" history add "s$n.db" short$n/*.json >/dev/null
  if [ "$n" -lt 3 ]; then want="too few to judge"; else want="passed"; fi
  if run 0 "$bin" gate --history "s$n.db" && grep -q "$want" out.txt; then ok "gate on a series of $n run(s): exit 0, '$want'"
  else bad "gate on $n run(s)"; fi
done

# 12 good nights, then a night whose run failed (as on 4 x H100 on 2026-11-27: a cufile.json
# cuFile refused, exit 1, the document written with the run failed): the gate fails and says
# why; before, it judged the last good night and passed. A night that measured another
# test only is no failure of this one.
gen fail nodeF 13 '10.0' '8' 0.02 5
python3 - fail/nodeF-0012.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
r["status"] = "failed"
r["reason"] = "cuFileDriverOpen failed: EINVAL (-22)\n  cuFile log: ..."
r.pop("result", None)
json.dump(d, open(sys.argv[1], "w"))
PY
"$bin" history add f.db fail/*.json >/dev/null
if run 3 "$bin" gate --history f.db &&
   grep -q "no figure in the node's newest run 13: failed: cuFileDriverOpen failed: EINVAL (-22) (last figure in run 12)" out.txt &&
   run 0 "$bin" history show f.db --json f.json &&
   python3 -c "import json,sys; h=json.load(open('f.json')); sys.exit(0 if [len(s['points']) for s in h['series']] == [12, 12, 12] else 1)"; then
  ok "gate --history: a newest run that failed its test fails the gate, with the run's reason"
else bad "gate on a failed newest run"; fi
python3 - fail/nodeF-0012.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["runs"][0]
r["workload"]["io_size"] = 4096
r["status"] = "ok"  # another test, which ran fine
r.pop("reason", None)
r["result"] = json.load(open(sys.argv[1].replace("0012", "0011")))["runs"][0]["result"]
json.dump(d, open(sys.argv[1], "w"))
PY
"$bin" history add f2.db fail/*.json >/dev/null
if run 0 "$bin" gate --history f2.db && grep -q "not measured in the node's newest night (its newest run 13" out.txt; then
  ok "gate --history: a newest run that did not ask for a test skips it"
else bad "gate on a newest run of another test"; fi

# 30 nights of 8% noise and no change; find a seed whose newest night is more than 5% below
# the one before: the two-document gate fails it, the history gate does not.
for seed in $(seq 1 60); do
  rm -rf noise && gen noise nodeN 30 '10.0' '8' 0.08 "$seed"
  python3 - <<'PY' && break
import json, sys
a = json.load(open("noise/nodeN-0028.json"))["runs"][0]["result"]["throughput_gib_s"]
b = json.load(open("noise/nodeN-0029.json"))["runs"][0]["result"]["throughput_gib_s"]
sys.exit(0 if b < 0.95 * a else 1)
PY
done
"$bin" history add n.db noise/*.json >/dev/null
if run 3 "$bin" gate --baseline noise/nodeN-0028.json --current noise/nodeN-0029.json &&
   run 0 "$bin" gate --history n.db; then
  ok "noise that a fixed 5% threshold fails passes the history gate"
else bad "noise gate"; fi

# --- show and export ----------------------------------------------------------------------
if run 0 "$bin" history show g.db --html g.html --json g.json && grep -q "<svg" g.html &&
   grep -q "run 26" g.html && python3 - <<'PY'
import json
d = json.load(open("g.json"))
assert d["schema"] == "gdsbench.history/1"
s = [x for x in d["series"] if x["metric"] == "throughput"][0]
c = s["change_points"][-1]
assert c["run"] == 26 and c["worse"], c
assert {"fact": "threads", "label": "thread count", "before": "8", "after": "2"} in c["context_changes"], c
PY
then ok "history show: HTML with the change point marked, JSON with the attribution"
else bad "history show"; fi
if run 2 "$bin" history show g.db --html g.db; then ok "show refuses to write over the database"
else bad "show over the database"; fi

if run 0 "$bin" history export g.db --csv otava && [ -f otava/otava.yaml ] && python3 - <<'PY'
# Read the export as Apache Otava's CsvImporter does (otava/importer.py): the header names the
# time column, the attributes and the metrics; every metric cell converts with float().
import csv, datetime, glob
files = glob.glob("otava/*.csv")
assert len(files) == 1, files
rows = list(csv.reader(open(files[0], newline="")))
header = rows[0]
assert header[:3] == ["time", "run", "document"], header
for m in ("throughput", "iops", "p99"):
    assert m in header, header
assert len(rows) == 41
for row in rows[1:]:
    datetime.datetime.strptime(row[0], "%Y-%m-%d %H:%M:%S %z")
    for m in ("throughput", "iops", "p99"):
        float(row[header.index(m)])
assert rows[26][header.index("threads")] == "2" and rows[1][header.index("threads")] == "8"
yaml = open("otava/otava.yaml").read()
assert "type: csv" in yaml and "time_column: time" in yaml and '"p99": {direction: -1}' in yaml
PY
then ok "history export --csv: Otava's layout (time, attributes, metrics) and otava.yaml"
else bad "export"; fi

# --- issue 41 -----------------------------------------------------------------------------
# Failures are results: show says which run failed and why, in the text, the JSON and the page,
# whose badge is red over the failing newest run though no change point is worse.
if run 0 "$bin" history show f.db --html f.html --json f41.json &&
   grep -q "^failed CPUONLY READ 1 MiB in /mnt/nvme0/gdsb on nodeF in 1 run (run 13): cuFileDriverOpen failed: EINVAL (-22)$" out.txt &&
   grep -q "^13 runs (1 with a failed test), 3 series, " out.txt &&
   grep -q 'class="badge b-bad">[0-9]* change points, 0 worse; newest run failed: CPUONLY READ 1 MiB in /mnt/nvme0/gdsb on nodeF (run 13)<' f.html &&
   grep -q 'class="badge b-bad">failed</span><br>CPUONLY READ 1 MiB in /mnt/nvme0/gdsb on nodeF: failed: cuFileDriverOpen failed: EINVAL (-22)<' f.html &&
   python3 - <<'PY'
import json
d = json.load(open("f41.json"))
last = d["runs"][-1]
assert last["status"] == "failed" and last["newest_of"] == ["nodeF"], last
assert last["no_figure"][0]["reason"] == "cuFileDriverOpen failed: EINVAL (-22)", last
assert all(r["status"] == "ok" for r in d["runs"][:-1])
PY
then ok "history show: a failed run is listed with its reason; the page's badge is red over it"
else bad "show of a failed newest run"; fi

# Attribution at the boundary: the kernel changed at night 25 (run 26) with no effect, the
# driver at night 40 (run 41) with a -20% step. Only the driver is named.
gen att nodeT 60 '10.0 if i < 40 else 8.0' '8'
edit att 'd["context"]["kernel"] = "6.5.0" if i < 25 else "6.8.0"; d["context"]["versions"] = {"nvidia_driver": "570.86.15" if i < 40 else "580.65.06"}'
"$bin" history add att.db att/*.json >/dev/null
if run 0 "$bin" history show att.db --json att.json && python3 - <<'PY'
import json
d = json.load(open("att.json"))
s = [x for x in d["series"] if x["metric"] == "throughput"][0]
runs = [c["run"] for c in s["change_points"]]
assert 26 not in runs, runs
c = [c for c in s["change_points"] if c["run"] == 41][0]
assert [f["fact"] for f in c["context_changes"]] == ["driver"], c["context_changes"]
assert c["context_changes"][0]["before"] == "570.86.15" and c["context_changes"][0]["after"] == "580.65.06"
assert "kernel" not in c["sentence"], c["sentence"]
PY
then ok "a change point names what differs at its boundary (the driver), not what changed earlier (the kernel)"
else bad "attribution at the boundary"; fi

# Fleet events of per-node documents: two nodes, one document each a night (different run
# ids, 02:00 and 03:00), the same driver update on night 30 with a step.
for h in nodeP nodeQ; do
  gen "fl$h" "$h" 40 '10.0 if i < 30 else 7.0' '8' 0.01 "$([ "$h" = nodeP ] && echo 21 || echo 22)"
  hour=$([ "$h" = nodeP ] && echo 2 || echo 3)
  edit "fl$h" "import datetime; d['context']['started_at'] = (datetime.datetime(2026, 1, 1, $hour) + datetime.timedelta(days=i)).strftime('%Y-%m-%dT%H:%M:%SZ'); d['context']['versions'] = {'nvidia_driver': '570.86.15' if i < 30 else '580.65.06'}"
done
"$bin" history add fl.db flnodeP/*.json flnodeQ/*.json >/dev/null
if run 0 "$bin" history show fl.db --json fl.json &&
   grep -q "^fleet: 2026-01-31: 2 nodes changed when NVIDIA driver changed (570.86.15 -> 580.65.06): nodeP nodeQ$" out.txt &&
   python3 - <<'PY'
import json
d = json.load(open("fl.json"))
f = [e for e in d["fleet"] if e["fact"] == "driver"]
assert len(f) == 1 and f[0]["nodes"] == ["nodeP", "nodeQ"] and f[0]["night"] == "2026-01-31", d["fleet"]
PY
then ok "fleet: the same driver update on two nodes' own documents on one night is one event naming the fact"
else bad "fleet events of per-node documents"; fi

# A series means one storage: 30 nights on the local NVMe at 10 GiB/s, then 20 on NFS at
# 1.04 (-89.6%): two series and no change point, instead of a false one.
gen fs nodeK 50 '10.0 if i < 30 else 1.04' '8'
edit fs 'd["runs"][0]["workload"]["file"] = "/mnt/nvme0/gdsb/testfile" if i < 30 else "/mnt/nfs/gdsb/testfile"'
"$bin" history add fs.db fs/*.json >/dev/null
if run 0 "$bin" history show fs.db --json fs.json && grep -q " 6 series, 0 change points" out.txt &&
   run 0 "$bin" gate --history fs.db && python3 - <<'PY'
import json
d = json.load(open("fs.json"))
tests = sorted({s["test"] for s in d["series"]})
assert tests == ["CPUONLY READ 1 MiB in /mnt/nfs/gdsb", "CPUONLY READ 1 MiB in /mnt/nvme0/gdsb"], tests
PY
then ok "io runs on another file system start a new series, not a -89.6% change point"
else bad "io series per storage"; fi
# The same at one path: an ext4 on NVMe at /mnt/data, replaced after 30 nights by an NFS
# mount at /mnt/data. The documents' storage (gdsb-io records it) keys the series by file
# system and source: two series, no change point, the gate passes. The same documents without
# storage (older versions) are one series "in /mnt/data/gdsb" with the false -89.6% change
# point that fails the gate: what the storage is for.
gen mp nodeM 50 '10.0 if i < 30 else 1.04' '8'
edit mp 'd["runs"][0]["workload"]["file"] = "/mnt/data/gdsb/testfile"'
cp -r mp mp-old
edit mp 'd["runs"][0]["storage"] = {"fs_type": "ext4", "source": "/dev/nvme0n1p1", "mount_point": "/mnt/data", "dev": "259:1"} if i < 30 else {"fs_type": "nfs4", "source": "10.0.0.5:/export", "mount_point": "/mnt/data", "dev": "0:53"}'
"$bin" history add mp.db mp/*.json >/dev/null
"$bin" history add mp-old.db mp-old/*.json >/dev/null
if run 0 "$bin" history show mp.db --json mp.json && grep -q " 6 series, 0 change points" out.txt &&
   run 0 "$bin" gate --history mp.db && python3 - <<'PY' &&
import json
d = json.load(open("mp.json"))
runs = {s["test"]: len(s["points"]) for s in d["series"] if s["metric"] == "throughput"}
assert runs == {"CPUONLY READ 1 MiB on ext4 /dev/nvme0n1p1": 30, "CPUONLY READ 1 MiB on nfs4 10.0.0.5:/export": 20}, runs
PY
   run 0 "$bin" history show mp-old.db && grep -q "^worse  CPUONLY READ 1 MiB in /mnt/data/gdsb throughput on nodeM -89.6% at run 31" out.txt &&
   run 3 "$bin" gate --history mp-old.db
then ok "io runs on another file system at the same mount point: two series by their recorded storage, not a -89.6% change point"
else bad "io series per recorded storage"; fi
# Shared storage: the same points in another directory, or with twice the ranks a node, are
# other series.
mkdir -p cl && for i in $(seq 0 11); do
  python3 - "$fx/cluster_storage.json" "cl/c-$i.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); i = int(sys.argv[3])
d["context"]["started_at"] = "2026-02-%02dT01:00:00Z" % (1 + i)
ss = d["shared_storage"]
if i >= 8:
    ss["dir"] = "/lustre/gdsb"
for p in ss["points"]:
    if isinstance(p.get("aggregate_gb_s"), (int, float)):
        p["aggregate_gb_s"] *= (0.1 if i >= 8 else 1.0) * (1 + 0.003 * ((i * 7) % 5))
json.dump(d, open(sys.argv[2], "w"))
PY
done
"$bin" history add cl.db cl/*.json >/dev/null
if run 0 "$bin" history show cl.db --json cl.json && python3 - <<'PY'
import json
d = json.load(open("cl.json"))
ss = [s for s in d["series"] if s["node"] == "(shared storage)" and "nodes CPUONLY read" in s["test"]]
tests = sorted(s["test"] for s in ss)
assert any(t.endswith(" in /lustre/gdsb") for t in tests) and any(t.endswith(" in /shared/gdsb") for t in tests), tests
assert "4 nodes CPUONLY read, 1 rank a node, file-per-process, 1 MiB blocks, 256 MiB a rank in /shared/gdsb" in tests, tests
assert all(not s["change_points"] for s in ss), [s["change_points"] for s in ss]
PY
then ok "shared storage: another directory is another series (key: nodes, mode, op, ranks a node, layout, block, bytes a rank, dir)"
else bad "shared-storage series per storage"; fi
# The same directory on another storage: /shared/gdsb on an NFS export for 12 nights, then on
# a Lustre file system mounted at the same path for 8, a tenth as fast. The storage gdsb-cluster
# records (shared_storage.storage, rank 0's mount of the directory) is in the key beside the
# directory: two series, no change point, the gate passes. The same documents without storage
# (older versions) are one series with a false -90% change point that fails the gate.
mkdir -p cs cs-old && for i in $(seq 0 19); do
  python3 - "$fx/cluster_storage.json" "cs/c-$i.json" "cs-old/c-$i.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); i = int(sys.argv[4])
d["context"]["started_at"] = "2026-03-%02dT01:00:00Z" % (1 + i)
ss = d["shared_storage"]
for p in ss["points"]:
    if isinstance(p.get("aggregate_gb_s"), (int, float)):
        p["aggregate_gb_s"] *= (0.1 if i >= 12 else 1.0) * (1 + 0.003 * ((i * 7) % 5))
json.dump(d, open(sys.argv[3], "w"))
ss["storage"] = ({"fs_type": "nfs4", "source": "10.0.0.5:/export", "mount_point": "/shared"} if i < 12 else
                 {"fs_type": "lustre", "source": "10.0.0.9@o2ib:/scratch", "mount_point": "/shared"})
json.dump(d, open(sys.argv[2], "w"))
PY
done
"$bin" history add cs.db cs/*.json >/dev/null
"$bin" history add cs-old.db cs-old/*.json >/dev/null
read4="4 nodes CPUONLY read, 1 rank a node, file-per-process, 1 MiB blocks, 256 MiB a rank in /shared/gdsb"
if run 0 "$bin" history show cs.db --json cs.json && grep -q " 0 change points" out.txt &&
   run 0 "$bin" gate --history cs.db && python3 - "$read4" <<'PY' &&
import json, sys
d = json.load(open("cs.json"))
ss = {s["test"]: s for s in d["series"] if s["node"] == "(shared storage)"}
runs = {t: len(s["points"]) for t, s in ss.items() if t.startswith(sys.argv[1])}
assert runs == {sys.argv[1] + " on nfs4 10.0.0.5:/export": 12, sys.argv[1] + " on lustre 10.0.0.9@o2ib:/scratch": 8}, runs
assert all(not s["change_points"] for s in ss.values()), [(t, s["change_points"]) for t, s in ss.items() if s["change_points"]]
PY
   run 0 "$bin" history show cs-old.db && grep -q "^worse  $read4 aggregate on (shared storage) -90.0% at run [0-9]* (2026-03-13)" out.txt &&
   run 3 "$bin" gate --history cs-old.db
then ok "shared storage: the same directory on another file system is another series by the recorded storage, not a -90% change point"
else bad "shared-storage series per recorded storage"; fi

# A read-only directory: the error names the directory and the reason. Run as an unprivileged
# user (root writes anywhere).
mkdir -p ro && cp g.db ro/h.db && chmod 0644 ro/h.db && chmod 0555 ro && chmod 0755 . 
as_user=()
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
elif [ "$(id -u)" -eq 0 ]; then as_user=(skip); fi
if [ "${as_user[0]:-}" = skip ] || ! "${as_user[@]}" test -x "$bin"; then
  echo "skip: a read-only directory (running as root without setpriv, or $bin not reachable by nobody)"
elif run 1 "${as_user[@]}" "$bin" history show ro/h.db &&
   grep -q "ro/h.db: cannot create the shared-memory file beside the database (ro/h.db-shm): ro: Permission denied" err.txt &&
   run 1 "${as_user[@]}" "$bin" history add ro/new.db one/nodeA-0000.json &&
   grep -q "ro/new.db: cannot create the history in ro: Permission denied" err.txt && [ ! -e ro/new.db ]; then
  ok "a read-only directory: exit 1 naming the directory and the reason (the -shm file; a new history)"
else bad "read-only directory: $(head -2 err.txt)"; fi
chmod 0755 ro

# A second export into the same directory replaces our own files; a user's file is refused.
if run 0 "$bin" history export g.db --csv otava && mkdir -p theirs && cp otava/*.csv theirs/ &&
   run 2 "$bin" history export g.db --csv theirs && grep -q "exists and is not a gdsbench report" err.txt; then
  ok "history export twice into one directory: our CSV files replaced, a user's file of the same name refused (exit 2)"
else bad "re-export: $(head -2 err.txt)"; fi

# An empty SQLite file of another application is refused by name and left as it was.
python3 -c "import sqlite3; c=sqlite3.connect('empty.db'); c.execute('CREATE TABLE t (x)'); c.execute('DROP TABLE t'); c.commit()"
before=$(sha256sum empty.db)
if run 1 "$bin" history add empty.db one/nodeA-0000.json &&
   grep -q "empty.db: not a gdsbench history: an empty SQLite database of another application" err.txt &&
   [ "$(sha256sum empty.db)" = "$before" ]; then
  ok "an empty SQLite file of another application: 'not a gdsbench history', exit 1, unchanged"
else bad "empty foreign SQLite: $(head -2 err.txt)"; fi

# `html DIR`: a directory, and the reports in it that html renders.
mkdir -p survey && cp "$fx/io_dgx.json" survey/io.json && cp "$fx/topo_clean.json" survey/topo.json &&
  echo '{"not": "ours"}' >survey/other.json && mkdir -p empty-dir
if run 2 "$bin" html survey &&
   grep -q "survey: is a directory, not a report; the reports in it: survey/io.json (io), survey/topo.json (topo); render one with gdsb-report html FILE" err.txt &&
   run 2 "$bin" html empty-dir && grep -q "none of its .json files is a gdsbench report" err.txt &&
   run 2 "$bin" compare survey survey/io.json && grep -q "survey: is a directory, not a document" err.txt; then
  ok "html DIR: exit 2, says it is a directory and names the reports in it"
else bad "html DIR: $(head -2 err.txt)"; fi

[ "$failures" -eq 0 ] && echo "all history CLI checks passed"
[ "$failures" -eq 0 ]
