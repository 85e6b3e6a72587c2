# shellcheck shell=bash
# The Galera test clusters' shared logic: sourced by testcloud/galera.sh (MariaDB 10.11, 3 nodes),
# testcloud/galera-arb.sh (MariaDB 10.11, 2 nodes + garbd) and testcloud/trixie/galera11.sh (MariaDB 11.8 in the
# trixie root, 3 nodes). The sourcing script sets the profile, then calls `galera_main "$@"`:
#
#   TAG            log prefix / name in messages           BASE    state folder as the host sees it
#   IBASE          the same folder as mariadbd sees it (inside a chroot: a path in the root; default BASE)
#   RUN            array: prefix for server-side binaries (mariadbd, mariadb-install-db, chown), e.g. inroot.sh
#   NODES          data node numbers (1 2 3)               CLIENT_BASE GCOMM_BASE IST_BASE SST_BASE: port = base + N
#   RUN_USER       the user mariadbd runs as               SST_METHOD  stacktop_rsync (host) | rsync (chroot)
#   PROVIDER       libgalera_smm.so path as mariadbd sees it   CLUSTER_NAME   PASSWORD_FILE (the reader's)
#   ARBITRATOR     empty, or the gcomm port of a garbd member this script runs beside the data nodes
#   SERVER_CHECK   a function `up` runs first: fails with one line when the server binaries are missing
#   EXTRA_CNF      optional lines appended to every node's [mysqld] section (e.g. ssl_cert / ssl_key)
#   MONITOR_USER MONITOR_PASSWORD   the reader account (default stacktop, stacktop); EXTRA_SQL: optional SQL run
#                  after the accounts exist
#
# Every mariadbd starts with --defaults-file=<node>/my.cnf and every client call uses --no-defaults over the
# node's unix socket: the machine's own MariaDB (3306, /etc/mysql) is never touched.

: "${MONITOR_USER:=stacktop}"
: "${MONITOR_PASSWORD:=stacktop}"
: "${IBASE:=$BASE}"
: "${WAIT_S:=${STACKTOP_GALERA_WAIT:-120}}"
[[ -n "${RUN+x}" ]] || RUN=()

