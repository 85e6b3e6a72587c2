#!/usr/bin/env bash
# Galera part of the stacktop test bed: a throwaway 3-node MariaDB Galera cluster on 127.0.0.1.
#
#   galera.sh up            make the cluster 3 x Primary/Synced/ready; quick no-op when it already is.
#                           Bootstraps from nothing, restarts after a full stop from the node with
#                           safe_to_bootstrap: 1 (else the highest recovered seqno), re-forms a Primary
#                           component left non-Primary (pc.bootstrap on the most advanced running node),
#                           turns a leftover wsrep_desync off, restarts missing nodes.
#   galera.sh down          SIGTERM the nodes this script started (launcher PIDs), node3 -> node1
#   galera.sh status        one line per node; exit 0 only when all 3 are Primary/Synced/ready, size 3
#   galera.sh reset         up + wsrep_desync=OFF and the stacktop password on every node + empty test table
#   galera.sh kill N [M..]  SIGKILL the nodes at once and wait until the processes are gone (scenario helper)
#   galera.sh start N       (re)start node N and wait until it is Synced (scenario helper)
#   galera.sh bootstrap-pc N   SET GLOBAL wsrep_provider_options='pc.bootstrap=YES' on node N
#   galera.sh sql N "SQL"   run SQL on node N as root over its unix socket
#   galera.sh wipe          down, then delete every datadir (next `up` starts from nothing)
#
# Node N (1..3), all on 127.0.0.1:  client 331N, gcomm 457N, IST 458N, SST (rsync) 444N.
# Datadirs: ${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/galera/nodeN/{my.cnf,data,error.log,...}
# Accounts (replicated to every node):
#   root@127.0.0.1     empty password, all privileges  (test helpers: scenario writes, LOCK TABLES, ...)
#   stacktop@127.0.0.1 password "stacktop", no privileges beyond USAGE (what stacktop itself reads with:
#                      SHOW GLOBAL STATUS/VARIABLES need none); `up` writes it to
#                      $STACKTOP_TESTCLOUD_HOME/galera.password (mode 600) for testcloud/stacktop.toml
# Test data: database stacktop_test, table t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64)).
# Lowered group-communication timers so tests are fast (a SIGKILLed node is evicted ~2 s after its process
# is gone): evs.suspect_timeout=PT3S, evs.inactive_timeout=PT6S, evs.inactive_check_period=PT0.5S,
#   evs.keepalive_period=PT0.5S  (Galera defaults: 5 s / 15 s / 1 s / 1 s).
# The machine's own MariaDB (3306, /etc/mysql) is never touched: every mariadbd here starts with
# --defaults-file=<node>/my.cnf and every client call uses --no-defaults.
# When run as root the nodes run as root (`user=root`): the default cache under /root is not reachable by the
# mysql user, and changing /root's mode is not ours to do.
# Env: STACKTOP_TESTCLOUD_HOME, STACKTOP_GALERA_WAIT (seconds per node, default 120),
#      STACKTOP_GALERA_PROVIDER (default /usr/lib/galera/libgalera_smm.so).
set -euo pipefail

HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
BASE="$HOME_DIR/galera"
NODES=(1 2 3)
PROVIDER="${STACKTOP_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
WAIT_S="${STACKTOP_GALERA_WAIT:-120}"
RUN_USER="$(id -un)"
CLUSTER_NAME=stacktop_testcloud
MONITOR_USER=stacktop
MONITOR_PASSWORD=stacktop

client_port() { echo "331$1"; }
gcomm_port()  { echo "457$1"; }
ist_port()    { echo "458$1"; }
sst_port()    { echo "444$1"; }
ndir()  { echo "$BASE/node$1"; }
cnf()   { echo "$BASE/node$1/my.cnf"; }
sock()  { echo "$BASE/node$1/mysqld.sock"; }
log()   { echo "[galera.sh $(date +%T)] $*" >&2; }
die()   { log "ERROR: $*"; exit 1; }

