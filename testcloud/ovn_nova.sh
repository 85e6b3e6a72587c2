#!/usr/bin/env bash
# The OVN profile's own nova: a private nova-api, nova-conductor, nova-scheduler, placement and a nova-compute for
# host compute-02 whose [neutron] is the ML2/OVN neutron-server of testcloud/ovn.sh, so a boot's ports are created
# and bound by the OVN mechanism driver on chassis compute-02. Region RegionOVNNova in the shared Keystone.
#
#   ovn_nova.sh up       (needs `scripts/testcloud up openstack ovn`) databases in the OVN profile's MariaDB
#                        (nova_api, nova_cell0, nova, placement: schema synced once, stamped), RabbitMQ vhost
#                        `ovn-nova` on the machine's broker, the five processes, the compute host discovered, region
#                        RegionOVNNova, nova/clouds.yaml, flavor m1.tiny, network `ovn-boot` (geneve, shared) with
#                        subnet 10.98.0.0/24 in the OVN neutron. Restarts what is missing; ~10 s when all of it runs
#   ovn_nova.sh down     stop the five processes (by their pid files); databases, vhost and region stay
#   ovn_nova.sh status   exit 0 when the APIs answer and nova lists compute-02's nova-compute up
#   ovn_nova.sh reset    up, then delete every server of this nova
#
# Why a nova of its own: the shared cloud's nova (and its compute-02) is wired to the ML2/openvswitch neutron of
# RegionOne and is shared with other tests; a nova service host name is unique per nova deployment, and placement
# provider names per placement, so a compute-02 on the OVN neutron needs its own API database, cell and placement.
#
# compute-02's virt driver (testcloud/ovn/pylib/ovnfake.py): nova's fake driver that waits for the ports before
# block device mapping (as the ironic driver does), so a build waits in task_state `networking` while neutron
# creates and binds its ports, and that plugs an interface with the port's iface-id into compute-02's br-int on
# spawn (os-vif's part) so ovn-controller claims the port.
#
# Ports (127.0.0.1): nova-api $STACKTOP_OVN_NOVA_PORT (16774), placement $STACKTOP_OVN_PLACEMENT_PORT (16778).
# Keystone region RegionOVNNova: compute and placement -> these, network -> the OVN neutron-server, the other
# services as RegionOne (testcloud/ovn/region.py). nova/clouds.yaml: cloud `stacktop-testcloud-ovn-nova` (mode 600).
# Files: <ovn home>/nova/ (etc/, logs/, run/, data/, pylib/, clouds.yaml, db.stamp).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
O="${STACKTOP_OVN_HOME:-$HOME_DIR/ovn}"
H="$O/nova"
NOVA_PORT="${STACKTOP_OVN_NOVA_PORT:-16774}"
PLACEMENT_PORT="${STACKTOP_OVN_PLACEMENT_PORT:-16778}"
NEUTRON="http://127.0.0.1:${STACKTOP_OVN_NEUTRON_PORT:-16696}"
REGION=RegionOVNNova
CLOUD=stacktop-testcloud-ovn-nova
VHOST=ovn-nova
VENV="$HOME_DIR/openstack/venv"
V="$VENV/bin"
SOCK="$O/neutron/mysql/mysqld.sock"
PKG="$O/pkg/root"
NET_NAME=ovn-boot
SERVICES=(placement-api nova-api nova-conductor nova-scheduler nova-compute-02)
READY_WAIT="${STACKTOP_OVN_NOVA_WAIT:-240}"

