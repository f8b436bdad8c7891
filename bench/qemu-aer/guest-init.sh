#!/bin/busybox sh
# /init of the guest that bench/qemu-aer/make-aer-recording.sh boots (issue 36's AER oracle).
# It prints, on the serial console (ttyS0), everything the oracle compares, before and after
# the host injects AER errors through QEMU's monitor:
#   - `lspci -D -vvv` of the whole machine (CESta/UESta, DevSta, the root ports' ErrorSrc);
#   - every device's sysfs aer_dev_* and aer_rootport_total_err_* files;
#   - a copy of the PCI part of sysfs (config, ids, resource, links, aer files) and of
#     /proc/uptime and boot_id as a gzip'd tar in base64, so gdsb-topo --sysfs-root reads
#     the same machine;
# then the whole kernel log (dmesg) and powers off. It waits for the host's "go" line on
# ttyS1 (a second serial port) between the two halves. Marker lines start with "@@@ ".
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin:/sbin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mods=/lib/modules/$(uname -r)/kernel
# Drivers for the devices behind the root ports: a device with a driver is recovered by it
# after an uncorrectable error, as on a real machine.
for m in drivers/virtio/virtio_ring.ko drivers/virtio/virtio.ko \
         drivers/virtio/virtio_pci_modern_dev.ko drivers/virtio/virtio_pci_legacy_dev.ko \
         drivers/virtio/virtio_pci.ko drivers/block/virtio_blk.ko \
         drivers/net/ethernet/intel/e1000e/e1000e.ko; do
  insmod "$mods/$m" || echo "@@@ insmod failed: $m"
done
sleep 2

# Copy one device's sysfs facts under $1 (a new root), keeping the real path and the
# bus/pci/devices link, as gdsb-topo's --sysfs-root expects.
copy_device() {
  root=$1 link=$2
  bdf=${link##*/}
  real=$(readlink -f "$link")
  mkdir -p "$root$real"
  for f in config vendor device class subsystem_vendor subsystem_device revision resource \
           numa_node irq current_link_speed current_link_width max_link_speed max_link_width \
           aer_dev_correctable aer_dev_nonfatal aer_dev_fatal aer_rootport_total_err_cor \
           aer_rootport_total_err_fatal aer_rootport_total_err_nonfatal; do
    [ -r "$real/$f" ] && cat "$real/$f" > "$root$real/$f" 2>/dev/null
  done
  [ -L "$real/driver" ] && ln -s "$(readlink "$real/driver")" "$root$real/driver"
  # OS devices below the function (block/vda, net/eth0), as empty directories.
  for sub in "$real"/*/block/* "$real"/*/net/* "$real"/net/* "$real"/block/*; do
    [ -e "$sub" ] && mkdir -p "$root$sub"
  done
  ln -s "$(readlink "$link")" "$root/sys/bus/pci/devices/$bdf"
}

dump() {
  phase=$1
  echo "@@@ PHASE $phase uptime $(cat /proc/uptime)"
  echo "@@@ BEGIN lspci-vvv $phase"
  lspci -D -vvv
  echo "@@@ END lspci-vvv $phase"
  for d in /sys/bus/pci/devices/*; do
    for f in aer_dev_correctable aer_dev_nonfatal aer_dev_fatal aer_rootport_total_err_cor \
             aer_rootport_total_err_fatal aer_rootport_total_err_nonfatal; do
      [ -r "$d/$f" ] || continue
      echo "@@@ BEGIN sysfs $phase ${d##*/} $f"
      cat "$d/$f"
      echo "@@@ END sysfs $phase ${d##*/} $f"
    done
  done
  root=/tmp/rec-$phase
  mkdir -p "$root/sys/bus/pci/devices" "$root/proc/sys/kernel/random"
  for d in /sys/bus/pci/devices/*; do copy_device "$root" "$d"; done
  cat /proc/uptime > "$root/proc/uptime"
  cat /proc/sys/kernel/random/boot_id > "$root/proc/sys/kernel/random/boot_id"
  echo "@@@ BEGIN sysfs-tar $phase"
  tar -C "$root" -czf - sys proc | base64
  echo "@@@ END sysfs-tar $phase"
}

dump before
echo "@@@ READY"
# The host injects, then writes "go" on ttyS1; give up after 5 minutes.
read -t 300 line < /dev/ttyS1
echo "@@@ GO ($line)"
sleep 2
dump after
echo "@@@ BEGIN dmesg"
dmesg
echo "@@@ END dmesg"
echo "@@@ DONE"
poweroff -f
