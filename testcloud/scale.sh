#!/usr/bin/env bash
# The `scale` profile: the test cloud's nova and placement at 10,000 instances, for the real-services bench
# (python -m bench --only real10k). Opt-in: only when named (`scripts/testcloud up scale`), never in CI.
#
#   scale.sh up      (needs `scripts/testcloud up openstack`) a nova of its own (nova-api, conductor, scheduler,
#                    placement, nova-compute on hosts scale-01..04) in region RegionScale of the shared Keystone.
#                    First time (cold build, ~30 min): schema sync, boots $SCALE_REAL servers through the API
#                    (multi-create on the fake driver: most ACTIVE without a port, some ERROR with "No valid
#                    host"), then copies their database rows to $SCALE_TARGET instances (testcloud/scale/clone.py:
#                    nova cell + cell0, nova_api, placement, consistently) and dumps the four databases to
#                    <home>/scale/dump. Later: restores the dump when the databases are missing (minutes).
#                    Every time: $SCALE_HELD servers held in task_state `spawning` on scale-04 (its driver's spawn
#                    sleeps a day). A quick no-op when everything runs.
#   scale.sh down    stop the processes (databases, dump, vhost and region stay)
#   scale.sh status  exit 0 when the APIs answer and the 4 computes are up; prints the instance count (SQL)
#   scale.sh reset   drop the databases and restore them from the dump (the cloud as built), then up
#   scale.sh wipe    down, then drop the databases and delete the dump (the next up builds cold)
#
# Isolation: the default cloud is not touched. Own databases stacktop_scale_* on the machine's MariaDB, own
# RabbitMQ vhost `scale`, own processes and ports: nova-api $STACKTOP_SCALE_NOVA_PORT (18774), placement
# $STACKTOP_SCALE_PLACEMENT_PORT (18778). Shared read-only: Keystone (region RegionScale: compute and placement
# are these, every other service RegionOne's), glance's image `tiny`, neutron-server (nova-api asks it for the
# ports of listed servers; the servers have no port, so nothing is written there) and cinder (no volume).
# $S/clouds.yaml: cloud `stacktop-testcloud-scale` (admin, mode 600).
# Heavy steps run under `nice -n 10`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
S="${STACKTOP_SCALE_HOME:-$HOME_DIR/scale}"
NOVA_PORT="${STACKTOP_SCALE_NOVA_PORT:-18774}"
PLACEMENT_PORT="${STACKTOP_SCALE_PLACEMENT_PORT:-18778}"
NEUTRON="http://127.0.0.1:9696"
REGION=RegionScale
CLOUD=stacktop-testcloud-scale
VHOST=scale
PREFIX=stacktop_scale_
DBS=(nova_api nova_cell0 nova placement)
VENV="$HOME_DIR/openstack/venv"
V="$VENV/bin"
SOCK="${STACKTOP_MYSQL_SOCKET:-/run/mysqld/mysqld.sock}"
HOSTS=(scale-01 scale-02 scale-03 scale-04)
SERVICES=(placement-api nova-api nova-conductor nova-scheduler nova-compute-scale-01 nova-compute-scale-02
          nova-compute-scale-03 nova-compute-scale-04)
TARGET="${SCALE_TARGET:-10000}"
REAL="${SCALE_REAL:-300}"
HELD="${SCALE_HELD:-5}"
ERRORS="${SCALE_ERRORS:-20}"
READY_WAIT="${STACKTOP_SCALE_WAIT:-600}"
DUMP="$S/dump"
NICE=(nice -n 10)

