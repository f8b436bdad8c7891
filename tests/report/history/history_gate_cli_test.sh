#!/usr/bin/env bash
# gate --history as a CI job meets it (issue 41): each night one gdsb-io document is added and
# the gate runs, and its exit code that night is the verdict. Cases from the issue: a regression
# that a smaller later change masks, a clear step the windowed method missed, healthy noise that
# went red, one bad night, a test that never produced a figure, a history whose only runs failed;
# each with the level gate (the default), and the masked case with --method otava for contrast.
#   history_gate_cli_test.sh GDSB_REPORT FIXTURES_DIR WORK_DIR
set -uo pipefail
bin=$(realpath "$1") fx=$(realpath "$2") work=$3
gen_py=$(realpath "$(dirname "$0")/history_gen.py")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failures=0
ok() { echo "ok:   $1"; }
bad() { echo "FAIL: $1"; failures=$((failures + 1)); }
gen() { python3 "$gen_py" "$fx" "$@" || { echo "FAIL: generating documents"; exit 1; }; }

# nightly DB DIR [gate options...]: adds DIR's documents one a night (in name order) and runs
# the gate after each; prints the exit codes as one string ("0000333..."), one digit a night.
nightly() {
  local db=$1 dir=$2 f codes=""
  shift 2
  rm -f "$db"
  for f in "$dir"/*.json; do
    "$bin" history add "$db" "$f" >/dev/null 2>&1 || { echo "history add $f failed" >&2; return 1; }
    "$bin" gate --history "$db" "$@" >last-gate.txt 2>&1
    codes+=$?
  done
  echo "$codes"
}
# first_red CODES: the 1-based night of the first 3 ("none" when there is none)
first_red() { local c=${1%%3*}; [ "$c" = "$1" ] && echo none || echo $(( ${#c} + 1 )); }

# --- a regression that a small later change hides ----------------------------------------
# 30 nights at 10 GiB/s, 15 at 6, 15 at 6.5 (1% noise): red from the drop to the last night;
# the windowed method alone judges the newest change point (+8%) and passed.
gen masked nodeM --level '10.0 if i < 30 else 6.0 if i < 45 else 6.5' --nights 60 --noise 0.01 --seed 3
codes=$(nightly m.db masked)
first=$(first_red "$codes")
if [ "$first" != none ] && [ "$first" -ge 31 ] && [ "$first" -le 35 ] && [ "${codes:0:30}" = "$(printf '0%.0s' {1..30})" ] &&
   [ "${codes:$((first - 1))}" = "$(printf '3%.0s' $(seq "$first" 60))" ] && grep -q "regression: .* at run 31" last-gate.txt; then
  ok "masked regression: green 30 nights, red from night $first to night 60, naming the change at run 31"
else bad "masked regression: nightly exit codes $codes"; fi
if "$bin" gate --history m.db --method otava >otava.txt 2>&1; then
  ok "the same history with --method otava passes its last night (Otava judges the newest change point only)"
else echo "note: --method otava exit $? on the masked history"; fi
if "$bin" gate --history m.db --accept-through 31 >acc.txt 2>&1 && grep -q "passed" acc.txt &&
   ! "$bin" gate --history m.db --accept-through 30 >/dev/null 2>&1; then
  ok "masked regression accepted through run 31: green (the +8% after it is an improvement); through run 30: red"
else bad "masked regression accepted: $(head -3 acc.txt)"; fi

if "$bin" history show m.db --json m.json --html m.html >show.txt 2>&1 && grep -q "^red .*throughput on nodeM" show.txt &&
   grep -q "series red at the gate" m.html && grep -q "gate threshold" m.html && python3 - <<'PY2'
import json
d = json.load(open("m.json"))
assert d["options"]["method"] == "level" and d["options"]["min_runs"] == 3, d["options"]
s = [x for x in d["series"] if x["metric"] == "throughput"][0]
v = s["level"]
assert v["state"] == "regression" and v["regression_run"] == 31 and v["reference_last_run"] == 30, v
assert v["newest_median"] < v["threshold"] < v["reference"], v
PY2
then ok "history show: the gate's verdict in text, JSON (series.level) and the page (threshold, red badge)"
else bad "history show of the masked regression: $(head -5 show.txt)"; fi

# --- a clear step the windowed method missed ----------------------------------------------
# 40 nights of mean 10.00, then 20 of mean 9.59 in 2% noise (the two halves differ at p ~ 1e-11).
gen step nodeS --level '10.0 if i < 40 else 9.59' --nights 60 --noise 0.02 --seed 7
codes=$(nightly s.db step)
first=$(first_red "$codes")
if [ "$first" != none ] && [ "$first" -ge 41 ] && [ "$first" -le 45 ] && [ "${codes:0:40}" = "$(printf '0%.0s' {1..40})" ] &&
   [ "${codes:$((first - 1))}" = "$(printf '3%.0s' $(seq "$first" 60))" ]; then
  ok "a -4% step in 2% noise: red from night $first (the step at 41) to the end, green before"
else bad "clear step: nightly exit codes $codes"; fi

# --- healthy noise, judged every night --------------------------------------------------------
# Ten series of 30 draws of N(10, 0.3): not one red night (the old gate failed one at p=0.00096).
reds=0
for seed in 1 2 3 4 5 6 7 8 9 10; do
  rm -rf noise && gen noise nodeN --level '10.0' --nights 30 --noise 0.03 --seed "$seed"
  codes=$(nightly n.db noise)
  [ "${codes//0/}" = "" ] || { reds=$((reds + 1)); echo "  seed $seed: $codes"; }
done
if [ "$reds" -eq 0 ]; then ok "healthy noise: 10 series x 30 nights, no red night"
else bad "healthy noise went red in $reds series"; fi

# --- one bad night is a warning ---------------------------------------------------------------
gen spike nodeB --values "$(python3 -c "print(','.join(['10.0','10.1','9.9','10.05','9.95']*5 + ['7.0']))")"
"$bin" history add b.db spike/*.json >/dev/null
if "$bin" gate --history b.db >spike.txt 2>&1 && grep -q "warning: 1 of the newest 3 nights" spike.txt; then
  ok "one bad night: the gate passes (exit 0) and warns"
else bad "one bad night: $(cat spike.txt | head -5)"; fi

# --- failures are results -------------------------------------------------------------------
# A nightly that gains a write test which fails every night: the reads pass, the write fails.
gen fails nodeW --level '10.0' --nights 12 --noise 0.01
gen fails nodeW --level '0' --nights 3 --first-night 12 --test write --failed-from 0
gen fails nodeW --level '10.0' --nights 3 --first-night 12 --noise 0.01 --seed 2
"$bin" history add w.db fails/*.json >/dev/null 2>&1
if "$bin" gate --history w.db >w.txt 2>&1; rc=$?; [ "$rc" -eq 3 ] &&
   grep -q "no figure in the node's newest run .*failed: cuFileDriverOpen failed: EINVAL (-22) (it never gave a figure)" w.txt; then
  ok "a test that never produced a figure fails the gate (exit 3) with its reason"
else bad "never a figure: exit $rc, $(head -5 w.txt)"; fi
gen allfail nodeX --level '10.0' --nights 3 --failed-from 0
"$bin" history add x.db allfail/*.json >/dev/null 2>&1
if "$bin" gate --history x.db >x.txt 2>&1; rc=$?; [ "$rc" -eq 3 ] && grep -q "cuFileDriverOpen failed" x.txt; then
  ok "a history whose only runs failed: exit 3 with the reason, not a usage error"
else bad "only failed runs: exit $rc, $(head -5 x.txt)"; fi

# --- bad input ------------------------------------------------------------------------------
if "$bin" gate --history m.db --method cusum >e.txt 2>&1; [ $? -eq 2 ] && grep -q -- "--method cusum" e.txt &&
   "$bin" gate --history m.db --min-runs 0 >e.txt 2>&1; [ $? -eq 2 ] && grep -q -- "--min-runs" e.txt; then
  ok "an unknown --method or --min-runs 0: exit 2, named"
else bad "bad --method/--min-runs: $(cat e.txt)"; fi

[ "$failures" -eq 0 ] && echo "all history gate CLI checks passed"
[ "$failures" -eq 0 ]
