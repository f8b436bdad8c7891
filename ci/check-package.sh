#!/usr/bin/env bash
# Checks a gdsbench package as a fleet would use it, without installing it on this machine.
#   check-package.sh PKG.deb FIXTURES   unpack into a clean directory (dpkg-deb -x) and check:
#     - Depends names the libraries the binaries link (libpci3, libhwloc15, liburing2 on
#       Debian 12), nothing from NVIDIA (CUDA is static, cuFile and NVML are dlopen'ed);
#     - every gdsb-* in usr/bin answers --version with the package version, and has a man
#       page that groff formats without a warning and a bash completion that completes it;
#     - gdsb-topo, run from the unpacked tree, reads a recorded `lspci -vvv` of a real HGX
#       H100 (FIXTURES/hgx-h100-bus15-lspci-vvv.txt) and finds what the recording shows;
#     - usr/share/doc/gdsbench holds the copyright file (DEP-5) and LICENSE;
#     - usr/share/gdsbench/slurm holds the sbatch template and the HealthCheckProgram
#       wrapper (executable, parsable) and the NHC rule calling gdsb-topo --health.
#   check-package.sh --rpm PKG.rpm      its files (the tools, the Slurm files), requirements and
#                                       license (%license, License: tag), through rpm -qp.
# Exit 0 all good, 3 a check failed (each failure is named), 1 the package is unreadable.
set -uo pipefail
failures=0
fail() { echo "check-package: FAIL $*" >&2; failures=$((failures + 1)); }
pass() { echo "check-package: ok   $*"; }

if [ "${1:-}" = "--rpm" ]; then
  rpm=$2
  files=$(rpm -qpl "$rpm" 2>/dev/null) || { echo "check-package: cannot read $rpm" >&2; exit 1; }
  reqs=$(rpm -qpR "$rpm" 2>/dev/null)
  for t in gdsb-io gdsb-topo gdsb-p2p gdsb-report; do
    grep -qx "/usr/bin/$t" <<<"$files" && pass "$rpm holds /usr/bin/$t" || fail "$rpm lacks /usr/bin/$t"
  done
  for f in gdsb-cluster.sbatch gdsb-healthcheck nhc.conf; do
    grep -qx "/usr/share/gdsbench/slurm/$f" <<<"$files" && pass "$rpm holds /usr/share/gdsbench/slurm/$f" ||
      fail "$rpm lacks /usr/share/gdsbench/slurm/$f"
  done
  for lib in libpci.so.3 libhwloc.so.15 liburing.so.2; do
    grep -q "^$lib" <<<"$reqs" && pass "$rpm requires $lib" || fail "$rpm does not require $lib"
  done
  grep -qi "cuda\|cufile\|nvidia-ml" <<<"$reqs" && fail "$rpm requires an NVIDIA library: $reqs"
  # %license: rpm -qpL lists the files marked as licenses.
  rpm -qpL "$rpm" 2>/dev/null | grep -qx /usr/share/doc/gdsbench/LICENSE &&
    pass "$rpm marks /usr/share/doc/gdsbench/LICENSE as %license" || fail "$rpm has no %license LICENSE"
  [ "$(rpm -qp --qf '%{LICENSE}' "$rpm" 2>/dev/null)" = "Apache-2.0 AND BSD-3-Clause AND MIT" ] &&
    pass "$rpm License: tag" || fail "$rpm License: tag is '$(rpm -qp --qf '%{LICENSE}' "$rpm" 2>/dev/null)'"
  [ "$failures" -eq 0 ] || exit 3
  exit 0
fi

deb=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/root" || { echo "check-package: cannot unpack $deb" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
depends=$(dpkg-deb -f "$deb" Depends)
for pkg in libpci3 libhwloc15 liburing2 libsqlite3-0 libc6 libstdc++6; do
  grep -qE "(^|, )${pkg//+/\\+}( |,|$)" <<<"$depends" && pass "Depends has $pkg" || fail "Depends lacks $pkg: $depends"
done
grep -qi "cuda\|cufile\|nvidia" <<<"$depends" && fail "Depends names an NVIDIA package: $depends"

bin=$tmp/root/usr/bin
tools=$(cd "$bin" && ls gdsb-* 2>/dev/null)
[ -n "$tools" ] || fail "$deb holds no usr/bin/gdsb-*"
for t in gdsb-io gdsb-topo gdsb-p2p gdsb-report; do
  [ -x "$bin/$t" ] || fail "$deb lacks usr/bin/$t"
