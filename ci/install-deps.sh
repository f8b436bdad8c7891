#!/usr/bin/env bash
# Installs what gdsbench needs to build and test, from the distribution's packages.
# Idempotent: installs only what is missing. Works as root or through sudo.
# Supported: Debian 12, Ubuntu 24.04. Extra packages may be named as arguments.
set -euo pipefail

packages=(g++ cmake ninja-build pkg-config git
          libcli11-dev nlohmann-json3-dev libpci-dev libhwloc-dev liburing-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          pciutils fio python3 chromium "$@")

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
