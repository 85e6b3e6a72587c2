#!/usr/bin/env bash
# A second, private neutron-server with the ML2/OVN mechanism driver on top of testcloud/ovn_probe.sh's OVN
# control plane, to check what neutron reports about OVN chassis:
#   ovn_neutron_probe.sh [probe|up|down]
#     probe (default)  up; GET /v2.0/agents lists an alive "OVN Controller agent" for compute-01 and
#                      compute-02, "OVN Metadata agent" for compute-01 and "OVN Neutron agent" for compute-02;
#                      a port bound to compute-01 gets binding:vif_type=ovs and turns ACTIVE once an interface
#                      with its iface-id is on compute-01's br-int; a port bound to compute-03 (no chassis) gets
#                      binding_failed; after SIGKILL of compute-02's ovn-controller its agents turn alive=false
#                      and a new port bound to compute-02 gets binding_failed (dead agent);
#                      then down. Exits non-zero when a step fails.
#
# Shares nothing with the test cloud but its venv (read only): its own MariaDB server (the machine's mariadbd,
# own datadir, unix socket only, no TCP port), neutron-server under gunicorn with auth_strategy=noauth and the
# in-memory oslo.messaging transport (fake:/), agent_down_time 20 s, on 127.0.0.1:$API_PORT.
# Needs the test cloud's venv (`scripts/testcloud up openstack` builds it).
#
# Home: ${STACKTOP_OVN_HOME:-${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/ovn}/neutron
# Env: as testcloud/ovn_probe.sh, and STACKTOP_OVN_NEUTRON_PORT (16696)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TESTCLOUD_HOME="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
OVN_HOME="${STACKTOP_OVN_HOME:-$TESTCLOUD_HOME/ovn}"
NB_PORT="${STACKTOP_OVN_NB_PORT:-16641}"
SB_PORT="${STACKTOP_OVN_SB_PORT:-16642}"
API_PORT="${STACKTOP_OVN_NEUTRON_PORT:-16696}"
VENV="$TESTCLOUD_HOME/openstack/venv"
ROOT="$OVN_HOME/pkg/root"
N="$OVN_HOME/neutron"
DB="$N/mysql"
API="http://127.0.0.1:$API_PORT/v2.0"
HDR=(-H "Content-Type: application/json" -H "X-Project-Id: probe" -H "X-Roles: admin")