done
for t in $tools; do
  line=$("$bin/$t" --version 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && [[ "$line" == "$t $version"* ]]; then pass "$t --version: $line"; else
    fail "$t --version exited $rc and printed '$line' (expected '$t $version...')"; fi
  man=$tmp/root/usr/share/man/man1/$t.1.gz
  if [ -s "$man" ]; then
    warnings=$(zcat "$man" | groff -man -Tutf8 -ww -z 2>&1)
    [ -z "$warnings" ] && pass "$t.1 formats cleanly" || fail "$t.1: groff says: $warnings"
    zcat "$man" | grep -q '^\.SH "\?EXIT STATUS' || fail "$t.1 has no EXIT STATUS section"
    zcat "$man" | grep -q -- '\\-\\-version' || fail "$t.1 does not list --version"
  else
    fail "$deb lacks usr/share/man/man1/$t.1.gz"
  fi
  completion=$tmp/root/usr/share/bash-completion/completions/$t
  if [ -s "$completion" ]; then
    got=$(bash -c 'source "$1" && COMP_WORDS=("$2" --vers) COMP_CWORD=1 &&
                   "$(complete -p "$2" | sed "s/.*-F \([^ ]*\) .*/\1/")" && echo "${COMPREPLY[*]}"' \
          _ "$completion" "$t" 2>&1)
    [ "$got" = "--version" ] && pass "$t completion: --vers -> $got" || fail "$t completion of --vers gave '$got'"
  else
    fail "$deb lacks usr/share/bash-completion/completions/$t"
  fi
done
[ -s "$tmp/root/usr/share/doc/gdsbench/README.md" ] || fail "$deb lacks usr/share/doc/gdsbench/README.md"
# The license, where Debian policy puts it: a machine-readable copyright file (DEP-5) whose
# first paragraph names the project's license, and the license text itself.
copyright=$tmp/root/usr/share/doc/gdsbench/copyright
if [ -s "$copyright" ] && head -1 "$copyright" | grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' &&
   grep -q '^License: Apache-2.0$' "$copyright"; then pass "usr/share/doc/gdsbench/copyright (DEP-5, Apache-2.0)"; else
  fail "$deb lacks a DEP-5 usr/share/doc/gdsbench/copyright naming Apache-2.0"; fi
grep -q 'Apache License' "$tmp/root/usr/share/doc/gdsbench/LICENSE" 2>/dev/null &&
  pass "usr/share/doc/gdsbench/LICENSE" || fail "$deb lacks usr/share/doc/gdsbench/LICENSE"
# Slurm: the sbatch template and the health-check wrapper are executable shell scripts
# (bash -n: they parse), the NHC rule calls gdsb-topo --health against the known-good file.
slurm=$tmp/root/usr/share/gdsbench/slurm
for f in gdsb-cluster.sbatch gdsb-healthcheck; do
  if [ -x "$slurm/$f" ] && bash -n "$slurm/$f"; then pass "$f installed, executable, parses"; else
    fail "$deb lacks an executable, parsable usr/share/gdsbench/slurm/$f"; fi
done
grep -q -- '--slurm-drain' "$slurm/gdsb-healthcheck" 2>/dev/null || fail "gdsb-healthcheck does not drain"
grep -q '^#SBATCH --ntasks-per-node=1' "$slurm/gdsb-cluster.sbatch" 2>/dev/null ||
  fail "gdsb-cluster.sbatch does not run one task a node"
grep -q '^ \* || check_cmd_status .*gdsb-topo --health --expect /etc/gdsbench/known-good.json' \
  "$slurm/nhc.conf" 2>/dev/null && pass "nhc.conf calls gdsb-topo --health" || fail "nhc.conf has no gdsb-topo --health rule"

# A recorded input, read by the unpacked gdsb-topo. What the recording shows (read from it,
# lspci -vvv of bus 15 of an 8x H100 HGX server): the H100 19:00.0 (10de:2330) and the
# NVMe 18:00.0 sit on two downstream ports (17:01.0, 17:00.0) of one PEX890xx switch
# (16:00.0), so the pair is PIX; ACSCtl shows ReqRedir- CmpltRedir- on every port. The
# GPU's BAR1 is "Region 2 ... [size=128G]" (64-bit BARs take two region slots), so this
# healthy server must not fail; the gdsb-topo of main reads region slot 1 and fails bar1
# (fixed on branch issue-10): until then the verdict is not asserted here, only that the
# tool ran (exit 0 or 3, not a usage or runtime error) and what it found on the way.
out=$tmp/topo.json
"$bin/gdsb-topo" --lspci-text "$fixtures/hgx-h100-bus15-lspci-vvv.txt" --json "$out" -q \
  >"$tmp/topo.txt" 2>&1
rc=$?
if [ $rc -eq 0 ]; then pass "gdsb-topo --lspci-text (recorded HGX H100) ran, exit $rc"; else
  fail "gdsb-topo --lspci-text on the recorded HGX H100 exited $rc: $(cat "$tmp/topo.txt")"; fi
python3 - "$out" <<'PY' || failures=$((failures + 1))
import json, sys
doc = json.load(open(sys.argv[1]))
ok = True
def check(cond, what):
    global ok
    print(("check-package: ok   " if cond else "check-package: FAIL ") + what,
          file=sys.stdout if cond else sys.stderr)
    ok = ok and cond
gpus = [d["bdf"] for d in doc["devices"] if d["role"] == "gpu"]
check(len(gpus) == 1 and gpus[0].endswith("19:00.0"), "one GPU, 19:00.0: %s" % gpus)
pix = [p for p in doc["pairs"] if p["gpu"].endswith("19:00.0") and p["peer"].endswith("18:00.0")]
check(len(pix) == 1 and pix[0]["label"] == "PIX", "GPU 19:00.0 - NVMe 18:00.0 is PIX: %s" % pix)
acs = [c for c in doc["checks"] if "acs" in c["id"].lower()]
check(bool(acs) and all(c["verdict"] != "fail" for c in acs),
      "no ACS check fails: %s" % [(c["id"], c["verdict"]) for c in acs])
sys.exit(0 if ok else 1)
PY
[ "$failures" -eq 0 ] || { echo "check-package: $failures check(s) failed for $deb" >&2; exit 3; }
echo "check-package: $deb: all checks passed"
