# Sourced by the OpenStack test cloud scripts: paths and small helpers.
OS_HOME="${STACKTOP_TESTCLOUD_HOME:-${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}/.cache/stacktop/testcloud}"
B="$OS_HOME/openstack"          # the cloud's state: venv, rendered etc/, logs, pids, data
VENV="$B/venv"
V="$VENV/bin"
CLOUDS_YAML="$OS_HOME/clouds.yaml"
CLOUD_NAME="stacktop-testcloud"
DB_PREFIX="stacktop_os_"
MYSQL=(mysql -S "${STACKTOP_MYSQL_SOCKET:-/run/mysqld/mysqld.sock}" -uroot)
mkdir -p "$B"
OS_SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "openstack: $*"; }
http_ok() { curl -s -m 2 -o /dev/null "$1"; }
# pid_alive NAME: run/NAME.pid holds a live PID whose working directory is $B (start_one.sh starts every
# process there), so a reused PID is not taken for ours. (Not the command line: gunicorn rewrites its title.)
pid_alive() {
  local f="$B/run/$1.pid" p
  [ -f "$f" ] || return 1
  p="$(cat "$f")"
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
  [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$B" ]
}
# every process of the cloud, in start order; APIs are served by gunicorn
SERVICES=(keystone placement-api glance-api nova-api neutron-server cinder-api
          neutron-rpc-server neutron-agent-compute-01 neutron-agent-compute-02
          cinder-scheduler cinder-volume nova-scheduler nova-conductor nova-compute-01 nova-compute-02)
API_URLS=(http://127.0.0.1:5000/v3 http://127.0.0.1:8778 http://127.0.0.1:9292 http://127.0.0.1:8774
          http://127.0.0.1:9696 http://127.0.0.1:8776)
# held NAME: a test killed NAME on purpose (tests/testbed writes run/NAME.hold with its own PID) and will restart
# it itself; `up` must not restart it behind the test's back. A hold whose test process is gone is stale.
held() {
  local f="$B/run/$1.hold" p
  [ -f "$f" ] || return 1
  p="$(cat "$f")"
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then return 0; fi
  rm -f "$f"; return 1
}
# launcher_sum: the checksum of how an API server is launched (gunicorn_svc.sh: its request limits, workers).
# gunicorn_svc.sh writes it to run/NAME.launcher; stale_apis lists the running APIs launched otherwise.
launcher_sum() { sha256sum "$OS_SCRIPTS/gunicorn_svc.sh" | cut -c1-16; }
stale_apis() {
  local i n want
  want="$(launcher_sum)"
  for i in "${!API_URLS[@]}"; do
    n="${SERVICES[$i]}"
    held "$n" && continue
    pid_alive "$n" && [ "$(cat "$B/run/$n.launcher" 2>/dev/null)" != "$want" ] && printf '%s ' "$n"
  done
  return 0
}
held_list() { local n; for n in "${SERVICES[@]}"; do held "$n" && printf '%s ' "$n"; done; return 0; }

# The oslo.messaging profile the cloud's processes run with ($B/profile.running records it):
#   default  classic queues, random reply/fanout names (oslo.messaging's defaults), vhost `openstack`
#   2025     the shape kolla-ansible 2025.1 deploys: rabbit_quorum_queue, rabbit_transient_quorum_queue,
#            use_queue_manager (stable reply/fanout names per hostname:processname), rabbit_stream_fanout;
#            (a stream fanout needs rabbit_qos_prefetch_count > 0; quorum queues durable exchanges:
#            amqp_durable_queues, as kolla-ansible sets it); vhost `openstack2025` (a queue cannot
#            change type in place)
# Wanted: $STACKTOP_TESTCLOUD_PROFILE (default `default`); `up` restarts every process when it differs.
PROFILES=(default 2025)
wanted_profile() { echo "${STACKTOP_TESTCLOUD_PROFILE:-default}"; }
running_profile() { cat "$B/profile.running" 2>/dev/null || echo default; }
profile_vhost() { if [ "$1" = 2025 ]; then echo openstack2025; else echo openstack; fi; }
# profile_env PROFILE NAME: the environment of process NAME under PROFILE (oslo.config reads
# OS_<GROUP>__<OPTION> over its config files), one VAR=value per line
profile_env() {
  [ "$1" = 2025 ] || return 0
  local host=ctl-1
  case "$2" in nova-compute-0[12]) host="${2#nova-}" ;; neutron-agent-compute-0[12]) host="${2#neutron-agent-}" ;; esac
  printf '%s\n' "OS_DEFAULT__TRANSPORT_URL=rabbit://guest:guest@127.0.0.1:5672/openstack2025" \
    OS_OSLO_MESSAGING_RABBIT__RABBIT_QUORUM_QUEUE=true OS_OSLO_MESSAGING_RABBIT__RABBIT_TRANSIENT_QUORUM_QUEUE=true \
    OS_OSLO_MESSAGING_RABBIT__USE_QUEUE_MANAGER=true OS_OSLO_MESSAGING_RABBIT__RABBIT_STREAM_FANOUT=true \
    OS_OSLO_MESSAGING_RABBIT__RABBIT_QOS_PREFETCH_COUNT=1 OS_OSLO_MESSAGING_RABBIT__AMQP_DURABLE_QUEUES=true \
    "OS_OSLO_MESSAGING_RABBIT__HOSTNAME=$host" "OS_OSLO_MESSAGING_RABBIT__PROCESSNAME=$2"
}
