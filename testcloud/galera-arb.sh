#!/usr/bin/env bash
# Galera part of the stacktop test bed, small-site shape: 2 MariaDB 10.11 data nodes + a garbd arbitrator
# (galera-arbitrator-4, a Debian 12 package: `up` installs it with apt-get when garbd is missing).
#
#   galera-arb.sh up|down|status|reset|bootstrap-pc N|sql N "SQL"|wipe   (as testcloud/galera.sh)
#   galera-arb.sh kill N|garbd [..]   SIGKILL data node N (1, 2) or the arbitrator, wait until it is gone
#   galera-arb.sh start N|garbd       (re)start it and wait until the data nodes see all 3 members
#
# Data node N (1, 2), on 127.0.0.1:  client 332N, gcomm 463N, IST 464N, SST (rsync) 445N.
# garbd: gcomm 127.0.0.1:4633, no SQL port, group member named "garbd"; log in <state>/garbd/garbd.log.
# A healthy cluster: both data nodes Primary/Synced/ready with wsrep_cluster_size 3 (garbd counts).
# State: ${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/galera-arb/{node1,node2,garbd}/
# Accounts and test data: as testcloud/galera.sh; the reader's password goes to galera-arb.password.
# Lowered group-communication timers as in testcloud/galera.sh (garbd gets the same).
# Env: STACKTOP_TESTCLOUD_HOME, STACKTOP_GALERA_WAIT, STACKTOP_GALERA_PROVIDER, STACKTOP_GARBD (garbd binary).
set -euo pipefail

HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
TAG=galera-arb.sh
CLUSTER_LABEL=galera-arb
BASE="$HOME_DIR/galera-arb"
NODES=(1 2)
CLIENT_BASE=3320 GCOMM_BASE=4630 IST_BASE=4640 SST_BASE=4450
PROVIDER="${STACKTOP_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
RUN_USER="$(id -un)"
SST_METHOD=stacktop_rsync
CLUSTER_NAME=stacktop_galera_arb
PASSWORD_FILE=galera-arb.password
ARBITRATOR=4633
GARBD="${STACKTOP_GARBD:-garbd}"
RUN=()

check_server() {
  [[ -f "$PROVIDER" ]] || die "Galera provider $PROVIDER not found (install galera-4 or set STACKTOP_GALERA_PROVIDER)"
  command -v "$GARBD" >/dev/null && return 0
  log "garbd is missing: apt-get install galera-arbitrator-4"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q galera-arbitrator-4 >"$BASE/apt.log" 2>&1 \
    || die "garbd is missing and apt-get install -y galera-arbitrator-4 failed (see $BASE/apt.log)"
  command -v "$GARBD" >/dev/null || die "galera-arbitrator-4 is installed but $GARBD is not on PATH"
}
SERVER_CHECK=check_server

source "$(dirname "${BASH_SOURCE[0]}")/galera_lib.sh"
galera_main "$@"