log() { printf '[ovn_neutron_probe] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
ovn() { env STACKTOP_OVN_HOME="$OVN_HOME" STACKTOP_OVN_NB_PORT="$NB_PORT" STACKTOP_OVN_SB_PORT="$SB_PORT" \
          "$HERE/ovn_probe.sh" "$@"; }

alive_pid() {  # PIDFILE -> pid when that process runs with this home on its command line
  local pid
  [[ -f "$1" ]] && pid="$(cat "$1")" && [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$N" || return 1
  printf '%s\n' "$pid"
}

up_db() {
  mkdir -p "$DB"
  cat >"$DB/my.cnf" <<EOF
[mariadbd]
datadir=$DB/data
socket=$DB/mysqld.sock
pid-file=$DB/mysqld.pid
log-error=$DB/error.log
skip-networking
skip-name-resolve
user=root
innodb_buffer_pool_size=64M
performance_schema=off
EOF
  if [[ ! -d "$DB/data/mysql" ]]; then
    mariadb-install-db --defaults-file="$DB/my.cnf" --auth-root-authentication-method=normal >"$DB/install.log" 2>&1 \
      || die "mariadb-install-db failed (see $DB/install.log)"
  fi
  if ! alive_pid "$DB/mysqld.pid" >/dev/null; then
    setsid mariadbd --defaults-file="$DB/my.cnf" >"$DB/out.log" 2>&1 </dev/null &
  fi
  local n=0
  until sql "SELECT 1" >/dev/null 2>&1; do
    n=$((n + 1)); [[ $n -le 120 ]] || die "MariaDB on $DB/mysqld.sock did not answer (see $DB/error.log)"; sleep 0.5
  done
  # only when missing: CREATE DATABASE waits for the schema's metadata lock, which a test's LOCK TABLES holds
  [[ -n "$(sql "SHOW DATABASES LIKE 'neutron'")" ]] || sql "CREATE DATABASE IF NOT EXISTS neutron CHARACTER SET utf8"
}

sql() { mariadb --no-defaults -S "$DB/mysqld.sock" -uroot -N -e "$1"; }

render() {
  mkdir -p "$N/locks" "$N/bin"
  cp "$VENV/etc/neutron/api-paste.ini" "$N/api-paste.ini"
  # the OVN driver runs ovsdb-client (from the unpacked packages); privsep helpers are run through `sudo`
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$ROOT/usr/lib/x86_64-linux-gnu" "$ROOT/usr/bin/ovsdb-client" \
    >"$N/bin/ovsdb-client"
  printf '#!/bin/sh\nexec "$@"\n' >"$N/bin/sudo"
  chmod +x "$N/bin/ovsdb-client" "$N/bin/sudo"
  cat >"$N/neutron.conf" <<EOF
[DEFAULT]
core_plugin = ml2
service_plugins = ovn-router
auth_strategy = noauth
transport_url = fake:/
log_file = $N/neutron-server.log
api_paste_config = $N/api-paste.ini
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false
agent_down_time = 20
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
[database]
connection = mysql+pymysql://root@/neutron?unix_socket=$DB/mysqld.sock&charset=utf8
[oslo_concurrency]
lock_path = $N/locks
[ml2]
type_drivers = flat,geneve
project_network_types = geneve
mechanism_drivers = ovn
extension_drivers = port_security
overlay_ip_version = 4
[ml2_type_geneve]
vni_ranges = 1:65536
max_header_size = 38
[ml2_type_flat]
flat_networks = *
[ovn]
ovn_nb_connection = tcp:127.0.0.1:$NB_PORT
ovn_sb_connection = tcp:127.0.0.1:$SB_PORT
ovn_metadata_enabled = false
EOF
}

up_neutron() {
  if [[ ! -f "$N/db.stamp" ]]; then
    "$VENV/bin/neutron-db-manage" --config-file "$N/neutron.conf" upgrade heads >"$N/db-manage.log" 2>&1 \
      || die "neutron-db-manage upgrade heads failed (see $N/db-manage.log)"
    touch "$N/db.stamp"
  fi
  if ! alive_pid "$N/gunicorn.pid" >/dev/null; then
    # ASGI_WORKERS: the OVN driver's hash ring needs the API worker count, which it reads from uWSGI, mod_wsgi
    # or this variable (under gunicorn: "RuntimeError: The Neutron API workers count is zero" without it)
    setsid env ASGI_WORKERS=1 PATH="$N/bin:$VENV/bin:$PATH" PYTHONPATH="$TESTCLOUD_HOME/openstack/wsgi" \
      OS_NEUTRON_CONFIG_DIR="$N" OS_NEUTRON_CONFIG_FILES=neutron.conf \
      "$VENV/bin/gunicorn" -b "127.0.0.1:$API_PORT" -w 1 --threads 4 -k gthread --no-control-socket --timeout 120 --graceful-timeout 5 \
      --limit-request-line 0 --limit-request-field_size 65535 \
      --pid "$N/gunicorn.pid" --access-logfile "$N/access.log" -n "neutron-ovn-probe $N" \
      neutron_api_wsgi:application >"$N/gunicorn.out" 2>&1 </dev/null &
  fi
  local n=0
  until curl -sf "${HDR[@]}" "$API/networks" >/dev/null 2>&1; do
    n=$((n + 1)); [[ $n -le 180 ]] || die "neutron-server on :$API_PORT did not answer (see $N/neutron-server.log)"; sleep 0.5
  done
}

# The metadata service of host $1, by binary $2: neutron-ovn-metadata-agent ("OVN Metadata agent", deprecated
# since 2025.2) or neutron-ovn-agent with its metadata extension ("OVN Neutron agent", its replacement). Both
# register in the chassis' Chassis_Private external_ids and follow nb_cfg. Neutron runs with
# ovn_metadata_enabled=false, so no network gets a metadata port and no namespace, veth or haproxy is made
# (that would need the machine's network stack).
up_agent() {
  local h="$1" bin="$2" d="$N/agent-$1"
  mkdir -p "$d/state" "$d/locks"
  cat >"$d/agent.ini" <<EOF
[DEFAULT]
metadata_proxy_shared_secret = probe
nova_metadata_host = 127.0.0.1
state_path = $d/state
metadata_workers = 1
log_file = $d/agent.log
[agent]
extensions = metadata
[ovs]
ovsdb_connection = unix:$OVN_HOME/run/$h/db.sock
[ovn]
ovn_sb_connection = tcp:127.0.0.1:$SB_PORT
ovn_nb_connection = tcp:127.0.0.1:$NB_PORT
[oslo_concurrency]
lock_path = $d/locks
EOF
  alive_pid "$d/agent.pid" >/dev/null && return 0
  # privsep helpers start through `sudo`, a pass-through here (root)
  setsid env PATH="$N/bin:$VENV/bin:$PATH" "$VENV/bin/$bin" --config-file "$d/agent.ini" \
    >"$d/agent.out" 2>&1 </dev/null &
  echo $! >"$d/agent.pid"
}

up() {
  [[ -x "$VENV/bin/gunicorn" ]] || die "the test cloud's venv is missing ($VENV): run scripts/testcloud up openstack"
  [[ -f "$TESTCLOUD_HOME/openstack/wsgi/neutron_api_wsgi.py" ]] || die "no $TESTCLOUD_HOME/openstack/wsgi: run scripts/testcloud up openstack"
  ovn up >/dev/null
  up_db; render; up_neutron
  up_agent compute-01 neutron-ovn-metadata-agent; up_agent compute-02 neutron-ovn-agent
  log "neutron-server (ML2/OVN) on $API, OVN NB :$NB_PORT SB :$SB_PORT"
}

stop_group() {  # PIDFILE of a session leader (setsid): TERM its group, KILL after 10 s
  local pid n=0
  pid="$(alive_pid "$1")" || return 0
  kill -TERM -- "-$pid" 2>/dev/null || true
  while kill -0 -- "-$pid" 2>/dev/null && [[ $n -lt 100 ]]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL -- "-$pid" 2>/dev/null || true
}

down() {
  local pid
  # together: each may take its 10 s (wait for these only: after `up` in this shell, MariaDB is a child too)
  local stoppers=()
  stop_group "$N/agent-compute-01/agent.pid" & stoppers+=($!)
  stop_group "$N/agent-compute-02/agent.pid" & stoppers+=($!)
  stop_group "$N/gunicorn.pid" & stoppers+=($!)
  wait "${stoppers[@]}"
  if pid="$(alive_pid "$DB/mysqld.pid")"; then kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done; fi
  ovn down
}

api() { curl -sS "${HDR[@]}" "$@"; }
field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

agents() {
  api "$API/agents" | field "'\n'.join('%s %s alive=%s heartbeat=%s' % (a['host'], a['agent_type'], a['alive'],
    a['heartbeat_timestamp']) for a in sorted(d['agents'], key=lambda a: a['host']))"
}

