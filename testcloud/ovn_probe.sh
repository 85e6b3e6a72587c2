#!/usr/bin/env bash
# OVN control plane of the stacktop test bed, run without system services, kernel modules or installed packages:
#   ovn_probe.sh [probe|up|down|status]
#     probe (default)  up, check that both chassis register and heartbeat, show what a dead ovn-controller looks
#                      like in the southbound database, then down; exits non-zero when a step fails
#     up | down | status
#
# Packages: Debian 12's ovn-central, ovn-host, ovn-common, openvswitch-switch, openvswitch-common and the
# libraries their binaries link that a minimal machine may lack, fetched with `apt-get download` and unpacked
# with `dpkg -x` into <home>/pkg/root (nothing is installed on the machine; run `apt-get update` once if apt
# cannot find them). The binaries run from there with LD_LIBRARY_PATH and OVS_*/OVN_* directories of their own.
#
# What runs (every daemon detached, with its own pid file, log file and control socket under <home>/run):
#   central/     ovsdb-server OVN_Northbound on tcp:127.0.0.1:$NB_PORT, OVN_Southbound on tcp:127.0.0.1:$SB_PORT,
#                ovn-northd between them
#   compute-NN/  one simulated compute host each (compute-01, compute-02): its own ovsdb-server with conf.db
#                (Open_vSwitch external_ids: system-id=hostname=compute-NN, ovn-remote=the SB,
#                ovn-encap-type=geneve, ovn-encap-ip=127.0.0.1N), ovs-vswitchd with the in-process dummy
#                datapath (--enable-dummy=override: no kernel datapath, no tap device, nothing in the machine's
#                network namespace) serving br-int's OpenFlow socket, and ovn-controller
# ovn-controller needs ovs-vswitchd: without one it registers its chassis but never connects to
# <rundir>/br-int.mgmt ("connection failed (No such file or directory)"), so Chassis_Private.nb_cfg never follows
# NB_Global.nb_cfg and neutron would report the agent dead.
#
# Home: ${STACKTOP_OVN_HOME:-${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/ovn}
# Env: STACKTOP_OVN_HOME, STACKTOP_OVN_NB_PORT (16641), STACKTOP_OVN_SB_PORT (16642), STACKTOP_OVN_WAIT (s, 60)
set -euo pipefail

TESTCLOUD_HOME="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
OVN_HOME="${STACKTOP_OVN_HOME:-$TESTCLOUD_HOME/ovn}"
PKG="$OVN_HOME/pkg"
ROOT="$PKG/root"
RUN="$OVN_HOME/run"
NB_PORT="${STACKTOP_OVN_NB_PORT:-16641}"
SB_PORT="${STACKTOP_OVN_SB_PORT:-16642}"
WAIT="${STACKTOP_OVN_WAIT:-60}"
NB="tcp:127.0.0.1:$NB_PORT"
SB="tcp:127.0.0.1:$SB_PORT"
HOSTS=(compute-01 compute-02)
PACKAGES=(ovn-central ovn-host ovn-common openvswitch-switch openvswitch-common
          libxdp1 libbpf1 libelf1 libnuma1 libunbound8 libevent-2.1-7 libcap-ng0)
VSWITCHD="$ROOT/usr/lib/openvswitch-switch/ovs-vswitchd"