log() { echo "[scale.sh $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
sql() { mysql -S "$SOCK" -uroot -N -e "$1"; }
http_ok() { curl -s -m 3 -o /dev/null "$1"; }

pid_alive() {  # NAME: run/NAME.pid is a live process whose working directory is $S
  local f="$S/run/$1.pid" p
  [[ -f "$f" ]] && p="$(cat "$f")" && [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null || return 1
  [[ "$(readlink "/proc/$p/cwd" 2>/dev/null)" == "$S" ]]
}

service_password() { sed -n 's/^SERVICE_PASSWORD=//p' "$HOME_DIR/openstack/secrets.env" | tr -d "\"'"; }

render() {
  mkdir -p "$S"/{etc,logs,run,locks,dump} "${HOSTS[@]/#/$S/data/}"
  cp "$VENV/etc/nova/api-paste.ini" "$S/etc/api-paste.ini"
  local pw auth
  pw="$(service_password)"
  [[ -n "$pw" ]] || die "no SERVICE_PASSWORD in $HOME_DIR/openstack/secrets.env: scripts/testcloud up openstack first"
  auth="auth_type = password
auth_url = http://127.0.0.1:5000/v3
project_domain_name = Default
user_domain_name = Default
project_name = service"
  ( umask 077
  cat >"$S/etc/nova.conf.new" <<EOF
[DEFAULT]
transport_url = rabbit://guest:guest@127.0.0.1:5672/$VHOST
compute_driver = fake.FakeDriverWithoutFakeNodes
my_ip = 127.0.0.1
report_interval = 10
service_down_time = 60
# 2,500 instances a host: the periodic tasks that walk every instance of a host run rarely or not at all (the
# copied instances exist in the database only, not in the fake driver's memory: a power-state sync would stop them)
update_resources_interval = 600
sync_power_state_interval = -1
heal_instance_info_cache_interval = -1
cpu_allocation_ratio = 16.0
[api]
auth_strategy = keystone
[api_database]
connection = mysql+pymysql://root@/${PREFIX}nova_api?unix_socket=$SOCK&charset=utf8
[database]
connection = mysql+pymysql://root@/${PREFIX}nova?unix_socket=$SOCK&charset=utf8
[quota]
driver = nova.quota.NoopQuotaDriver
[oslo_concurrency]
lock_path = $S/locks
[conductor]
workers = 1
[scheduler]
workers = 1
discover_hosts_in_cells_interval = 10
[glance]
region_name = RegionOne
[wsgi]
api_paste_config = $S/etc/api-paste.ini
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
  cat >"$S/etc/placement.conf.new" <<EOF
[DEFAULT]
log_file = $S/logs/placement.log
[api]
auth_strategy = keystone
[placement_database]
connection = mysql+pymysql://root@/${PREFIX}placement?unix_socket=$SOCK&charset=utf8
[keystone_authtoken]
www_authenticate_uri = http://127.0.0.1:5000/v3
$auth
username = placement
password = $pw
service_token_roles_required = true
EOF
  )
  local f h
  for f in nova placement; do
    if cmp -s "$S/etc/$f.conf.new" "$S/etc/$f.conf"; then rm -f "$S/etc/$f.conf.new"; else mv "$S/etc/$f.conf.new" "$S/etc/$f.conf"; fi
  done
  for h in "${HOSTS[@]}"; do
    printf '[DEFAULT]\nhost = %s\nstate_path = %s\n' "$h" "$S/data/$h" >"$S/etc/$h.conf"
  done
  # scale-04 holds its builds in `spawning` (testcloud/openstack/pylib/slowfake.py, a day's sleep)
  printf 'compute_driver = slowfake.SlowFakeDriver\n' >>"$S/etc/scale-04.conf"
}

dbs_present() {
  [[ "$(sql "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name IN ($(printf "'$PREFIX%s'," "${DBS[@]}" | sed 's/,$//'))")" == "${#DBS[@]}" ]]
}

drop_dbs() { local d; for d in "${DBS[@]}"; do sql "DROP DATABASE IF EXISTS $PREFIX$d"; done; }

schema_sync() {
  local t0=$SECONDS NM=("${NICE[@]}" "$V/nova-manage" --config-file "$S/etc/nova.conf") d
  log "databases ${PREFIX}{${DBS[*]}}: schema sync (log $S/logs/setup.log)"
  for d in "${DBS[@]}"; do sql "CREATE DATABASE IF NOT EXISTS $PREFIX$d CHARACTER SET utf8"; done
  {
    "${NICE[@]}" "$V/placement-manage" --config-file "$S/etc/placement.conf" db sync
    "${NM[@]}" api_db sync
    "${NM[@]}" cell_v2 map_cell0 --database_connection "mysql+pymysql://root@/${PREFIX}nova_cell0?unix_socket=$SOCK&charset=utf8"
    local cells; cells="$("${NM[@]}" cell_v2 list_cells 2>/dev/null)"
    grep -q ' cell1 ' <<<"$cells" || "${NM[@]}" cell_v2 create_cell --name cell1
    "${NM[@]}" db sync
  } >>"$S/logs/setup.log" 2>&1 || die "schema sync failed (see $S/logs/setup.log)"
  log "schema sync took $((SECONDS - t0)) s"
}

restore() {
  local t0=$SECONDS h
  log "restoring the databases from $DUMP/scale.sql.gz"
  drop_dbs
  gunzip -c "$DUMP/scale.sql.gz" | "${NICE[@]}" mysql -S "$SOCK" -uroot || die "restore failed"
  for h in "${HOSTS[@]}"; do cp "$DUMP/$h.compute_id" "$S/data/$h/compute_id"; done
  log "restored in $((SECONDS - t0)) s"
}

setup_vhost() {
  grep -qx "$VHOST" <<<"$(rabbitmqctl -q list_vhosts 2>/dev/null)" && return 0
  rabbitmqctl -q add_vhost "$VHOST" >/dev/null 2>&1 || true
  rabbitmqctl -q set_permissions -p "$VHOST" guest '.*' '.*' '.*' >/dev/null
}

launch() {  # NAME: start it in its own session, cwd $S, pid in run/NAME.pid, unless it runs
  local name=$1 cmd h
  pid_alive "$name" && return 0
  local NC=(--config-file "$S/etc/nova.conf")
  local G=(-w 1 --threads 4 -k gthread --no-control-socket --timeout 120
           --limit-request-line 0 --limit-request-field_size 65535)  # (openstack/gunicorn_svc.sh)
  case "$name" in
    placement-api) cmd=(env PYTHONPATH="$HOME_DIR/openstack/wsgi" OS_PLACEMENT_CONFIG_DIR="$S/etc"
                        "$V/gunicorn" -b "127.0.0.1:$PLACEMENT_PORT" "${G[@]}"
                        --access-logfile "$S/logs/placement-access.log" placement_wsgi:application) ;;
    nova-api) cmd=(env PYTHONPATH="$HOME_DIR/openstack/wsgi" OS_NOVA_CONFIG_DIR="$S/etc"
                   "OS_NOVA_CONFIG_FILES=api-paste.ini;nova.conf" "$V/gunicorn" -b "127.0.0.1:$NOVA_PORT" "${G[@]}"
                   --access-logfile "$S/logs/nova-api-access.log" nova_api_wsgi:application) ;;
    nova-conductor) cmd=("$V/nova-conductor" "${NC[@]}" --log-file "$S/logs/nova-conductor.log") ;;
    nova-scheduler) cmd=("$V/nova-scheduler" "${NC[@]}" --log-file "$S/logs/nova-scheduler.log") ;;
    nova-compute-scale-0[1-4]) h="${name#nova-compute-}"
      cmd=(env PYTHONPATH="$HOME_DIR/openstack/pylib" SLOWFAKE_SPAWN_S=86400 "$V/python"
           "$HOME_DIR/openstack/pylib/nova_compute_wrapper.py" "${NC[@]}" --config-file "$S/etc/$h.conf"
           --log-file "$S/logs/nova-compute-$h.log") ;;
    *) die "unknown service $name" ;;
  esac
  ( cd "$S" || exit 1
    setsid nohup "${cmd[@]}" >>"$S/logs/$name.out" 2>&1 </dev/null 9>&- &
    echo $! >"$S/run/$name.pid" )
  log "started $name (pid $(cat "$S/run/$name.pid"))"
}