port() {  # HOST -> "id vif_type"
  api -X POST "$API/ports" -d "{\"port\": {\"network_id\": \"$NET\", \"name\": \"probe-$1\", \"project_id\": \"probe\",
    \"binding:host_id\": \"$1\", \"device_owner\": \"compute:nova\", \"device_id\": \"probe-vm-$1\"}}" \
    | field "d['port']['id'] + ' ' + d['port']['binding:vif_type']"
}

probe() {
  trap down EXIT
  down 2>/dev/null; rm -rf "$OVN_HOME/run" "$N"   # a fresh NB/SB and neutron database
  up
  local n=0 out
  until [[ "$(agents | grep -cE 'OVN (Controller|Metadata|Neutron) agent alive=True')" == 4 ]]; do
    n=$((n + 1)); [[ $n -le 90 ]] || die "neutron does not list 4 alive agents: $(agents)"; sleep 1
  done
  echo "== GET /v2.0/agents"; agents

  NET="$(api -X POST "$API/networks" -d '{"network": {"name": "probe-net", "project_id": "probe"}}' | field "d['network']['id']")"
  api -X POST "$API/subnets" -d "{\"subnet\": {\"network_id\": \"$NET\", \"cidr\": \"10.99.0.0/24\", \"ip_version\": 4,
    \"project_id\": \"probe\"}}" >/dev/null
  local p1 p3 id1
  p1="$(port compute-01)"; p3="$(port compute-03)"; id1="${p1%% *}"
  echo "== port on compute-01: binding:vif_type=${p1#* }; on compute-03 (no chassis): binding:vif_type=${p3#* }"
  [[ "${p1#* }" == ovs && "${p3#* }" == binding_failed ]] || die "unexpected bindings: $p1 / $p3"
  # what os-vif does on a real compute host: an interface on br-int whose iface-id is the port's id
  env LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu" OVS_RUNDIR="$OVN_HOME/run/compute-01" \
    "$ROOT/usr/bin/ovs-vsctl" --db="unix:$OVN_HOME/run/compute-01/db.sock" --timeout=20 -- add-port br-int "tap${id1:0:11}" \
    -- set Interface "tap${id1:0:11}" external_ids:iface-id="$id1" external_ids:iface-status=active
  n=0
  until [[ "$(api "$API/ports/$id1" | field "d['port']['status']")" == ACTIVE ]]; do
    n=$((n + 1)); [[ $n -le 60 ]] || die "port $id1 did not turn ACTIVE"; sleep 0.5
  done
  echo "== port $id1 ACTIVE after ovn-controller on compute-01 claimed it"

  local pid t0
  pid="$(cat "$OVN_HOME/run/compute-02/ovn-controller.pid")"
  kill -9 "$pid"; t0=$SECONDS
  until agents | grep -q 'compute-02 OVN Controller agent alive=False'; do
    [[ $((SECONDS - t0)) -le 90 ]] || die "compute-02 still alive 90 s after SIGKILL of its ovn-controller: $(agents)"
    sleep 2
  done
  echo "== $((SECONDS - t0)) s after SIGKILL of compute-02's ovn-controller (agent_down_time 20 s)"; agents
  # the chassis is still in the SB, but its agent is dead: the driver refuses to bind there
  local p2
  p2="$(port compute-02)"
  echo "== port on compute-02 now: binding:vif_type=${p2#* }"
  [[ "${p2#* }" == binding_failed ]] || die "a port on compute-02 bound although its ovn-controller is dead: $p2"
  grep -m1 -o "Refusing to bind port ${p2%% *} to dead agent.*" "$N/neutron-server.log" || true
  echo "OK: neutron's OVN driver binds ports to the OVN chassis and reports a dead ovn-controller"
}

case "${1:-probe}" in
  probe) probe ;;
  up) up ;;
  down) down ;;
  *) echo "usage: $0 [probe|up|down]" >&2; exit 2 ;;
esac
