#!/usr/bin/env bash
# Makes issue 36's AER oracle recording: one real Linux kernel (Debian 12's) on one QEMU q35
# machine whose PCIe root ports and devices have the AER capability; errors are injected
# through QEMU's monitor (pcie_aer_inject_error) and the guest prints `lspci -vvv`, the sysfs
# aer_dev_* counters and a copy of its PCI sysfs before and after, then its kernel log
# (bench/qemu-aer/guest-init.sh). The fixture cut from it lives in
# tests/topo/fixtures/real/aer-qemu/ (SOURCES.md there says how it was made).
#
# Not run in CI (it downloads a kernel and boots QEMU). Needs Debian 12 or similar with
#   apt-get install qemu-system-x86 busybox-static pciutils socat cpio
# and QEMU 8.0 or newer (Debian 12: `apt-get install -t bookworm-backports qemu-system-x86`):
# QEMU 7.2 (Debian 12's own) forwards an AER message only when the device's Command register
# has SERR# set and the message is uncorrectable, so no correctable error ever reaches the root
# port; QEMU commit "hw/pci/aer: Add missing routing for AER errors" (8.0) routes them by
# Device Control as the specification says.
# ACCEL=kvm to use KVM (default TCG: a few minutes).
#
#   bench/qemu-aer/make-aer-recording.sh WORKDIR      (scratch: kernel, initramfs, console.log)
# The console shows only emergency messages (loglevel=1) so that the kernel's lines do not
# cut into the guest's output; dmesg at the end has them all.
# Output: WORKDIR/console.log (the guest's serial console, whole) and WORKDIR/fixture/, the
# files that tests/topo/fixtures/real/aer-qemu/ holds.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:?usage: make-aer-recording.sh WORKDIR}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
cd "$work"
qver="$(qemu-system-x86_64 --version | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')"
if [ "${qver:-0}" -lt 8 ]; then
  echo "make-aer-recording: QEMU ${qver:-?} cannot route correctable AER errors; needs 8.0 or newer" >&2
  exit 2
fi

# 1. The kernel: Debian's linux-image-amd64 dependency, unpacked (not installed).
kpkg_name="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')"
if [ ! -d kpkg ]; then
  apt-get download "$kpkg_name"
  dpkg-deb -x "$kpkg_name"_*.deb kpkg
fi
kver="${kpkg_name#linux-image-}"
vmlinuz="kpkg/boot/vmlinuz-$kver"

# 2. The initramfs: busybox, lspci with its libraries and pci.ids, the drivers, our /init.
rm -rf initrd && mkdir -p initrd/{bin,dev,proc,sys,tmp,usr/share/misc} initrd/lib/modules
cp /bin/busybox initrd/bin/busybox
cp "$here/guest-init.sh" initrd/init && chmod +x initrd/init
for exe in /usr/bin/lspci /usr/bin/setpci; do
  mkdir -p "initrd$(dirname "$exe")" && cp "$exe" "initrd$exe"
  for lib in $(ldd "$exe" | awk '/=>/{print $3} /ld-linux/{print $1}'); do
    mkdir -p "initrd$(dirname "$lib")" && cp -L "$lib" "initrd$lib"
  done
done
cp /usr/share/misc/pci.ids initrd/usr/share/misc/
mkdir -p "initrd/lib/modules/$kver"
for m in drivers/virtio/virtio_ring.ko drivers/virtio/virtio.ko \
         drivers/virtio/virtio_pci_modern_dev.ko drivers/virtio/virtio_pci_legacy_dev.ko \
         drivers/virtio/virtio_pci.ko drivers/block/virtio_blk.ko \
         drivers/net/ethernet/intel/e1000e/e1000e.ko; do
  mkdir -p "initrd/lib/modules/$kver/kernel/$(dirname "$m")"
  cp "kpkg/lib/modules/$kver/kernel/$m" "initrd/lib/modules/$kver/kernel/$m"
done
(cd initrd && find . | cpio -o -H newc --quiet | gzip -1) > initrd.gz