stop_one() {  # NAME: TERM its session, KILL after 10 s
  local p n=0
  pid_alive "$1" || return 0
  p="$(cat "$S/run/$1.pid")"
  kill -TERM -- "-$p" 2>/dev/null || true
  while kill -0 -- "-$p" 2>/dev/null && [[ $n -lt 100 ]]; do sleep 0.1; n=$((n + 1)); done
  kill -KILL -- "-$p" 2>/dev/null || true
}

cloudpy() {  # the profile's helper (testcloud/scale/scalectl.py) with the cloud's venv
  OS_CLIENT_CONFIG_FILE="$S/clouds.yaml" OS_CLOUD="$CLOUD" "$V/python" "$ROOT/testcloud/scale/scalectl.py" \
    --nova "http://127.0.0.1:$NOVA_PORT/v2.1" --placement "http://127.0.0.1:$PLACEMENT_PORT" "$@"
}

write_clouds_yaml() {
  "$V/python" "$ROOT/testcloud/region_clouds_yaml.py" "$HOME_DIR/clouds.yaml" "$S/clouds.yaml" "$CLOUD" "$REGION" \
    "written by testcloud/scale.sh: the scale profile's nova and placement at $TARGET instances (admin)"
}

register_region() {
  OS_CLIENT_CONFIG_FILE="$HOME_DIR/clouds.yaml" OS_CLOUD=stacktop-testcloud \
    "$V/python" "$ROOT/testcloud/ovn/region.py" "$REGION" "$NEUTRON" compute="http://127.0.0.1:$NOVA_PORT/v2.1" \
    placement="http://127.0.0.1:$PLACEMENT_PORT" >"$S/logs/region.log" 2>&1 \
    || { tail -5 "$S/logs/region.log" >&2; die "could not register region $REGION (see $S/logs/region.log)"; }
}

wait_ready() {
  local t0=$SECONDS last="" rc=0
  until last="$(cloudpy ready 2>&1)"; rc=$?; [[ $rc -eq 0 ]]; do
    [[ $rc -ne 2 ]] || register_region
    [[ $((SECONDS - t0)) -le $READY_WAIT ]] || die "not ready after ${READY_WAIT}s: $last (logs: $S/logs)"
    "${NICE[@]}" "$V/nova-manage" --config-file "$S/etc/nova.conf" cell_v2 discover_hosts >/dev/null 2>&1 || true
    sleep 3
  done
}

