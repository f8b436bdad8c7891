# Sourced by the GPU scripts (ci/gpu-test.sh, bench/gpu-*.sh, bench/workloads.sh, ...):
#   source ci/debs-env.sh [DEBS_DIR]
# Pass "" rather than nothing when the caller has arguments: a bare `source` hands the
# caller's own $1 to this file.
# With DEBS_DIR: unpacks its .deb files (libpci, liburing, ... for a machine that reaches
# no package registry) into /opt/debs and points pkg-config and the loader at them.
# Always: puts the CUDA toolkit's bin on PATH and sets CUDAToolkit_ROOT when one is found.
if [ -n "${1:-}" ]; then
  mkdir -p /opt/debs
  for f in "$1"/*.deb; do dpkg -x "$f" /opt/debs; done
  # Point the unpacked .pc files at /opt/debs (a sysroot would also move system packages).
  sed -i 's|=/usr|=/opt/debs/usr|' /opt/debs/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc
  export PKG_CONFIG_PATH=/opt/debs/usr/lib/x86_64-linux-gnu/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  export LD_LIBRARY_PATH=/opt/debs/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  # CMake's find modules that do not ask pkg-config (FindSQLite3) look under the prefixes.
  export CMAKE_PREFIX_PATH=/opt/debs/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  # libpci reads the ID database at its built-in path: expose an unpacked pci.ids .deb.
  if [ -f /opt/debs/usr/share/misc/pci.ids ] && [ ! -e /usr/share/misc/pci.ids ]; then
    mkdir -p /usr/share/misc && ln -s /opt/debs/usr/share/misc/pci.ids /usr/share/misc/pci.ids
  fi
fi

# gdsb_require_gpu TOOL TAIL [LOG]: returns when nvidia-smi lists a GPU; otherwise prints
# "TOOL: no GPU here (why)TAIL" and exits the calling script with 1. With LOG, the line
# goes to stdout and is appended to LOG (as the scripts' own say()); without, to stderr.
gdsb_require_gpu() {
  local gpus
  gpus=$(command -v nvidia-smi >/dev/null && nvidia-smi -L 2>&1 || echo "nvidia-smi not found: no NVIDIA driver")
  grep -q '^GPU ' <<<"$gpus" && return 0
  local line="$1: no GPU here (${gpus:-nvidia-smi -L lists none})$2"
  if [ -n "${3:-}" ]; then echo "$line" | tee -a "$3"; else echo "$line" >&2; fi
  exit 1
}

for c in /usr/local/cuda /usr/local/cuda-13.0; do
  [ -x "$c/bin/nvcc" ] && { export CUDAToolkit_ROOT="$c"; export PATH="$c/bin:$PATH"; break; }
done
