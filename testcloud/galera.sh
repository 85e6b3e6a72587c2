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
#   galera.sh bootstrap-pc N   re-form a Primary component from node N (SET GLOBAL wsrep_provider_options=
#                              'pc.bootstrap=YES'; on MariaDB 11.x SET GLOBAL wsrep_provider_pc_bootstrap=ON)
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
# The logic is shared with the other Galera test clusters: testcloud/galera_lib.sh.
# Env: STACKTOP_TESTCLOUD_HOME, STACKTOP_GALERA_WAIT (seconds per node, default 120),
#      STACKTOP_GALERA_PROVIDER (default /usr/lib/galera/libgalera_smm.so).
set -euo pipefail

HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
TAG=galera.sh
CLUSTER_LABEL=galera
BASE="$HOME_DIR/galera"
NODES=(1 2 3)
CLIENT_BASE=3310 GCOMM_BASE=4570 IST_BASE=4580 SST_BASE=4440
PROVIDER="${STACKTOP_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
RUN_USER="$(id -un)"
SST_METHOD=stacktop_rsync
CLUSTER_NAME=stacktop_testcloud
PASSWORD_FILE=galera.password
ARBITRATOR=""
RUN=()

check_server() {
  [[ -f "$PROVIDER" ]] || die "Galera provider $PROVIDER not found (install galera-4 or set STACKTOP_GALERA_PROVIDER)"
}
SERVER_CHECK=check_server

source "$(dirname "${BASH_SOURCE[0]}")/galera_lib.sh"
galera_main "$@"