client_port() { echo $((CLIENT_BASE + $1)); }
gcomm_port()  { echo $((GCOMM_BASE + $1)); }
ist_port()    { echo $((IST_BASE + $1)); }
sst_port()    { echo $((SST_BASE + $1)); }
ndir()  { echo "$BASE/node$1"; }      # as the host sees it
idir()  { echo "$IBASE/node$1"; }     # as mariadbd sees it
cnf()   { echo "$BASE/node$1/my.cnf"; }
icnf()  { echo "$IBASE/node$1/my.cnf"; }
sock()  { echo "$BASE/node$1/mysqld.sock"; }
log()   { echo "[$TAG $(date +%T)] $*" >&2; }
die()   { log "ERROR: $*"; exit 1; }
members() { echo $(( ${#NODES[@]} + (${ARBITRATOR:+1}+0) )); }

# --skip-ssl: over the unix socket TLS buys nothing, and against MariaDB 11.x (which offers TLS with a certificate
# it made) the client's handshake costs ~0.5 s per call
cli()   { mariadb --no-defaults --skip-ssl -uroot -S "$(sock "$1")" --connect-timeout=2 -N -B "${@:2}"; }
q()     { cli "$1" -e "$2" 2>/dev/null; }
status_var() { q "$1" "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'; }

cmdline_has() {  # cmdline_has PID STRING: PID is alive and its command line (arguments joined by spaces,
  # one after the last) holds STRING
  kill -0 "$1" 2>/dev/null && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2"
}

find_pid() {  # find_pid PIDFILE... -- COMM NEEDLE: a recorded PID still running with NEEDLE, else a scan
  local files=() p f
  while [[ "$1" != -- ]]; do files+=("$1"); shift; done
  shift
  local comm=$1 needle=$2
  for f in "${files[@]}"; do
    p=$(cat "$f" 2>/dev/null || true)
    if [[ -n "$p" ]] && cmdline_has "$p" "$needle"; then echo "$p"; return 0; fi
  done
  for f in $(grep -lF -- "${needle% }" /proc/[0-9]*/cmdline 2>/dev/null); do
    p=${f#/proc/}; p=${p%/cmdline}
    if [[ "$p" != "$$" ]] && grep -qx "$comm" "/proc/$p/comm" 2>/dev/null && cmdline_has "$p" "$needle"; then
      echo "$p" >"${files[0]}"; echo "$p"; return 0
    fi
  done
}

pid_of() {
  # The launcher PID recorded at spawn (the launcher execs into mariadbd, so it is the server's PID), else
  # the server's own pid file (written only once SST is done), else (both files lost) a mariadbd whose
  # command line names this node's my.cnf: only this script starts mariadbd with that file. PIDs are
  # trusted only after that check (PIDs get reused).
  local d; d=$(ndir "$1")
  find_pid "$d/launcher.pid" "$d/mysqld.pid" -- mariadbd "--defaults-file=$(icnf "$1") "
}
running() { [[ -n "$(pid_of "$1")" ]]; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

check_ports_free() {  # check_ports_free WHAT PORT...: WHAT is not running, its ports must be free
  local what=$1 p; shift
  for p in "$@"; do
    if port_busy "$p"; then
      die "$what: port $p on 127.0.0.1 is used by a process this script did not start (see: ss -ltnp | grep :$p)"
    fi
  done
}

gcomm_address() {
  local n out="" sep=""
  for n in "${NODES[@]}"; do out+="${sep}127.0.0.1:$(gcomm_port "$n")"; sep=,; done
  [[ -z "${ARBITRATOR:-}" ]] || out+=",127.0.0.1:$ARBITRATOR"
  echo "gcomm://$out"
}

# Lowered group-communication timers so tests are fast (a SIGKILLed member is evicted ~2 s after its process
# is gone). Galera defaults: 5 s / 15 s / 1 s / 1 s.
EVS_TIMERS="evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;evs.inactive_check_period=PT0.5S;evs.keepalive_period=PT0.5S"

own() {  # give node N's folder to RUN_USER (as the server's own system sees that user)
  if [[ "$RUN_USER" != "$(id -un)" || ${#RUN[@]} -gt 0 ]]; then
    "${RUN[@]}" chown -R "$RUN_USER:" "$(idir "$1")" || die "node$1: chown to $RUN_USER failed"
  fi
}

write_cnf() {
  local n=$1 d; d=$(idir "$n")
  mkdir -p "$(ndir "$n")/data"
  cat >"$(cnf "$n")" <<EOF
# written by testcloud/$TAG - do not edit, it is rewritten on every start
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
wsrep_cluster_address=$(gcomm_address)
wsrep_node_name=node$n
wsrep_node_address=127.0.0.1
wsrep_node_incoming_address=127.0.0.1:$(client_port "$n")
wsrep_sst_receive_address=127.0.0.1:$(sst_port "$n")
wsrep_sst_method=$SST_METHOD
wsrep_sst_auth=root:
wsrep_slave_threads=1
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(gcomm_port "$n");ist.recv_addr=127.0.0.1:$(ist_port "$n");gcache.size=16M;gcache.page_size=16M;$EVS_TIMERS"
${EXTRA_CNF:-}
EOF
  own "$n"
}

install_db() {  # fresh system tables for node N (only the bootstrap node: joiners get everything by SST)
  local n=$1 d; d=$(ndir "$n")
  log "node$n: mariadb-install-db"
  rm -rf "$d/data"; mkdir -p "$d/data"
  own "$n"
  "${RUN[@]}" mariadb-install-db --no-defaults --user="$RUN_USER" --datadir="$(idir "$n")/data" \
    --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 \
    || { tail -20 "$d/install.log" >&2; die "node$n: mariadb-install-db failed (see $d/install.log)"; }
}

write_sst_wrapper() {
  # rsync SST: the joiner runs an rsync daemon; started by root, rsync gives module access to "nobody",
  # which cannot write the datadir. SST method "stacktop_rsync" is wsrep_sst_rsync with an rsync shim
  # first on PATH that keeps the server's own user for that daemon (mariadbd prepends its own bin dir to
  # PATH for SST scripts, so a plain rsync shim on PATH would not be seen). Chrooted nodes run as mysql
  # and use plain rsync.
  [[ "$SST_METHOD" == stacktop_rsync ]] || return 0
  mkdir -p "$BASE/bin" "$BASE/shim"
  cat >"$BASE/shim/rsync" <<'EOF'
#!/bin/sh
# written by testcloud/galera_lib.sh: run the SST rsync daemon as the server's own user
for a in "$@"; do
  if [ "$a" = "--daemon" ] && [ "$(id -u)" = 0 ]; then exec /usr/bin/rsync --dparam=uid="$(id -u)" --dparam=gid="$(id -g)" "$@"; fi
done
exec /usr/bin/rsync "$@"
EOF
  cat >"$BASE/bin/wsrep_sst_stacktop_rsync" <<EOF
#!/bin/sh
# written by testcloud/galera_lib.sh: wsrep_sst_rsync with the rsync shim first on PATH
PATH="$BASE/shim:\$PATH" exec "$(command -v wsrep_sst_rsync)" "\$@"
EOF
  chmod 755 "$BASE/shim/rsync" "$BASE/bin/wsrep_sst_stacktop_rsync"
}

spawn() {  # spawn PIDFILE LOGFILE CMD...: start CMD in its own session; PIDFILE gets its PID (CMD execs)
  # setsid: the process outlives the calling shell, its process group and Ctrl-C of a test run. The inner
  # shell writes its own PID and execs CMD, so PIDFILE holds the server's PID even if setsid had to fork.
  local pidfile=$1 logfile=$2; shift 2
  PATH="$BASE/bin:$PATH" setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidfile" "$@" \
    >>"$logfile" 2>&1 </dev/null &
}

start_node() {  # start_node N [extra mariadbd args...]
  local n=$1; shift
  if running "$n"; then return 0; fi
  check_ports_free "node$n" "$(client_port "$n")" "$(gcomm_port "$n")" "$(ist_port "$n")" "$(sst_port "$n")"
  write_cnf "$n"
  local d; d=$(ndir "$n")
  rm -f "$d/launcher.pid" "$d/mysqld.sock"
  log "node$n: starting${*:+ ($*)}"
  write_sst_wrapper
  spawn "$d/launcher.pid" "$d/stdout.log" "${RUN[@]}" mariadbd --defaults-file="$(icnf "$n")" "$@"
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
    "${RUN[@]}" mariadbd --defaults-file="$(icnf "$n")" --wsrep-recover --log-error="$(idir "$n")/recover.log" \
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
CREATE TABLE IF NOT EXISTS stacktop_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB;
${EXTRA_SQL:-}" \
    || die "node$1: could not create the test accounts"
}

write_password_file() {  # the reader's password for testcloud/stacktop.toml ([galera] password_file), mode 600
  local f="$HOME_DIR/$PASSWORD_FILE"
  if [[ "$(cat "$f" 2>/dev/null)" != "$MONITOR_PASSWORD" ]]; then
    (umask 077; printf '%s\n' "$MONITOR_PASSWORD" >"$f")
  fi
}

# ------------------------------------------------------------------------------------------ the arbitrator
garbd_pid() {
  [[ -n "${ARBITRATOR:-}" ]] || return 0
  find_pid "$BASE/garbd/launcher.pid" -- garbd "gmcast.listen_addr=tcp://127.0.0.1:$ARBITRATOR;"
}
garbd_running() { [[ -n "$(garbd_pid)" ]]; }

start_garbd() {  # garbd joins the running Primary component as a member without data
  [[ -n "${ARBITRATOR:-}" ]] || return 0
  garbd_running && return 0
  check_ports_free garbd "$ARBITRATOR"
  local d="$BASE/garbd" n peers="" sep=""
  mkdir -p "$d"; rm -f "$d/launcher.pid"
  for n in "${NODES[@]}"; do peers+="${sep}127.0.0.1:$(gcomm_port "$n")"; sep=,; done
  log "garbd: starting on 127.0.0.1:$ARBITRATOR"
  # the PID check matches "listen_addr=...:PORT;" in the command line: the options string keeps that ';'
  # in its own folder: garbd writes its view state (gvwstate.dat) into the working directory
  ( cd "$d" && spawn "$d/launcher.pid" "$d/stdout.log" "$GARBD" --address "gcomm://$peers" --group "$CLUSTER_NAME" \
    --name garbd --log "$d/garbd.log" \
    --options "gmcast.listen_addr=tcp://127.0.0.1:$ARBITRATOR;$EVS_TIMERS;" )
  local i
  for i in $(seq 1 100); do garbd_running && return 0; sleep 0.05; done
  die "garbd did not start (see $d/stdout.log and $d/garbd.log)"
}

wait_members() {  # every running data node reports the full member count (garbd counted)
  local n t0=$SECONDS want; want=$(members)
  while (( SECONDS - t0 < WAIT_S )); do
    local ok=1
    for n in "${NODES[@]}"; do [[ "$(node_state "$n")" == "Primary Synced ON $want" ]] || ok=0; done
    (( ok )) && return 0
    if [[ -n "${ARBITRATOR:-}" ]] && ! garbd_running; then
      log "garbd died; last lines of $BASE/garbd/garbd.log:"; tail -15 "$BASE/garbd/garbd.log" >&2 || true
      return 1
    fi
    sleep 0.25
  done
  return 1
}

stop_pid() {  # stop_pid WHAT PID: SIGTERM, SIGKILL after 60 s
  local what=$1 p=$2 i
  log "$what: SIGTERM pid $p"
  kill -TERM "$p" 2>/dev/null || true
  for i in $(seq 1 600); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then log "$what: still alive after 60s, SIGKILL"; kill -KILL "$p"; wait_gone "$p" || true; fi
}

stop_garbd() {
  local p; p=$(garbd_pid)
  [[ -n "$p" ]] || return 0
  stop_pid garbd "$p"
  rm -f "$BASE/garbd/launcher.pid"
}

# ------------------------------------------------------------------------------------------------- verbs
all_healthy() {
  local n want; want=$(members)
  if [[ -n "${ARBITRATOR:-}" ]]; then garbd_running || return 1; fi
  for n in "${NODES[@]}"; do
    running "$n" || return 1
    [[ "$(node_state "$n")" == "Primary Synced ON $want" ]] || return 1
  done
}

bootstrap() {  # nothing runs: start the most advanced node as a new cluster (or a fresh one)
  local boot
  boot=$(pick_bootstrap_node)
  if [[ -z "$boot" ]]; then
    boot=${NODES[0]}
    write_cnf "$boot"
    install_db "$boot"
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
  log "no running node is Primary: pc.bootstrap on node$best (most advanced, seqno $bestseq)"
  pc_bootstrap "$best" || true
}

pc_bootstrap() {  # re-form a Primary component from node N. MariaDB 11.x loads the provider as a plugin and
  # refuses wsrep_provider_options changes (ERROR 1210): there pc.bootstrap is the variable
  # wsrep_provider_pc_bootstrap; older servers take it through wsrep_provider_options.
  if [[ -n "$(q "$1" "SHOW GLOBAL VARIABLES LIKE 'wsrep_provider_pc_bootstrap'")" ]]; then
    cli "$1" -e "SET GLOBAL wsrep_provider_pc_bootstrap=ON"
  else
    cli "$1" -e "SET GLOBAL wsrep_provider_options='pc.bootstrap=YES'"
  fi
}

stop_node() {  # SIGTERM one node we started, SIGKILL after 60 s
  local n=$1 p
  p=$(pid_of "$n")
  [[ -n "$p" ]] || return 0
  stop_pid "node$n" "$p"
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
  "$SERVER_CHECK"
  if all_healthy; then write_password_file; cmd_status; return 0; fi
  for n in "${NODES[@]}"; do running "$n" && any=1; done
  if (( any == 0 )); then
    stop_garbd  # a garbd left alone holds no state: it rejoins once a data node is back
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
    (( any == 1 )) || { stop_garbd; bootstrap; }
  fi
  for n in "${NODES[@]}"; do
    running "$n" || join_node "$n"
  done
  for n in "${NODES[@]}"; do synced "$n" || wait_synced "$n" || die "node$n is not Synced"; done
  start_garbd
  wait_members || die "the nodes do not all see $(members) members: $(for n in "${NODES[@]}"; do printf 'node%s=%s; ' "$n" "$(node_state "$n")"; done)"
  write_password_file
  log "cluster up in $((SECONDS - t0))s"
  cmd_status
}

cmd_down() {
  local i n
  stop_garbd
  for (( i=${#NODES[@]}-1; i>=0; i-- )); do stop_node "${NODES[i]}"; done
  log "down"
}

cmd_status() {
  local n st ok=0
  for n in "${NODES[@]}"; do
    if running "$n"; then
      st=$(q "$n" "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size','wsrep_cluster_status','wsrep_local_state_comment','wsrep_ready','wsrep_desync_count')" \
           | awk '{sub(/^wsrep_/, "", $1); printf "%s=%s ", $1, $2}' || true)
      printf '%s node%s 127.0.0.1:%s pid=%-7s %s\n' "$CLUSTER_LABEL" "$n" "$(client_port "$n")" "$(pid_of "$n")" \
        "${st:-(process up, not answering SQL: starting or receiving SST)}"
    else
      printf '%s node%s 127.0.0.1:%s DOWN\n' "$CLUSTER_LABEL" "$n" "$(client_port "$n")"
    fi
  done
  if [[ -n "${ARBITRATOR:-}" ]]; then
    if garbd_running; then printf '%s garbd 127.0.0.1:%s pid=%s (gcomm only, no SQL)\n' "$CLUSTER_LABEL" "$ARBITRATOR" "$(garbd_pid)"
    else printf '%s garbd 127.0.0.1:%s DOWN\n' "$CLUSTER_LABEL" "$ARBITRATOR"; fi
  fi
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
  q "${NODES[0]}" "CREATE DATABASE IF NOT EXISTS stacktop_test;
CREATE TABLE IF NOT EXISTS stacktop_test.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB;
TRUNCATE TABLE stacktop_test.t;" || die "node${NODES[0]}: could not reset the test table"
  for n in "${NODES[@]}"; do synced "$n" || wait_synced "$n" || die "node$n is not Synced after reset"; done
  cmd_status
}

cmd_kill() {  # SIGKILL every given member at once (node numbers, or garbd), then wait until each is gone
  local n p pids=()
  for n in "$@"; do
    if [[ "$n" == garbd ]]; then p=$(garbd_pid); else p=$(pid_of "$n"); fi
    if [[ -z "$p" ]]; then log "$n is not running"; continue; fi
    kill -KILL "$p"
    log "$n: SIGKILL pid $p"
    pids+=("$n:$p")
  done
  for p in "${pids[@]}"; do
    n=${p%%:*}
    wait_gone "${p#*:}" || die "$n: pid ${p#*:} still there after SIGKILL"
    if [[ "$n" == garbd ]]; then rm -f "$BASE/garbd/launcher.pid"; else rm -f "$(ndir "$n")/launcher.pid"; fi
  done
}

node_arg() {  # a data node number, or `garbd` where the profile has an arbitrator (when $2 = member)
  local a=${1:-} n
  for n in "${NODES[@]}"; do [[ "$a" == "$n" ]] && { echo "$a"; return 0; }; done
  if [[ "${2:-}" == member && -n "${ARBITRATOR:-}" && "$a" == garbd ]]; then echo garbd; return 0; fi
  die "node must be one of ${NODES[*]}${ARBITRATOR:+ or garbd}"
}

galera_usage() {
  echo "usage: $0 up|down|status|reset|kill N [M..]|start N|bootstrap-pc N|sql N SQL|wipe  (N: ${NODES[*]}${ARBITRATOR:+ or garbd for kill/start})" >&2
  exit 2
}

galera_main() {
  local n a
  case "${1:-}" in
    up)           cmd_up ;;
    down)         cmd_down ;;
    status)       cmd_status ;;
    reset)        cmd_reset ;;
    kill)         shift; [[ $# -ge 1 ]] || die "kill needs node numbers"
                  for a in "$@"; do node_arg "$a" member >/dev/null; done; cmd_kill "$@" ;;
    start)        n=$(node_arg "${2:-}" member)
                  if [[ "$n" == garbd ]]; then start_garbd; wait_members; else start_node "$n"; wait_synced "$n"; fi ;;
    bootstrap-pc) n=$(node_arg "${2:-}"); pc_bootstrap "$n" ;;
    sql)          n=$(node_arg "${2:-}"); cli "$n" -e "${3:?SQL}" ;;
    wipe)         cmd_down; rm -rf "$BASE"; log "wiped $BASE" ;;
    *)            galera_usage ;;
  esac
}
