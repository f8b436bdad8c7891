#!/usr/bin/env bash
# gdsb-report history and gate --history from the command line (issue 37): exit codes and
# named errors, the same document twice as one run, two writers adding 1,000 documents each
# at once (2,000 runs, none lost), a truncated database (exit 1, the file left as it was), a
# newer schema, the gate on a regression, on noise and on series of 1, 2 and 3 runs, the
# HTML and JSON of `history show`, and the export in Apache Otava's CSV layout.
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

[ "$failures" -eq 0 ] && echo "all history CLI checks passed"
[ "$failures" -eq 0 ]
