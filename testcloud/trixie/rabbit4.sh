#!/usr/bin/env bash
# A 3-node RabbitMQ 4.0 cluster from the trixie root filesystem (testcloud/trixie/rootfs.sh), for the test bed's
# "RabbitMQ 4" profile. Runs chrooted (inroot.sh) beside the machine's own RabbitMQ 3.10, on other ports:
#
#   node IDX (0..2)   name                 AMQP             management        distribution
#   0                 rabbit4a@localhost   127.0.0.1:5673   127.0.0.1:15673   127.0.0.1:25673
#   1                 rabbit4b@localhost   127.0.0.1:5674   127.0.0.1:15674   127.0.0.1:25674
#   2                 rabbit4c@localhost   127.0.0.1:5675   127.0.0.1:15675   127.0.0.1:25675
#   own epmd on 127.0.0.1:4370 (ERL_EPMD_PORT), CLI distribution ports 35690-35720.
#   Account: guest/guest, administrator (RabbitMQ 4 lets guest in from loopback only: every client here is).
#
#   rabbit4.sh up           build the root if needed (quick no-op once built), start the nodes that are not
#                           running, form the cluster (classic_config peer discovery; join_cluster fallback),
#                           wait until every management API answers and lists 3 running nodes. Quick no-op
#                           when all is up. A node held by a test (stop-node) is left stopped.
#   rabbit4.sh down         stop the nodes this script started (pid files, checked to run in the root) and epmd
#   rabbit4.sh status       one line per node; exit 0 only when 3 nodes run, clustered, management answering
#   rabbit4.sh reset        drop holds, up, start any stopped app, delete test vhosts (stacktop-test-*)
#   rabbit4.sh stop-node IDX    `rabbitmqctl stop_app` on node IDX (the Erlang node stays: the others list it
#                           as the sparse `running: false` row) and hold it (STACKTOP_HOLD_PID, default the
#                           caller's parent: a parallel `up` leaves it stopped while that process lives)
#   rabbit4.sh start-node IDX   drop the hold, start_app (or start the node), wait until 3 nodes run again
#   rabbit4.sh ctl IDX ARGS...  rabbitmqctl -n <node IDX> ARGS...
#   rabbit4.sh wipe         down, then delete the nodes' data (next `up` forms a new cluster)
# Timings (2 cores, loaded): cold start 40-55 s; `up` when up ~3 s; stop_app -> quorum leaders re-elected in ~3 s,
# streams in ~9 s; start_app ~3 s.
# Env: STACKTOP_TESTCLOUD_HOME (the cache; the root lives in it), STACKTOP_RABBIT4_WAIT (seconds, default 180).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
R="$TRIXIE_ROOT"
INROOT="$HERE/inroot.sh"
BASE=/var/lib/rabbit4                      # inside the root
EPMD_PORT=4370
LETTERS=(a b c)
NNODES=3
WAIT_S="${STACKTOP_RABBIT4_WAIT:-180}"
ADMIN_USER=guest
ADMIN_PASSWORD=guest
COMMON=(HOME=$BASE ERL_EPMD_PORT=$EPMD_PORT ERL_EPMD_ADDRESS=127.0.0.1
        RABBITMQ_CTL_DIST_PORT_MIN=35690 RABBITMQ_CTL_DIST_PORT_MAX=35720)

log()  { echo "[rabbit4 $(date +%T)] $*" >&2; }
die()  { log "ERROR: $*"; exit 1; }
node() { echo "rabbit4${LETTERS[$1]}@localhost"; }
mport() { echo $((15673 + $1)); }
ndir() { echo "$BASE/${LETTERS[$1]}"; }
ctl()  { local i=$1; shift; "$INROOT" env "${COMMON[@]}" /usr/lib/rabbitmq/bin/rabbitmqctl -n "$(node "$i")" "$@"; }
api()  { curl -fsS -m 3 -u "$ADMIN_USER:$ADMIN_PASSWORD" "http://127.0.0.1:$(mport "$1")$2" 2>/dev/null; }

# the beam PID of node i when it runs in our root (pid file checked against /proc: never someone else's)
node_pid() {
  local f; f="$R$(ndir "$1")/pid"
  [ -s "$f" ] || return 1
  local pid; pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && [ "$(readlink "/proc/$pid/root")" = "$R" ] && echo "$pid"
}

