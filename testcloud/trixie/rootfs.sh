#!/usr/bin/env bash
# Build (idempotently) a Debian 13 (trixie) root filesystem holding RabbitMQ 4.0 and MariaDB 11.8 + galera-4,
# for the test bed's newer servers. Nothing is added to the machine's apt sources and no machine package
# changes: debootstrap writes a folder in the test bed's cache, the servers run chrooted in it (inroot.sh).
# usage: testcloud/trixie/rootfs.sh [ROOT]     (default: $TRIXIE_ROOT, else <testcloud cache>/trixie/root)
# ~70 s and ~110 MB of downloads from nothing, 636 MB on disk; a quick no-op once built.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
R="${1:-$TRIXIE_ROOT}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
PKGS="rabbitmq-server mariadb-server mariadb-client galera-4 rsync"
STAMP="$R/.stacktop-ready"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PKGS" ]; then echo "trixie root $R ready"; exit 0; fi
mkdir -p "$(dirname "$R")"
exec 9>"$(dirname "$R")/.rootfs.lock"
flock 9
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PKGS" ]; then echo "trixie root $R ready"; exit 0; fi
command -v debootstrap >/dev/null || { apt-get install -y -q debootstrap >/dev/null || {
  echo "trixie root: debootstrap is missing and could not be installed (apt-get install debootstrap)" >&2; exit 1; }; }
if [ ! -x "$R/usr/bin/apt-get" ] || [ ! -f "$R/.debootstrap-done" ]; then
  rm -rf "$R"
  nice -n 10 debootstrap --variant=minbase trixie "$R" "$MIRROR" >"$(dirname "$R")/debootstrap.log" 2>&1 || {
    echo "trixie root: debootstrap failed, see $(dirname "$R")/debootstrap.log" >&2; exit 1; }
  touch "$R/.debootstrap-done"
fi
# package scripts never start services inside the root
printf '#!/bin/sh\nexit 101\n' > "$R/usr/sbin/policy-rc.d"; chmod +x "$R/usr/sbin/policy-rc.d"
# Erlang CLI nodes use the machine's hostname: it must resolve inside the root
{ cat /etc/hosts; echo; echo "127.0.0.1 localhost $(hostname)"; } > "$R/etc/hosts"
nice -n 10 "$HERE/inroot.sh" sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $PKGS && apt-get clean && rm -rf /var/lib/apt/lists/*" \
  >"$(dirname "$R")/packages.log" 2>&1 || { echo "trixie root: package install failed, see $(dirname "$R")/packages.log" >&2; exit 1; }
echo "$PKGS" > "$STAMP"
echo "trixie root $R built: $(du -sh "$R" | cut -f1)"