log() { printf '[ovn_probe] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- packages ---------------------------------------------------------------------------------------------

unpack() {
  local stamp="$PKG/stamp" want="${PACKAGES[*]}"
  if [[ -x "$VSWITCHD" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  log "fetching ${PACKAGES[*]} (apt-get download) into $PKG"
  rm -rf "$PKG"; mkdir -p "$PKG/debs" "$ROOT"
  # apt's _apt sandbox user cannot write into a root-owned cache folder: download as the caller
  # (a machine whose package lists were never fetched finds nothing: one apt-get update, then again)
  if ! ( cd "$PKG/debs" && apt-get -q -o APT::Sandbox::User=root download "${PACKAGES[@]}" ) >"$PKG/download.log" 2>&1; then
    log "apt-get download failed: apt-get update, then again"
    apt-get -q update >>"$PKG/download.log" 2>&1 || true
    ( cd "$PKG/debs" && apt-get -q -o APT::Sandbox::User=root download "${PACKAGES[@]}" ) >>"$PKG/download.log" 2>&1 \
      || die "apt-get download ${PACKAGES[*]} failed (see $PKG/download.log)"
  fi
  local deb
  for deb in "$PKG"/debs/*.deb; do dpkg -x "$deb" "$ROOT"; done
  local missing
  missing="$(env LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu" ldd "$VSWITCHD" "$ROOT/usr/bin/ovn-controller" \
    "$ROOT/usr/bin/ovn-northd" "$ROOT/usr/sbin/ovsdb-server" | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')"
  [[ -z "$missing" ]] || die "unpacked binaries miss libraries: $missing(add their packages to PACKAGES)"
  printf '%s\n' "$want" >"$stamp"
}

# --- environment of one daemon folder ---------------------------------------------------------------------

use_dir() {  # every OVS/OVN default path (rundir: control sockets, br-int.mgmt; db, log, sysconf) -> $1
  local d="$1"
  export OVS_RUNDIR="$d" OVS_LOGDIR="$d" OVS_DBDIR="$d" OVS_SYSCONFDIR="$d"
  export OVN_RUNDIR="$d" OVN_LOGDIR="$d" OVN_DBDIR="$d" OVN_SYSCONFDIR="$d"
}

tools_env() {
  export LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu"
  export PATH="$ROOT/usr/bin:$ROOT/usr/sbin:$PATH"
  export OVS_PKGDATADIR="$ROOT/usr/share/openvswitch" OVN_PKGDATADIR="$ROOT/usr/share/ovn"
  export OVS_BINDIR="$ROOT/usr/bin" OVN_BINDIR="$ROOT/usr/bin"
}

# the pid in pid file $1 when that process runs from this home
pid_of() {
  local f="$1" pid
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f" 2>/dev/null)" || return 1
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$OVN_HOME" || return 1
  printf '%s\n' "$pid"
}

daemon() {  # NAME DIR BINARY ARGS...: start detached unless running
  local name="$1" dir="$2" bin="$3"; shift 3
  if pid_of "$dir/$name.pid" >/dev/null; then return 0; fi
  "$bin" "$@" --pidfile="$dir/$name.pid" --log-file="$dir/$name.log" -vconsole:off --detach --no-chdir \
    >>"$dir/$name.out" 2>&1 </dev/null || die "$name in $dir did not start: $(tail -n 3 "$dir/$name.out" "$dir/$name.log" 2>/dev/null)"
}

nbctl() { ovn-nbctl --db="$NB" --timeout=20 "$@"; }
sbctl() { ovn-sbctl --db="$SB" --timeout=20 "$@"; }

# --- up / down --------------------------------------------------------------------------------------------

up_central() {
  local c="$RUN/central"
  mkdir -p "$c"; use_dir "$c"
  [[ -f "$c/nb.db" ]] || ovsdb-tool create "$c/nb.db" "$OVN_PKGDATADIR/ovn-nb.ovsschema"
  [[ -f "$c/sb.db" ]] || ovsdb-tool create "$c/sb.db" "$OVN_PKGDATADIR/ovn-sb.ovsschema"
  daemon nb "$c" ovsdb-server "$c/nb.db" --remote="ptcp:$NB_PORT:127.0.0.1" --remote="punix:$c/nb.sock" --unixctl="$c/nb.ctl"
  daemon sb "$c" ovsdb-server "$c/sb.db" --remote="ptcp:$SB_PORT:127.0.0.1" --remote="punix:$c/sb.sock" --unixctl="$c/sb.ctl"
  daemon northd "$c" ovn-northd --ovnnb-db="$NB" --ovnsb-db="$SB" --unixctl="$c/northd.ctl"
  nbctl init
  sbctl init
}

up_host() {  # HOSTNAME INDEX
  local h="$1" i="$2" d="$RUN/$1"
  mkdir -p "$d"; use_dir "$d"
  [[ -f "$d/conf.db" ]] || ovsdb-tool create "$d/conf.db" "$OVS_PKGDATADIR/vswitch.ovsschema"
  daemon ovsdb-server "$d" ovsdb-server "$d/conf.db" --remote="punix:$d/db.sock" --unixctl="$d/ovsdb-server.ctl"
  local vsctl=(ovs-vsctl --db="unix:$d/db.sock" --timeout=20 --no-wait)
  "${vsctl[@]}" init
  "${vsctl[@]}" set Open_vSwitch . \
    external_ids:system-id="$h" external_ids:hostname="$h" external_ids:ovn-remote="$SB" \
    external_ids:ovn-encap-type=geneve external_ids:ovn-encap-ip="127.0.0.1$i"
  daemon ovs-vswitchd "$d" "$VSWITCHD" "unix:$d/db.sock" --enable-dummy=override --unixctl="$d/ovs-vswitchd.ctl"
  daemon ovn-controller "$d" ovn-controller "unix:$d/db.sock"
}

up() {
  unpack; tools_env
  up_central
  local i=1 h
  for h in "${HOSTS[@]}"; do up_host "$h" "$i"; i=$((i + 1)); done
  wait_chassis
}

stop_pidfile() {  # PIDFILE: TERM, then KILL after 5 s
  local pid n=0
  pid="$(pid_of "$1")" || return 0
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && [[ $n -lt 50 ]]; do sleep 0.1; n=$((n + 1)); done
  kill -9 "$pid" 2>/dev/null || true
}

down() {
  local h stoppers=()
  for h in "${HOSTS[@]}"; do  # the hosts together: each daemon may take its 5 s
    ( stop_pidfile "$RUN/$h/ovn-controller.pid"
      stop_pidfile "$RUN/$h/ovs-vswitchd.pid"
      stop_pidfile "$RUN/$h/ovsdb-server.pid" ) &
    stoppers+=($!)
  done
  wait "${stoppers[@]}"
  stop_pidfile "$RUN/central/northd.pid"
  stop_pidfile "$RUN/central/sb.pid"
  stop_pidfile "$RUN/central/nb.pid"
  log "stopped (state kept in $RUN; remove it for a fresh start)"
}

status() {
  local f rc=0
  for f in "$RUN"/central/{nb,sb,northd}.pid "$RUN"/compute-*/{ovsdb-server,ovs-vswitchd,ovn-controller}.pid; do
    if pid_of "$f" >/dev/null; then echo "running  ${f#"$RUN"/}"; else echo "stopped  ${f#"$RUN"/}"; rc=1; fi
  done
  return $rc
}

# --- checks -----------------------------------------------------------------------------------------------

chassis_names() { sbctl --bare --columns=name list Chassis_Private | sed '/^$/d' | sort | tr '\n' ' '; }

# nb_cfg of each chassis: ovn-controller copies NB_Global.nb_cfg into its Chassis_Private row once its flows for
# that configuration are in ovs-vswitchd (the heartbeat neutron's OVN driver reads for agent liveness)
chassis_cfg() { sbctl --format=csv --no-headings --columns=name,nb_cfg,nb_cfg_timestamp list Chassis_Private | sort; }

wait_chassis() {
  local want="${HOSTS[*]} " n=0
  until [[ "$(chassis_names)" == "$want" ]]; do
    n=$((n + 1)); [[ $n -le $((WAIT * 2)) ]] || die "chassis in the SB: '$(chassis_names)', want '$want' (see $RUN/*/ovn-controller.log)"
    sleep 0.5
  done
  # --wait=hv returns once every chassis has caught up with the bumped nb_cfg
  nbctl --timeout="$WAIT" --wait=hv sync || die "the chassis did not catch up with NB_Global.nb_cfg within ${WAIT}s"
}

probe() {
  tools_env; down 2>/dev/null; rm -rf "$RUN"   # fresh databases
  trap down EXIT
  up
  echo "== ovn-sbctl show"; sbctl show
  echo "== Chassis_Private (name, nb_cfg, nb_cfg_timestamp) after ovn-nbctl --wait=hv sync"; chassis_cfg
  echo "== NB_Global nb_cfg/sb_cfg/hv_cfg: $(nbctl --bare --columns=nb_cfg,sb_cfg,hv_cfg list NB_Global | tr '\n' ' ')"

  # a logical port bound on compute-01: a dummy interface on its br-int claims it, northd marks it up
  nbctl --may-exist ls-add probe-net -- --may-exist lsp-add probe-net probe-port \
    -- lsp-set-addresses probe-port "fa:16:3e:00:00:01 10.0.0.5"
  use_dir "$RUN/compute-01"
  ovs-vsctl --db="unix:$RUN/compute-01/db.sock" --timeout=20 -- --may-exist add-port br-int tap-probe \
    -- set Interface tap-probe external_ids:iface-id=probe-port
  nbctl --timeout="$WAIT" wait-until Logical_Switch_Port probe-port up=true \
    || die "probe-port was not bound (see $RUN/compute-01/ovn-controller.log)"
  echo "== Port_Binding probe-port: chassis $(sbctl --bare --columns=chassis find Port_Binding logical_port=probe-port \
    | xargs -r -I{} ovn-sbctl --db="$SB" --bare --columns=name list Chassis {}), LSP up=$(nbctl get Logical_Switch_Port probe-port up)"
  echo "== compute-01 br-int (tunnels to the other chassis)"
  ovs-vsctl --db="unix:$RUN/compute-01/db.sock" show

  # a dead ovn-controller: SIGKILL keeps its chassis rows, its nb_cfg stops following
  local pid cfg
  pid="$(pid_of "$RUN/compute-02/ovn-controller.pid")"
  kill -9 "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  nbctl set NB_Global . nb_cfg="$(( $(nbctl get NB_Global . nb_cfg) + 1 ))"
  cfg="$(nbctl get NB_Global . nb_cfg)"
  sbctl --timeout="$WAIT" wait-until Chassis_Private compute-01 nb_cfg="$cfg" \
    || die "compute-01 did not follow nb_cfg $cfg"
  echo "== after SIGKILL of compute-02's ovn-controller and NB_Global.nb_cfg=$cfg"; chassis_cfg
  [[ "$(sbctl get Chassis_Private compute-02 nb_cfg)" -lt "$cfg" ]] || die "compute-02 followed nb_cfg without ovn-controller"
  echo "OK: 2 chassis registered and heartbeating; a killed ovn-controller leaves its chassis behind on nb_cfg"
}

case "${1:-probe}" in
  probe) probe ;;
  up) up; status ;;
  down) tools_env; down ;;
  status) status ;;
  *) echo "usage: $0 [probe|up|down|status]" >&2; exit 2 ;;
esac
