#!/usr/bin/env bash
# Run a command inside the trixie root in a private mount namespace (host network, host PIDs). The mounts
# vanish with the namespace's last process: nothing leaks into the machine's mount table.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
exec unshare --mount --propagation private /bin/bash -c '
R="$1"; shift
mount -t proc proc "$R/proc"
mount --rbind /dev "$R/dev"
mount -t sysfs sysfs "$R/sys" 2>/dev/null || mount --rbind /sys "$R/sys"
mount -t tmpfs -o size=256m tmpfs "$R/tmp"
cp -f /etc/resolv.conf "$R/etc/resolv.conf"
exec chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb "$@"
' inroot "$TRIXIE_ROOT" "$@"