# 3. The machine: two root ports with AER (QEMU's pcie-root-port), an e1000e NIC (AER in
# QEMU's model) behind the first and a virtio-blk drive with aer=on behind the second.
truncate -s 64M disk.img
# TCG by default: under nested KVM (this project's VM) the guest hung before its first line.
accel=(-machine "q35,accel=${ACCEL:-tcg}")
mon="$work/monitor.sock" ctl="$work/ctl.sock"
rm -f "$mon" "$ctl" console.log inject.log
qemu-system-x86_64 "${accel[@]}" -smp 1 -m 512 -nographic -no-reboot \
  -kernel "$vmlinuz" -initrd initrd.gz \
  -append "console=ttyS0 panic=-1 loglevel=1" \
  -device pcie-root-port,id=rp1,bus=pcie.0,chassis=1,slot=1,addr=2.0 \
  -device pcie-root-port,id=rp2,bus=pcie.0,chassis=2,slot=2,addr=3.0 \
  -device e1000e,id=nic0,bus=rp1,netdev=n0 -netdev user,id=n0 \
  -drive if=none,id=d0,file=disk.img,format=raw \
  -device virtio-blk-pci,id=blk0,bus=rp2,drive=d0,disable-legacy=on,aer=on \
  -serial file:console.log -serial "unix:$ctl,server,nowait" \
  -monitor "unix:$mon,server,nowait" </dev/null >qemu.out 2>&1 &
qpid=$!

wait_for() {  # wait_for PATTERN SECONDS
  for _ in $(seq "$2"); do
    grep -q "$1" console.log 2>/dev/null && return 0
    kill -0 "$qpid" 2>/dev/null || { echo "QEMU exited early: $(cat qemu.out)" >&2; exit 1; }
    sleep 1
  done
  echo "timed out waiting for '$1' in $work/console.log" >&2
  kill "$qpid"
  exit 1
}
hmp() {  # one monitor command; its answer goes to inject.log
  echo "(qemu) $*" >>inject.log
  printf '%s\n' "$*" | socat -t 1 - "UNIX-CONNECT:$mon" | tr -d '\r' |
    grep -v -e '^QEMU .*monitor' -e '^(qemu)' >>inject.log || true
  sleep 1  # one error at a time: the guest handles each before the next sets its status bit
}

wait_for '^@@@ READY' 600
# Four correctable errors of three kinds on the drive (RxErr twice), one uncorrectable error
# of default non-fatal severity (Completion Timeout) on it, and one correctable error on the
# NIC, whose Device Control has error reporting off in this guest (lspci's DevCtl):
# its status bit is set but no message reaches the root port, so the kernel never counts it.
hmp pcie_aer_inject_error blk0 RCVR
hmp pcie_aer_inject_error blk0 RCVR
hmp pcie_aer_inject_error blk0 BAD_TLP
hmp pcie_aer_inject_error blk0 BAD_DLLP
hmp pcie_aer_inject_error nic0 REP_TIMER
hmp pcie_aer_inject_error blk0 COMP_TIME
sleep 3
printf 'go\n' | socat -t 1 - "UNIX-CONNECT:$ctl"
wait_for '^@@@ DONE' 600
wait "$qpid" || true

# 4. The fixture, cut from the console by its marker lines (nothing else is changed):
# lspci -D -vvv before and after, the kernel log's lines about AER and the two devices,
# the sysfs copies unpacked for gdsb-topo --sysfs-root, the monitor's answers, the versions.
out="$work/fixture"
rm -rf "$out" && mkdir -p "$out"
tr -d '\r' <console.log >console.txt
section() { sed -n "/^@@@ BEGIN $1\$/,/^@@@ END $1\$/p" console.txt | sed '1d;$d'; }
for phase in before after; do
  section "lspci-vvv $phase" >"$out/lspci-vvv-$phase.txt"
  mkdir "$out/sysfs-$phase"
  section "sysfs-tar $phase" | base64 -d | tar -C "$out/sysfs-$phase" -xzf -
done
section dmesg | grep -E 'Linux version|AER|PCIe Bus Error|0000:0[12]:00\.0' >"$out/dmesg-aer.log"
cp inject.log "$out/monitor.log"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "qemu: $(qemu-system-x86_64 --version | head -1)"
  echo "kernel: $kpkg_name $(dpkg-deb -f "$kpkg_name"_*.deb Version)"
  echo "accel: ${accel[*]}"
  echo "busybox: $(dpkg-query -W -f '${Package} ${Version}' busybox-static)"
  echo "pciutils: $(dpkg-query -W -f '${Package} ${Version}' pciutils)"
} >"$out/versions.txt"
echo "made $out (from $work/console.log)"