cli()   { mariadb --no-defaults -uroot -S "$(sock "$1")" --connect-timeout=2 -N -B "${@:2}"; }
q()     { cli "$1" -e "$2" 2>/dev/null; }
status_var() { q "$1" "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'; }

ours() {  # ours PID N: PID is alive and is a mariadbd started with node N's my.cnf
  kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "--defaults-file=$(cnf "$2") "
}

pid_of() {
  # The launcher PID recorded at spawn (the launcher execs into mariadbd, so it is the server's PID), else
  # the server's own pid file (written only once SST is done), else (both files lost) a process whose
  # command line names this node's my.cnf: only this script starts mariadbd with that file. PIDs are
  # trusted only after that check (PIDs get reused).
  local p f
  for f in "$(ndir "$1")/launcher.pid" "$(ndir "$1")/mysqld.pid"; do
    p=$(cat "$f" 2>/dev/null || true)
    if [[ -n "$p" ]] && ours "$p" "$1"; then echo "$p"; return 0; fi
  done
  for f in $(grep -lF -- "--defaults-file=$(cnf "$1")" /proc/[0-9]*/cmdline 2>/dev/null); do
    p=${f#/proc/}; p=${p%/cmdline}
    if [[ "$p" != "$$" ]] && grep -q '^mariadbd$' "/proc/$p/comm" 2>/dev/null && ours "$p" "$1"; then
      echo "$p" >"$(ndir "$1")/launcher.pid"; echo "$p"; return 0
    fi
  done
}
running() { [[ -n "$(pid_of "$1")" ]]; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

check_ports_free() {  # node N is not running: its ports must not be taken by something else
  local n=$1 p
  for p in "$(client_port "$n")" "$(gcomm_port "$n")" "$(ist_port "$n")" "$(sst_port "$n")"; do
    if port_busy "$p"; then
      die "node$n: port $p on 127.0.0.1 is used by a process this script did not start (see: ss -ltnp | grep :$p)"
    fi
  done
}

write_cnf() {
  local n=$1 d; d=$(ndir "$n")
  mkdir -p "$d/data"
  cat >"$(cnf "$n")" <<EOF
# written by testcloud/galera.sh - do not edit, it is rewritten on every start
[mysqld]
user=$RUN_USER
datadir=$d/data
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
port=$(client_port "$n")
bind-address=127.0.0.1
skip-name-resolve
# small nodes
innodb_buffer_pool_size=32M
innodb_log_file_size=16M
innodb_log_buffer_size=4M
innodb_flush_log_at_trx_commit=2
performance_schema=OFF
key_buffer_size=1M
aria_pagecache_buffer_size=8M
max_connections=50
# galera
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=$PROVIDER
wsrep_cluster_name=$CLUSTER_NAME
wsrep_cluster_address=gcomm://127.0.0.1:$(gcomm_port 1),127.0.0.1:$(gcomm_port 2),127.0.0.1:$(gcomm_port 3)
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1
wsrep_node_incoming_address=127.0.0.1:$(client_port "$n")
wsrep_sst_receive_address=127.0.0.1:$(sst_port "$n")
wsrep_sst_method=stacktop_rsync
wsrep_sst_auth=root:
wsrep_slave_threads=1
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(gcomm_port "$n");ist.recv_addr=127.0.0.1:$(ist_port "$n");gcache.size=16M;gcache.page_size=16M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.inactive_check_period=PT0.5S;evs.keepalive_period=PT0.5S"
EOF
  chown -R "$RUN_USER:" "$d"
}

install_db() {  # fresh system tables for node N (only the bootstrap node: joiners get everything by SST)
  local n=$1 d; d=$(ndir "$n")
  log "node$n: mariadb-install-db"
  rm -rf "$d/data"; mkdir -p "$d/data"
  mariadb-install-db --no-defaults --user="$RUN_USER" --datadir="$d/data" \
    --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 \
    || { tail -20 "$d/install.log" >&2; die "node$n: mariadb-install-db failed (see $d/install.log)"; }
}

write_sst_wrapper() {
  # rsync SST: the joiner runs an rsync daemon; started by root, rsync gives module access to "nobody",
  # which cannot write the datadir. Our SST method "stacktop_rsync" is wsrep_sst_rsync with an rsync shim
  # first on PATH that keeps the server's own user for that daemon (mariadbd prepends its own bin dir to
  # PATH for SST scripts, so a plain rsync shim on PATH would not be seen).
  mkdir -p "$BASE/bin" "$BASE/shim"
  cat >"$BASE/shim/rsync" <<'EOF'
#!/bin/sh
# written by testcloud/galera.sh: run the SST rsync daemon as the server's own user
for a in "$@"; do
  if [ "$a" = "--daemon" ] && [ "$(id -u)" = 0 ]; then exec /usr/bin/rsync --dparam=uid="$(id -u)" --dparam=gid="$(id -g)" "$@"; fi
done
exec /usr/bin/rsync "$@"
EOF
  cat >"$BASE/bin/wsrep_sst_stacktop_rsync" <<EOF
#!/bin/sh
# written by testcloud/galera.sh: wsrep_sst_rsync with the rsync shim first on PATH
PATH="$BASE/shim:\$PATH" exec "$(command -v wsrep_sst_rsync)" "\$@"
EOF
  chmod 755 "$BASE/shim/rsync" "$BASE/bin/wsrep_sst_stacktop_rsync"
}

start_node() {  # start_node N [extra mariadbd args...]
  local n=$1; shift
  if running "$n"; then return 0; fi
  check_ports_free "$n"
  write_cnf "$n"
  local d; d=$(ndir "$n")
  rm -f "$d/launcher.pid" "$d/mysqld.sock"
  log "node$n: starting${*:+ ($*)}"
  # setsid: the node outlives the calling shell, its process group and Ctrl-C of a test run.
  # The inner shell writes its own PID and execs mariadbd, so launcher.pid is the server's PID even if
  # setsid had to fork.
  write_sst_wrapper
  PATH="$BASE/bin:$PATH" setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$d/launcher.pid" \
    mariadbd --defaults-file="$(cnf "$n")" "$@" >>"$d/stdout.log" 2>&1 </dev/null &
  local i
  for i in $(seq 1 100); do running "$n" && return 0; sleep 0.05; done
  die "node$n: mariadbd did not start (see $d/stdout.log and $d/error.log)"
}

node_state() {  # "cluster_status local_state_comment ready size" or empty when SQL does not answer
  q "$1" "SELECT GROUP_CONCAT(VARIABLE_VALUE ORDER BY FIELD(VARIABLE_NAME,'WSREP_CLUSTER_STATUS','WSREP_LOCAL_STATE_COMMENT','WSREP_READY','WSREP_CLUSTER_SIZE') SEPARATOR ' ') FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('WSREP_CLUSTER_STATUS','WSREP_LOCAL_STATE_COMMENT','WSREP_READY','WSREP_CLUSTER_SIZE')" || true
}

synced() { [[ "$(node_state "$1")" == "Primary Synced ON "* ]]; }

wait_synced() {  # wait until node N is Primary, Synced and ready; fail if it dies or the deadline passes
  local n=$1 t0=$SECONDS
  while (( SECONDS - t0 < WAIT_S )); do
    if ! running "$n"; then
      log "node$n died; last lines of $(ndir "$n")/error.log:"; tail -15 "$(ndir "$n")/error.log" >&2 || true
      return 1
    fi
    if synced "$n"; then log "node$n Synced after $((SECONDS - t0))s"; return 0; fi
    sleep 0.25
  done
  log "node$n: not Synced after ${WAIT_S}s (state: $(node_state "$n"))"
  return 1
}

wait_gone() {  # wait until PID $1 has exited (a SIGKILLed mariadbd takes seconds to vanish)
  local p=$1 i
  for i in $(seq 1 1200); do kill -0 "$p" 2>/dev/null || return 0; sleep 0.05; done
  return 1
}

grastate() { sed -n "s/^$2:[[:space:]]*//p" "$(ndir "$1")/data/grastate.dat" 2>/dev/null; }

recovered_seqno() {  # seqno of node N: grastate.dat, or mariadbd --wsrep-recover after an unclean stop
  local n=$1 s
  s=$(grastate "$n" seqno)
  if [[ -z "$s" || "$s" == "-1" ]]; then
    mariadbd --defaults-file="$(cnf "$n")" --wsrep-recover --log-error="$(ndir "$n")/recover.log" \
      >/dev/null 2>&1 || true
    s=$(sed -n 's/.*Recovered position: .*:\([-0-9]*\).*/\1/p' "$(ndir "$n")/recover.log" 2>/dev/null | tail -1)
  fi
  echo "${s:--1}"
}

pick_bootstrap_node() {  # all nodes down: safe_to_bootstrap: 1 wins, else the highest seqno
  local n best="" bestseq=-2 s
  for n in "${NODES[@]}"; do
    if [[ -d "$(ndir "$n")/data/mysql" && "$(grastate "$n" safe_to_bootstrap)" == 1 ]]; then echo "$n"; return; fi
  done
  for n in "${NODES[@]}"; do
    [[ -d "$(ndir "$n")/data/mysql" && -f "$(ndir "$n")/data/grastate.dat" ]] || continue
    write_cnf "$n"
    s=$(recovered_seqno "$n")
    if (( s > bestseq )); then bestseq=$s; best=$n; fi
  done
  if [[ -n "$best" ]]; then
    log "no node marked safe_to_bootstrap: node$best has the highest seqno ($bestseq)"
    sed -i 's/^safe_to_bootstrap:.*/safe_to_bootstrap: 1/' "$(ndir "$best")/data/grastate.dat"
  fi
  echo "$best"
}

setup_sql() {  # accounts and test table; idempotent, replicated to every node
  q "$1" "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS '$MONITOR_USER'@'127.0.0.1' IDENTIFIED BY '$MONITOR_PASSWORD';
CREATE DATABASE IF NOT EXISTS stacktop_test;
CREATE TABLE IF NOT EXISTS stacktop_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB;" \
    || die "node$1: could not create the test accounts"
}

write_password_file() {  # the reader's password for testcloud/stacktop.toml ([galera] password_file), mode 600
  local f="$HOME_DIR/galera.password"
  if [[ "$(cat "$f" 2>/dev/null)" != "$MONITOR_PASSWORD" ]]; then
    (umask 077; printf '%s\n' "$MONITOR_PASSWORD" >"$f")
  fi
}

all_healthy() {
  local n
  for n in "${NODES[@]}"; do
    running "$n" || return 1
    [[ "$(node_state "$n")" == "Primary Synced ON 3" ]] || return 1
  done
}

bootstrap() {  # nothing runs: start the most advanced node as a new cluster (or a fresh one)
  local boot
  boot=$(pick_bootstrap_node)
  if [[ -z "$boot" ]]; then
    boot=1
    write_cnf 1
    install_db 1
  fi
  start_node "$boot" --wsrep-new-cluster
  if ! wait_synced "$boot"; then
    stop_node "$boot"
    die "node$boot did not bootstrap; see $(ndir "$boot")/error.log (or run '$0 wipe' to start from nothing)"
  fi
  setup_sql "$boot"
}

make_primary() {  # running nodes but none Primary (quorum lost and never recovered): re-form a component
  local n best="" bestseq=-2 s st
  for n in "${NODES[@]}"; do
    running "$n" || continue
    st=$(node_state "$n")
    [[ "$st" == Primary* ]] && return 0
    s=$(status_var "$n" wsrep_last_committed); s=${s:--1}
    if [[ -n "$st" ]] && (( s > bestseq )); then bestseq=$s; best=$n; fi
  done
  [[ -n "$best" ]] || return 0
  log "no running node is Primary: pc.bootstrap=YES on node$best (most advanced, seqno $bestseq)"
  q "$best" "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'" || true
}

stop_node() {  # SIGTERM one node we started, SIGKILL after 60 s
  local n=$1 p
  p=$(pid_of "$n")
  [[ -n "$p" ]] || return 0
  log "node$n: SIGTERM pid $p"
  kill -TERM "$p" 2>/dev/null || true
  local i
  for i in $(seq 1 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then log "node$n: still alive after 60s, SIGKILL"; kill -KILL "$p"; wait_gone "$p" || true; fi
  rm -f "$(ndir "$n")/launcher.pid"
}

join_node() {  # start node N into the running Primary component; one retry with a wiped datadir (full SST)
  local n=$1
  start_node "$n"
  wait_synced "$n" && return 0
  log "node$n failed to join; wiping its datadir and retrying with a full SST"
  stop_node "$n"
  rm -rf "$(ndir "$n")/data"
  start_node "$n"
  wait_synced "$n" || die "node$n could not join the cluster; see $(ndir "$n")/error.log"
}

cmd_up() {
  local n any=0 t0=$SECONDS
  mkdir -p "$BASE"
  [[ -f "$PROVIDER" ]] || die "Galera provider $PROVIDER not found (install galera-4 or set STACKTOP_GALERA_PROVIDER)"
  if all_healthy; then write_password_file; cmd_status; return 0; fi
  for n in "${NODES[@]}"; do running "$n" && any=1; done
  if (( any == 0 )); then
    bootstrap
  else
    # give nodes that are starting (SST, recovery) a moment to answer SQL, then heal what is left
    local deadline=$((SECONDS + 20)) pending
    while :; do
      pending=0
      for n in "${NODES[@]}"; do running "$n" && [[ -z "$(node_state "$n")" ]] && pending=1; done
      (( pending == 0 || SECONDS >= deadline )) && break
      sleep 0.25
    done
    make_primary
    for n in "${NODES[@]}"; do
      running "$n" || continue
      q "$n" "SET GLOBAL wsrep_desync=OFF" >/dev/null 2>&1 || true
      if ! wait_synced "$n"; then
        log "node$n is running but never got Synced: restarting it"
        stop_node "$n"
      fi
    done
    any=0
    for n in "${NODES[@]}"; do running "$n" && any=1; done
    (( any == 1 )) || bootstrap
  fi
  for n in "${NODES[@]}"; do
    running "$n" || join_node "$n"
  done
  for n in "${NODES[@]}"; do synced "$n" || wait_synced "$n" || die "node$n is not Synced"; done
  write_password_file
  log "cluster up in $((SECONDS - t0))s"
  cmd_status
}

cmd_down() {
  local n
  for n in 3 2 1; do stop_node "$n"; done
  log "down"
}

cmd_status() {
  local n st ok=0
  for n in "${NODES[@]}"; do
    if running "$n"; then
      st=$(q "$n" "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size','wsrep_cluster_status','wsrep_local_state_comment','wsrep_ready','wsrep_desync_count')" \
           | awk '{sub(/^wsrep_/, "", $1); printf "%s=%s ", $1, $2}' || true)
      printf 'galera node%s 127.0.0.1:%s pid=%-7s %s\n' "$n" "$(client_port "$n")" "$(pid_of "$n")" \
        "${st:-(process up, not answering SQL: starting or receiving SST)}"
    else
      printf 'galera node%s 127.0.0.1:%s DOWN\n' "$n" "$(client_port "$n")"
    fi
  done
  all_healthy || ok=1
  return $ok
}

cmd_reset() {
  cmd_up >/dev/null
  local n
  for n in "${NODES[@]}"; do
    q "$n" "SET GLOBAL wsrep_desync=OFF" || true
    # a test may have changed the reader's password on one node only (not replicated): put it back everywhere
    q "$n" "SET SESSION wsrep_on=OFF; ALTER USER IF EXISTS '$MONITOR_USER'@'127.0.0.1' IDENTIFIED BY '$MONITOR_PASSWORD'; SET SESSION wsrep_on=ON" || true
  done
  q 1 "CREATE DATABASE IF NOT EXISTS stacktop_test;
CREATE TABLE IF NOT EXISTS stacktop_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB;
TRUNCATE TABLE stacktop_test.t;" || die "node1: could not reset the test table"
  for n in "${NODES[@]}"; do synced "$n" || wait_synced "$n" || die "node$n is not Synced after reset"; done
  cmd_status
}

cmd_kill() {  # SIGKILL every given node at once, then wait until each process is gone
  local n p pids=()
  for n in "$@"; do
    p=$(pid_of "$n")
    if [[ -z "$p" ]]; then log "node$n is not running"; continue; fi
    kill -KILL "$p"
    log "node$n: SIGKILL pid $p"
    pids+=("$n:$p")
  done
  for p in "${pids[@]}"; do
    wait_gone "${p#*:}" || die "node${p%%:*}: pid ${p#*:} still there after SIGKILL"
    rm -f "$(ndir "${p%%:*}")/launcher.pid"
  done
}

node_arg() { [[ "${1:-}" =~ ^[123]$ ]] || die "node must be 1, 2 or 3"; echo "$1"; }

case "${1:-}" in
  up)           cmd_up ;;
  down)         cmd_down ;;
  status)       cmd_status ;;
  reset)        cmd_reset ;;
  kill)         shift; [[ $# -ge 1 ]] || die "kill needs node numbers"
                for a in "$@"; do node_arg "$a" >/dev/null; done; cmd_kill "$@" ;;
  start)        n=$(node_arg "${2:-}"); start_node "$n"; wait_synced "$n" ;;
  bootstrap-pc) n=$(node_arg "${2:-}"); q "$n" "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'" ;;
  sql)          n=$(node_arg "${2:-}"); cli "$n" -e "${3:?SQL}" ;;
  wipe)         cmd_down; rm -rf "$BASE"; log "wiped $BASE" ;;
  *) echo "usage: $0 up|down|status|reset|kill N [M..]|start N|bootstrap-pc N|sql N SQL|wipe" >&2; exit 2 ;;
esac