hold_file() { echo "$R$BASE/hold.$1"; }
# a hold counts while the process that took it lives
held() {
  local f; f="$(hold_file "$1")"
  [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# number of running nodes the management API of node i lists (0 when it does not answer)
running_seen_by() {
  local body; body="$(api "$1" "/api/nodes?columns=name,running")" || { echo 0; return 0; }
  printf '%s' "$body" | python3 -c '
import json, sys
try:
    print(sum(1 for n in json.load(sys.stdin) if n.get("running") is True))
except Exception:
    print(0)'
}

app_running() { api "$1" /api/overview >/dev/null; }

prepare() {
  "$HERE/rootfs.sh" >/dev/null || die "the trixie root could not be built (testcloud/trixie/rootfs.sh)"
  [ -x "$R/usr/lib/rabbitmq/bin/rabbitmq-server" ] || die "no rabbitmq-server in $R"
  mkdir -p "$R$BASE"
  if [ ! -s "$R$BASE/.erlang.cookie" ]; then
    ( umask 077; head -c 64 /dev/urandom | base64 | tr -dc A-Za-z0-9 | head -c 20 > "$R$BASE/.erlang.cookie" )
  fi
  chmod 400 "$R$BASE/.erlang.cookie"
}

start_epmd() {
  if ! "$INROOT" env ERL_EPMD_PORT=$EPMD_PORT epmd -port $EPMD_PORT -names >/dev/null 2>&1; then
    "$INROOT" epmd -daemon -port $EPMD_PORT -address 127.0.0.1 9>&-
    local deadline=$((SECONDS + 10))
    until "$INROOT" env ERL_EPMD_PORT=$EPMD_PORT epmd -port $EPMD_PORT -names >/dev/null 2>&1; do
      [ "$SECONDS" -ge "$deadline" ] && die "epmd did not answer on 127.0.0.1:$EPMD_PORT"
      sleep 0.2
    done
  fi
}

start_node() {
  local i=$1 n d; n="$(node "$i")"; d="$(ndir "$i")"
  node_pid "$i" >/dev/null && return 0
  mkdir -p "$R$d/log" "$R$d/mnesia"
  {
    echo "listeners.tcp.default = 127.0.0.1:$((5673 + i))"
    echo "management.tcp.ip = 127.0.0.1"
    echo "management.tcp.port = $(mport "$i")"
    echo "log.file.level = info"
    echo "log.console = false"
    echo "cluster_formation.peer_discovery_backend = classic_config"
    for ((k = 0; k < NNODES; k++)); do echo "cluster_formation.classic_config.nodes.$((k + 1)) = $(node "$k")"; done
  } > "$R$d/rabbitmq.conf"
  echo '[rabbitmq_management].' > "$R$d/enabled_plugins"
  rm -f "$R$d/pid"
  log "starting $n"
  setsid nohup "$INROOT" env "${COMMON[@]}" \
    RABBITMQ_NODENAME="$n" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=$((5673 + i)) \
    RABBITMQ_DIST_PORT=$((25673 + i)) RABBITMQ_CONFIG_FILE="$d/rabbitmq.conf" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$d/enabled_plugins" RABBITMQ_MNESIA_BASE="$d/mnesia" \
    RABBITMQ_LOG_BASE="$d/log" RABBITMQ_PID_FILE="$d/pid" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}' \
    /usr/lib/rabbitmq/bin/rabbitmq-server > "$R$d/stdout.log" 2>&1 < /dev/null 9>&- &
}

wait_booted() {
  local i=$1
  ctl "$i" wait "$(ndir "$i")/pid" --timeout "$WAIT_S" >/dev/null 2>&1 \
    || die "node $(node "$i") did not boot within ${WAIT_S}s; see $R$(ndir "$i")/log and stdout.log"
}

# join node i to node 0 when its own view of the cluster has no other running node
ensure_joined() {
  local i=$1
  [ "$i" -eq 0 ] && return 0
  local view
  view="$(ctl "$i" cluster_status --formatter json 2>/dev/null | python3 -c '
import json, sys
try:
    print(len(json.load(sys.stdin).get("running_nodes", [])))
except Exception:
    print(0)')"
  [ "${view:-0}" -gt 1 ] && return 0
  log "joining $(node "$i") to $(node 0)"
  ctl "$i" stop_app >/dev/null && ctl "$i" join_cluster "$(node 0)" >/dev/null && ctl "$i" start_app >/dev/null \
    || die "$(node "$i") could not join $(node 0)"
}

# wait until every node that is not held answers its management API and lists `want` running nodes
wait_healthy() {
  local want=$1 deadline=$((SECONDS + WAIT_S)) i ok
  while :; do
    ok=1
    for ((i = 0; i < NNODES; i++)); do
      held "$i" && continue
      [ "$(running_seen_by "$i")" -ge "$want" ] || { ok=0; break; }
    done
    [ "$ok" = 1 ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && die "the management APIs do not list $want running nodes after ${WAIT_S}s"
    sleep 0.5
  done
}

count_unheld() { local c=0 i; for ((i = 0; i < NNODES; i++)); do held "$i" || c=$((c + 1)); done; echo $c; }

healthy_now() {
  local want i; want="$(count_unheld)"
  for ((i = 0; i < NNODES; i++)); do
    held "$i" && continue
    [ "$(running_seen_by "$i")" -ge "$want" ] || return 1
  done
}

up() {
  if healthy_now && [ "$(count_unheld)" = "$NNODES" ]; then
    echo "rabbitmq4: up (3 nodes, management http://127.0.0.1:15673-15675, already running)"; return 0
  fi
  prepare
  start_epmd
  local i
  for ((i = 0; i < NNODES; i++)); do held "$i" || start_node "$i"; done
  for ((i = 0; i < NNODES; i++)); do held "$i" || wait_booted "$i"; done
  for ((i = 0; i < NNODES; i++)); do
    held "$i" && continue
    app_running "$i" || ctl "$i" start_app >/dev/null 2>&1 || true
    ensure_joined "$i"
  done
  ctl 0 set_user_tags "$ADMIN_USER" administrator >/dev/null 2>&1 || true
  wait_healthy "$(count_unheld)"
  local note=""
  [ "$(count_unheld)" = "$NNODES" ] || note=" ($((NNODES - $(count_unheld))) stopped and held by a test)"
  echo "rabbitmq4: up (3 nodes rabbit4{a,b,c}@localhost, AMQP 127.0.0.1:5673-5675, management http://127.0.0.1:15673-15675)$note"
}

down() {
  local i pid
  for i in 2 1 0; do
    pid="$(node_pid "$i")" || { rm -f "$R$(ndir "$i")/pid"; continue; }
    ctl "$i" stop >/dev/null 2>&1 || kill "$pid" 2>/dev/null
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    rm -f "$R$(ndir "$i")/pid"
  done
  for pid in $(pgrep -x epmd); do
    [ "$(readlink "/proc/$pid/root")" = "$R" ] && kill "$pid"
  done
  rm -f "$R$BASE"/hold.*
  echo "rabbitmq4: down"
}

status() {
  local i rc=0 pid
  for ((i = 0; i < NNODES; i++)); do
    if ! pid="$(node_pid "$i")"; then echo "$(node "$i"): down"; rc=1; continue; fi
    if app_running "$i"; then
      echo "$(node "$i"): up, pid $pid, sees $(running_seen_by "$i") running node(s)$(held "$i" && echo ' (held)')"
      [ "$(running_seen_by "$i")" -ge "$NNODES" ] || rc=1
    else
      echo "$(node "$i"): app stopped, pid $pid$(held "$i" && echo ' (held by a test)')"; rc=1
    fi
  done
  return $rc
}

reset() {
  rm -f "$R$BASE"/hold.*
  up || return 1
  local i vh
  for ((i = 0; i < NNODES; i++)); do app_running "$i" || ctl "$i" start_app >/dev/null; done
  wait_healthy "$NNODES"
  for vh in $(api 0 "/api/vhosts?columns=name" | python3 -c '
import json, sys
print(" ".join(v["name"] for v in json.load(sys.stdin) if v["name"].startswith("stacktop-test-")))'); do
    curl -fsS -m 10 -o /dev/null -X DELETE -u "$ADMIN_USER:$ADMIN_PASSWORD" "http://127.0.0.1:15673/api/vhosts/$vh" || true
  done
  echo "rabbitmq4: reset (3 nodes running, test vhosts deleted)"
}

check_idx() { [[ "${1:-}" =~ ^[0-2]$ ]] || { echo "node index must be 0, 1 or 2" >&2; exit 2; }; }

# one up/down/reset/stop/start at a time; the lock lives beside the root (a first build replaces the root)
lock() {
  mkdir -p "$(dirname "$R")"
  exec 9>"$(dirname "$R")/.rabbit4.lock"
  flock 9
}

case "${1:-}" in
  up) lock; up ;;
  down) lock; down ;;
  status) status ;;
  reset) lock; reset ;;
  stop-node)
    check_idx "${2:-}"; lock
    node_pid "$2" >/dev/null || die "$(node "$2") is not running"
    echo "${STACKTOP_HOLD_PID:-$PPID}" > "$(hold_file "$2")"
    ctl "$2" stop_app >/dev/null || die "stop_app on $(node "$2") failed"
    echo "rabbitmq4: $(node "$2") stopped (app), held" ;;
  start-node)
    check_idx "${2:-}"; lock
    rm -f "$(hold_file "$2")"
    if node_pid "$2" >/dev/null; then
      app_running "$2" || ctl "$2" start_app >/dev/null || die "start_app on $(node "$2") failed"
    else
      prepare; start_epmd; start_node "$2"; wait_booted "$2"
    fi
    wait_healthy "$(count_unheld)"
    echo "rabbitmq4: $(node "$2") running" ;;
  ctl) check_idx "${2:-}"; i=$2; shift 2; ctl "$i" "$@" ;;
  wipe) lock; down; rm -rf "${R:?}$BASE"/[abc] "$R$BASE/.erlang.cookie"; echo "rabbitmq4: wiped" ;;
  *) echo "usage: $0 up|down|status|reset|stop-node IDX|start-node IDX|ctl IDX ARGS...|wipe" >&2; exit 2 ;;
esac
