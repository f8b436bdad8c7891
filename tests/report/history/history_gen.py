#!/usr/bin/env python3
"""Nightly gdsb-io documents for the history tests, as a CI job adds them: the CPUONLY read run
of the io_dgx example (a real document's shape), trimmed, one document a night, with the
night's throughput (and IOPS from it), thread count and start time set.

  history_gen.py FIXTURES OUT_DIR HOST --values V1,V2,...      explicit figures, one a night
  history_gen.py FIXTURES OUT_DIR HOST --level EXPR --nights N [--noise F] [--seed S]
                 [--threads EXPR] [--failed-from NIGHT] [--test write]
EXPR is Python over i (the night, from 0). --failed-from: nights from NIGHT (0-based) on
report the run failed with cuFile's EINVAL and no result, as a refused cufile.json does.
--test write: the documents' run is a write test instead of a read.
"""
import argparse, datetime, json, os, random

ap = argparse.ArgumentParser()
ap.add_argument("fixtures"); ap.add_argument("out"); ap.add_argument("host")
ap.add_argument("--values"); ap.add_argument("--level"); ap.add_argument("--nights", type=int)
ap.add_argument("--noise", type=float, default=0.0); ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--threads", default="8"); ap.add_argument("--failed-from", type=int)
ap.add_argument("--test", choices=["read", "write"], default="read")
ap.add_argument("--first-night", type=int, default=0, help="number of the first night (times go on from it)")
a = ap.parse_args()
rng = random.Random(a.seed)
if a.values:
    values = [float(v) for v in a.values.split(",")]
else:
    values = [eval(a.level, {"i": i}) * (1 + a.noise * rng.gauss(0, 1)) for i in range(a.nights)]
base = json.load(open(os.path.join(a.fixtures, "io_dgx.json")))
run = base["runs"][2]
run["result"]["timeseries"] = []
run["result"]["histogram"] = []
run.pop("repetitions", None)
if a.test == "write":
    run["workload"]["io_pattern"] = 1
    run["workload"]["io_pattern_name"] = "WRITE"
os.makedirs(a.out, exist_ok=True)
for k, v in enumerate(values):
    i = a.first_night + k
    d = json.loads(json.dumps(base))
    r = json.loads(json.dumps(run))
    if a.failed_from is not None and i >= a.failed_from:
        r["status"] = "failed"
        r["reason"] = "cuFileDriverOpen failed: EINVAL (-22)\n  cuFile log: failed to load user config"
        r.pop("result", None)
    else:
        r["result"]["throughput_gib_s"] = v
        r["result"]["iops"] = v * 1024
    r["workload"]["threads"] = eval(a.threads, {"i": i})
    d["runs"] = [r]
    d["context"]["host"] = a.host
    # One night a day at 02:00, a minute later for each test of the night.
    t = datetime.datetime(2026, 1, 1, 2, 0, tzinfo=datetime.timezone.utc) + datetime.timedelta(days=i, minutes=1 if a.test == "write" else 0)
    d["context"]["started_at"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
    json.dump(d, open(os.path.join(a.out, "%s-%s-%04d.json" % (a.host, a.test, i)), "w"), indent=1)
