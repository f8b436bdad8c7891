#!/usr/bin/env python3
"""Runs Apache Otava's own change-point analysis on the committed synthetic series and writes
what it finds as JSON: the oracle that gdsbench's E-Divisive (reports/src/history/changepoint.cpp) is
compared with.

    changepoint_otava.py OTAVA_SRC FIXTURE_DIR OUT.json

OTAVA_SRC is a checkout of github.com/apache/otava (its top directory, holding otava/). Only
otava.series and otava.analysis are imported; they need numpy and scipy and nothing else of
Otava's dependencies (no dateparser, pg8000, slack, ...). Each case goes through Otava's public
entry point, Series(...).analyze(AnalysisOptions), as `otava analyze` does for a CSV test.
Otava's --orig-edivisive method is also run with fixed seeds (it is random), as
otava.analysis.compute_change_points_orig(values, max_pvalue, seed) since Series.analyze gives
it no seed.
"""
import csv
import json
import os
import subprocess
import sys

ORIG_SEEDS = [1, 2, 3, 4, 5]


def read_series(path):
    with open(path, newline="") as f:
        return [float(row["value"]) for row in csv.DictReader(f)]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: changepoint_otava.py OTAVA_SRC FIXTURE_DIR OUT.json")
    otava_src, fixture_dir, out_path = sys.argv[1:]
    sys.path.insert(0, otava_src)
    import numpy
    import scipy
    from otava.analysis import compute_change_points_orig
    from otava.series import AnalysisOptions, Metric, Series

    with open(os.path.join(fixture_dir, "cases.json")) as f:
        cases = json.load(f)["cases"]
    results = []
    for case in cases:
        values = read_series(os.path.join(fixture_dir, "series", case["series"] + ".csv"))
        opts = AnalysisOptions()
        opts.window_len = case["window"]
        opts.max_pvalue = case["max_pvalue"]
        opts.min_magnitude = case["min_magnitude"]
        series = Series(case["name"], None, list(range(len(values))), {"value": Metric()},
                        {"value": list(values)}, {})
        analyzed = series.analyze(opts)
        points = [cp.to_json(rounded=False) for cp in analyzed.change_points["value"]]
        entry = {"name": case["name"], "points": [
            {"index": int(cp.index), "pvalue": float(cp.pvalue()),
             "forward_change_percent": float(cp.forward_change_percent()),
             "magnitude": float(cp.magnitude()), "mean_before": float(cp.mean_before()),
             "mean_after": float(cp.mean_after())}
            for cp in analyzed.change_points["value"]]}
        del points
        orig = {}
        for seed in ORIG_SEEDS:
            cps, _ = compute_change_points_orig(list(values), max_pvalue=case["max_pvalue"],
                                                seed=seed)
            orig[str(seed)] = [int(cp.index) for cp in cps]
        entry["orig_edivisive_by_seed"] = orig
        results.append(entry)

    try:
        commit = subprocess.run(["git", "-C", otava_src, "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (not a git checkout)"
    doc = {"oracle": "Apache Otava", "otava_commit": commit, "numpy": numpy.__version__,
           "scipy": scipy.__version__, "python": sys.version.split()[0],
           "orig_edivisive_seeds": ORIG_SEEDS, "cases": results}
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
