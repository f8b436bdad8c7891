#!/usr/bin/env bash
# Installs what gdsbench needs to build and test, from the distribution's packages.
# Idempotent: installs only what is missing. Works as root or through sudo.
# Supported: Debian 12, Ubuntu 24.04. Extra packages may be named as arguments.
set -euo pipefail

# clang (with its sanitizer runtimes, libclang-rt-dev) builds the asan preset: a second
# compiler catches what GCC accepts and another compiler refuses.
packages=(g++ clang libclang-rt-dev cmake ninja-build pkg-config git ccache
          libcli11-dev nlohmann-json3-dev libpci-dev libhwloc-dev liburing-dev libsqlite3-dev
          libopenmpi-dev openmpi-bin
          libgtest-dev libgmock-dev libbenchmark-dev
          pciutils pci.ids fio python3 python3-jsonschema "$@")
# ci/slurm-test.sh: a one-node Slurm (munge, slurmctld, slurmd, the client commands); the
# pmix plugin of `srun --mpi=pmix` (mpi_pmix_v4.so) comes with slurm-wlm-basic-plugins.
packages+=(munge slurmctld slurmd slurm-client slurm-wlm-basic-plugins)
# The health check's metrics file is read back by prometheus_client's parsers (tests/topo).
packages+=(python3-prometheus-client)
# deploy/kubernetes' manifests are read back by a YAML parser (tests/topo/k8s_manifests_test.py).
packages+=(python3-yaml)
# bench/ior-compare.sh's peer, IOR, built from its source in bench/peers/ (the ctest
# bench_ior_compare_short runs it): autotools and make with Open MPI's mpicc (issue 43).
packages+=(autoconf automake make)
# ci/package.sh: dpkg-shlibdeps (the .deb's dependencies), rpmbuild, groff (man page check).
packages+=(dpkg-dev rpm groff-base)

# The report tests render pages in a real browser. Debian packages Chromium as a deb;
# Ubuntu 24.04 ships only a transitional package that installs a snap, which does not
# work in containers or CI images, so there the browser test reports itself skipped.
. /etc/os-release 2>/dev/null || true
if [ "${ID:-}" = "debian" ]; then
  packages+=(chromium)
elif ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null; then
  echo "install-deps: no deb-packaged Chromium on ${PRETTY_NAME:-this system};" \
       "the browser test will be reported as skipped" >&2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then sudo=(); elif command -v sudo >/dev/null; then sudo=(sudo); else
  echo "install-deps: missing packages (${missing[*]}) and neither root nor sudo available" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