log() { echo "[ovn_nova.sh $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
sql() { mariadb --no-defaults -S "$SOCK" -uroot -N -e "$1"; }
http_ok() { curl -s -m 3 -o /dev/null "$1"; }

pid_alive() {  # NAME: run/NAME.pid is a live process whose working directory is $H (gunicorn rewrites its title)
  local f="$H/run/$1.pid" p
  [[ -f "$f" ]] && p="$(cat "$f")" && [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null || return 1
  [[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" == "$H" ]]
}

service_password() { sed -n 's/^SERVICE_PASSWORD=//p' "$HOME_DIR/openstack/secrets.env" | tr -d "\"'"; }

render() {
  mkdir -p "$H"/{etc,logs,run,data,locks,pylib,bin}
  cp "$ROOT"/testcloud/ovn/pylib/*.py "$H/pylib/"
  cp "$VENV/etc/nova/api-paste.ini" "$H/etc/api-paste.ini"
  # ovs-vsctl on compute-02's Open_vSwitch database (testcloud/ovn_probe.sh), for the driver's plug/unplug
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s OVS_RUNDIR=%s exec %s --db=unix:%s "$@"\n' "$PKG/usr/lib/x86_64-linux-gnu" \
    "$O/run/compute-02" "$PKG/usr/bin/ovs-vsctl" "$O/run/compute-02/db.sock" >"$H/bin/vsctl-compute-02"
  chmod +x "$H/bin/vsctl-compute-02"
  local pw auth
  pw="$(service_password)"
  [[ -n "$pw" ]] || die "no SERVICE_PASSWORD in $HOME_DIR/openstack/secrets.env: scripts/testcloud up openstack first"
  auth="auth_type = password
auth_url = http://127.0.0.1:5000/v3
project_domain_name = Default
user_domain_name = Default
project_name = service"
  ( umask 077
  cat >"$H/etc/nova.conf.new" <<EOF
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/$VHOST
compute_driver = ovnfake.NetworkFirstFakeDriver
my_ip = 127.0.0.1
state_path = $H/data
report_interval = 5
service_down_time = 20
[api]
auth_strategy = keystone
[api_database]
connection = mysql+pymysql://root@/nova_api?unix_socket=$SOCK&charset=utf8
[database]
connection = mysql+pymysql://root@/nova?unix_socket=$SOCK&charset=utf8
[oslo_concurrency]
lock_path = $H/locks
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 10
[glance]
region_name = RegionOne
[wsgi]
api_paste_config = $H/etc/api-paste.ini
[oslo_messaging_notifications]
driver = noop
[vnc]
enabled = false
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000/v3
$auth
username = nova
password = $pw
service_token_roles_required = true
[placement]
$auth
username = placement
password = $pw
region_name = $REGION
[neutron]
$auth
username = neutron
password = $pw
region_name = $REGION
[service_user]
$auth
username = nova
password = $pw
region_name = RegionOne
send_service_user_token = true
[cinder]
$auth
username = cinder
password = $pw
region_name = RegionOne
EOF
  cat >"$H/etc/compute-02.conf" <<EOF
[DEFAULT]
host = compute-02
EOF
  cat >"$H/etc/placement.conf.new" <<EOF
[DEFAULT]
log_file = $H/logs/placement.log
[api]
auth_strategy = keystone
[placement_database]
connection = mysql+pymysql://root@/placement?unix_socket=$SOCK&charset=utf8
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000/v3
$auth
username = placement
password = $pw
service_token_roles_required = true
EOF
  )
  local f
  for f in nova placement; do
    if cmp -s "$H/etc/$f.conf.new" "$H/etc/$f.conf"; then rm -f "$H/etc/$f.conf.new"; else mv "$H/etc/$f.conf.new" "$H/etc/$f.conf"; fi
  done
}

setup_db() {  # once per OVN MariaDB datadir (db.stamp; `ovn.sh wipe` deletes both)
  [[ -f "$H/db.stamp" ]] && return 0
  local t0=$SECONDS NM=("$V/nova-manage" --config-file "$H/etc/nova.conf")
  log "databases nova_api, nova_cell0, nova, placement: schema sync (once; log $H/logs/setup.log)"
  sql "CREATE DATABASE IF NOT EXISTS nova_api CHARACTER SET utf8; CREATE DATABASE IF NOT EXISTS nova_cell0 CHARACTER SET utf8;
       CREATE DATABASE IF NOT EXISTS nova CHARACTER SET utf8; CREATE DATABASE IF NOT EXISTS placement CHARACTER SET utf8"
  {
    "$V/placement-manage" --config-file "$H/etc/placement.conf" db sync
    "${NM[@]}" api_db sync
    "${NM[@]}" cell_v2 map_cell0 --database_connection "mysql+pymysql://root@/nova_cell0?unix_socket=$SOCK&charset=utf8"
    local cells; cells="$("${NM[@]}" cell_v2 list_cells 2>/dev/null)"
    grep -q ' cell1 ' <<<"$cells" || "${NM[@]}" cell_v2 create_cell --name cell1
    "${NM[@]}" db sync
  } >>"$H/logs/setup.log" 2>&1 || die "schema sync failed (see $H/logs/setup.log)"
  touch "$H/db.stamp"
  log "schema sync took $((SECONDS - t0))s"
}

setup_vhost() {
  grep -qx "$VHOST" <<<"$(rabbitmqctl -q list_vhosts 2>/dev/null)" && return 0
  rabbitmqctl -q add_vhost "$VHOST" >/dev/null 2>&1 || true
  rabbitmqctl -q set_permissions -p "$VHOST" guest '.*' '.*' '.*' >/dev/null
}

launch() {  # NAME: start it in its own session, cwd $H, pid in run/NAME.pid, unless it runs
  local name=$1 cmd
  pid_alive "$name" && return 0
  local NC=(--config-file "$H/etc/nova.conf")
  case "$name" in
    placement-api) cmd=(env PYTHONPATH="$HOME_DIR/openstack/wsgi" OS_PLACEMENT_CONFIG_DIR="$H/etc"
                        "$V/gunicorn" -b "127.0.0.1:$PLACEMENT_PORT" -w 1 --threads 4 -k gthread --no-control-socket
                        --limit-request-line 0 --limit-request-field_size 65535  # (openstack/gunicorn_svc.sh)
                        --timeout 120 --access-logfile "$H/logs/placement-access.log" placement_wsgi:application) ;;
    nova-api) cmd=(env PYTHONPATH="$HOME_DIR/openstack/wsgi" OS_NOVA_CONFIG_DIR="$H/etc"
                   "OS_NOVA_CONFIG_FILES=api-paste.ini;nova.conf" "$V/gunicorn" -b "127.0.0.1:$NOVA_PORT" -w 1
                   --threads 4 -k gthread --no-control-socket --timeout 120
                   --limit-request-line 0 --limit-request-field_size 65535
                   --access-logfile "$H/logs/nova-api-access.log" nova_api_wsgi:application) ;;
    nova-conductor) cmd=("$V/nova-conductor" "${NC[@]}" --log-file "$H/logs/nova-conductor.log") ;;
    nova-scheduler) cmd=("$V/nova-scheduler" "${NC[@]}" --log-file "$H/logs/nova-scheduler.log") ;;
    nova-compute-02) cmd=(env PYTHONPATH="$H/pylib" OVN_VSCTL="$H/bin/vsctl-compute-02" "$V/python"
                          "$H/pylib/ovn_nova_compute.py" "${NC[@]}" --config-file "$H/etc/compute-02.conf"
                          --log-file "$H/logs/nova-compute-02.log") ;;
    *) die "unknown service $name" ;;
  esac
  ( cd "$H" || exit 1
    setsid nohup "${cmd[@]}" >>"$H/logs/$name.out" 2>&1 </dev/null 9>&- &
    echo $! >"$H/run/$name.pid" )
  log "started $name (pid $(cat "$H/run/$name.pid"))"
}

stop_one() {  # NAME: TERM its session, KILL after 10 s
  local p n=0
  pid_alive "$1" || return 0
  p="$(cat "$H/run/$1.pid")"
  kill -TERM -- "-$p" 2>/dev/null || true
  while kill -0 -- "-$p" 2>/dev/null && [[ $n -lt 100 ]]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL -- "-$p" 2>/dev/null || true
}

# the private nova's view through its API: "compute-02 up" when its nova-compute reports, the hypervisor
# is discovered (mapped to cell1), placement has its provider and the flavor exists; exit 2 when the token's
# catalog lacks region RegionOVNNova's endpoints. With the cloud's venv (keystoneauth, not openstacksdk: its
# import alone takes seconds on a loaded machine)
nova_ready() {
  "$V/python" - "$H/clouds.yaml" "$CLOUD" "$REGION" "$NOVA_PORT" "$PLACEMENT_PORT" "$NEUTRON" <<'PY' 2>&1
import sys, yaml
sys.excepthook = lambda t, e, tb: (print(f"{t.__name__}: {e}"), sys.exit(1))
from keystoneauth1 import session
from keystoneauth1.identity import v3
path, cloud, region, nport, pport, neutron = sys.argv[1:]
s = session.Session(auth=v3.Password(**yaml.safe_load(open(path))["clouds"][cloud]["auth"]), timeout=10)
catalog = s.auth.get_access(s).service_catalog
want = {"compute": f"http://127.0.0.1:{nport}/v2.1", "placement": f"http://127.0.0.1:{pport}", "network": neutron}
def url(service_type):
    try:
        return (catalog.url_for(service_type=service_type, region_name=region, interface="public") or "").rstrip("/")
    except Exception:  # keystoneauth's EndpointNotFound
        return ""
have = {t: url(t) for t in want}
if have != want:
    print(f"region {region}: {have}")
    sys.exit(2)
nova = f"http://127.0.0.1:{nport}/v2.1"
svc = s.get(f"{nova}/os-services?binary=nova-compute").json()["services"]
hyp = s.get(f"{nova}/os-hypervisors", headers={"OpenStack-API-Version": "compute 2.53"}).json()["hypervisors"]
rps = s.get(f"http://127.0.0.1:{pport}/resource_providers",
            headers={"OpenStack-API-Version": "placement 1.14"}).json()["resource_providers"]
ok = ([(x["host"], x["state"]) for x in svc] == [("compute-02", "up")]
      and [h["hypervisor_hostname"] for h in hyp] == ["compute-02"] and [r["name"] for r in rps] == ["compute-02"])
if ok and "m1.tiny" not in {f["name"] for f in s.get(f"{nova}/flavors").json()["flavors"]}:
    # as in the shared cloud (1 vCPU, 512 MB, 1 GB): flavors live in nova's API database
    s.post(f"{nova}/flavors", json={"flavor": {"name": "m1.tiny", "vcpus": 1, "ram": 512, "disk": 1}})
print("compute-02 up" if ok else f"services={svc} hypervisors={hyp} providers={[r['name'] for r in rps]}")
sys.exit(0 if ok else 1)
PY
}

write_clouds_yaml() {  # the admin entry of the plain clouds.yaml, pointed at region RegionOVNNova
  "$V/python" "$ROOT/testcloud/region_clouds_yaml.py" "$HOME_DIR/clouds.yaml" "$H/clouds.yaml" "$CLOUD" "$REGION" \
    "written by testcloud/ovn_nova.sh: the OVN profile's own nova, placement and ML2/OVN neutron (admin)"
}

register_region() {
  OS_CLIENT_CONFIG_FILE="$HOME_DIR/clouds.yaml" OS_CLOUD=stacktop-testcloud \
    "$V/python" "$ROOT/testcloud/ovn/region.py" "$REGION" "$NEUTRON" compute="http://127.0.0.1:$NOVA_PORT/v2.1" \
    placement="http://127.0.0.1:$PLACEMENT_PORT" >"$H/logs/region.log" 2>&1 \
    || { tail -5 "$H/logs/region.log" >&2; die "could not register region $REGION (see $H/logs/region.log)"; }
}

ensure_network() {  # a geneve network and subnet in the OVN neutron (noauth: every request is admin)
  local api="$NEUTRON/v2.0" hdr=(-H "Content-Type: application/json") id
  id="$(curl -sf -m 20 "$api/networks?name=$NET_NAME" | python3 -c 'import json,sys; n=json.load(sys.stdin)["networks"]; print(n[0]["id"] if n else "")')"
  if [[ -z "$id" ]]; then
    id="$(curl -sf -m 60 -X POST "${hdr[@]}" "$api/networks" \
      -d "{\"network\": {\"name\": \"$NET_NAME\", \"shared\": true, \"project_id\": \"ovn-nova\"}}" \
      | python3 -c 'import json,sys; print(json.load(sys.stdin)["network"]["id"])')" || die "could not create network $NET_NAME"
  fi
  if [[ "$(curl -sf -m 20 "$api/subnets?network_id=$id" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["subnets"]))')" == 0 ]]; then
    curl -sf -m 60 -X POST "${hdr[@]}" "$api/subnets" -d "{\"subnet\": {\"network_id\": \"$id\", \"name\": \"$NET_NAME\",
      \"cidr\": \"10.98.0.0/24\", \"ip_version\": 4, \"enable_dhcp\": false, \"project_id\": \"ovn-nova\"}}" >/dev/null \
      || die "could not create the subnet of $NET_NAME"
  fi
}

cmd_up() {
  local t0=$SECONDS
  [[ -x "$V/python" ]] || die "the test cloud's venv is missing: scripts/testcloud up openstack first"
  http_ok http://127.0.0.1:5000/v3 || die "Keystone does not answer: scripts/testcloud up openstack first"
  http_ok "$NEUTRON" && [[ -S "$SOCK" ]] || die "the OVN neutron-server / MariaDB is not up: scripts/testcloud up ovn first"
  render
  setup_db
  setup_vhost
  write_clouds_yaml
  # the region before the services: nova's clients look their endpoints up once, and a service missing from the
  # catalog then stays disabled in that process ("Service 'placement' is disabled ...")
  local r=0; nova_ready >/dev/null || r=$?
  [[ $r -ne 2 ]] || register_region
  local n; for n in "${SERVICES[@]}"; do launch "$n"; done
  ensure_network
  local last="" rc=0
  until last="$(nova_ready)"; rc=$?; [[ $rc -eq 0 ]]; do
    [[ $((SECONDS - t0)) -le $READY_WAIT ]] || die "not ready after ${READY_WAIT}s: $last (logs: $H/logs)"
    # a compute that registered after the last periodic discovery is mapped now instead of in <= 10 s
    "$V/nova-manage" --config-file "$H/etc/nova.conf" cell_v2 discover_hosts >/dev/null 2>&1 || true
    sleep 2
  done
  log "up in $((SECONDS - t0))s"
  status_line
}

status_line() {
  echo "ovn-nova nova-api http://127.0.0.1:$NOVA_PORT, placement http://127.0.0.1:$PLACEMENT_PORT, compute-02 up, neutron $NEUTRON; cloud $CLOUD in $H/clouds.yaml"
}

cmd_status() {
  local rc=0 n
  for n in "${SERVICES[@]}"; do pid_alive "$n" || { echo "ovn-nova $n not running"; rc=1; }; done
  local last
  if [[ $rc -eq 0 ]] && last="$(nova_ready)"; then status_line; else rc=1; echo "ovn-nova not ready: ${last:-}"; fi
  return $rc
}

cmd_down() {
  local n pids=()
  for n in "${SERVICES[@]}"; do stop_one "$n" & pids+=($!); done
  wait "${pids[@]}"
}

cmd_reset() {
  cmd_up
  OS_CLIENT_CONFIG_FILE="$H/clouds.yaml" OS_CLOUD="$CLOUD" "$V/python" - <<'PY'
import openstack
conn = openstack.connect()
servers = list(conn.compute.servers(all_projects=True))
for s in servers:
    conn.compute.delete_server(s)
for s in servers:
    conn.compute.wait_for_delete(s, wait=120)
PY
}

locked() {
  mkdir -p "$H"
  exec 9>"$H/.lock"
  flock -w 300 9 || die "another ovn_nova.sh holds $H/.lock for more than 300 s"
}

case "${1:-}" in
  up|reset|down) locked ;;
esac
case "${1:-}" in
  up) cmd_up ;;
  reset) cmd_reset ;;
  status) cmd_status ;;
  down) cmd_down ;;
  *) echo "usage: $0 up|down|status|reset" >&2; exit 2 ;;
esac