cold_build() {
  local t0=$SECONDS h
  cloudpy boot --real "$REAL" --errors "$ERRORS" || die "booting the real servers failed (logs: $S/logs)"
  "${NICE[@]}" "$V/python" "$ROOT/testcloud/scale/clone.py" "$((TARGET - HELD))" "$SOCK" "$PREFIX" || die "cloning rows failed"
  log "dumping the databases to $DUMP"
  "${NICE[@]}" mysqldump -S "$SOCK" -uroot --single-transaction --add-drop-database \
    --databases $(printf "$PREFIX%s " "${DBS[@]}") | "${NICE[@]}" gzip -1 >"$DUMP/scale.sql.gz.new"
  for h in "${HOSTS[@]}"; do cp "$S/data/$h/compute_id" "$DUMP/$h.compute_id"; done
  mv "$DUMP/scale.sql.gz.new" "$DUMP/scale.sql.gz"
  echo "$(build_stamp)" >"$DUMP/stamp"
  log "cold build (boot, clone, dump) took $((SECONDS - t0)) s; dump $(du -sh "$DUMP" | cut -f1)"
}

dump_current() { [[ -f "$DUMP/scale.sql.gz" && "$(cat "$DUMP/stamp" 2>/dev/null)" == "$(build_stamp)" ]]; }

build_stamp() {  # what the dump depends on: the profile's shape and the scripts that make it
  { echo "$TARGET $REAL $ERRORS"; cat "$ROOT/testcloud/scale/clone.py" "$ROOT/testcloud/scale/scalectl.py"
    "$V/python" -c 'import importlib.metadata as m; print(m.version("nova"), m.version("openstack-placement"))'; } \
    | sha256sum | cut -c1-16
}

cmd_up() {
  local t0=$SECONDS cold=0 n
  [[ -x "$V/python" ]] || die "the test cloud's venv is missing: scripts/testcloud up openstack first"
  http_ok http://127.0.0.1:5000/v3 || die "Keystone does not answer: scripts/testcloud up openstack first"
  render
  setup_vhost
  write_clouds_yaml
  if ! dbs_present || [[ ! -f "$S/db.stamp" ]]; then
    cmd_down
    if dump_current; then
      restore
    else
      drop_dbs
      schema_sync
    fi
    touch "$S/db.stamp"
  fi
  dump_current || cold=1  # a build that did not finish goes on where it stopped (boot and clone count what is there)
  # the region before the services: nova's clients look their endpoints up once
  register_region
  for n in "${SERVICES[@]}"; do launch "$n"; done
  wait_ready
  [[ $cold -eq 0 ]] || cold_build
  cloudpy hold --count "$HELD" --host scale-04 || die "could not hold $HELD builds on scale-04"
  log "up in $((SECONDS - t0)) s"
  cmd_status
}

cmd_status() {
  local rc=0 n
  for n in "${SERVICES[@]}"; do pid_alive "$n" || { echo "scale $n not running"; rc=1; }; done
  [[ $rc -eq 0 ]] || return 1
  cloudpy ready || { echo "scale not ready"; return 1; }
  # counted in the databases: listing 10,000 servers through nova-api takes minutes
  local n
  n="$(sql "SELECT (SELECT COUNT(*) FROM ${PREFIX}nova.instances WHERE deleted = 0)
                 + (SELECT COUNT(*) FROM ${PREFIX}nova_cell0.instances WHERE deleted = 0)")"
  echo "scale $n instances; nova-api http://127.0.0.1:$NOVA_PORT, placement http://127.0.0.1:$PLACEMENT_PORT; cloud $CLOUD in $S/clouds.yaml"
}

cmd_down() {
  local n pids=()
  for n in "${SERVICES[@]}"; do stop_one "$n" & pids+=($!); done
  wait "${pids[@]}"
}

locked() {
  mkdir -p "$S"
  exec 9>"$S/.lock"
  flock -w 600 9 || die "another scale.sh holds $S/.lock for more than 600 s"
}

case "${1:-}" in
  up|reset|down|wipe) locked ;;
esac
case "${1:-}" in
  up) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  reset) cmd_down; drop_dbs; rm -f "$S/db.stamp"; cmd_up ;;
  wipe) cmd_down; drop_dbs; rm -rf "$DUMP" "$S/db.stamp" "$S"/data/scale-0*; rabbitmqctl -q delete_vhost "$VHOST" >/dev/null 2>&1 || true ;;
  *) echo "usage: $0 up|down|status|reset|wipe" >&2; exit 2 ;;
esac
