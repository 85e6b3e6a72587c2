#!/usr/bin/env bash
# The Galera node of the TLS profile (testcloud/tls.sh): one MariaDB 10.11 Galera node that offers TLS with the
# test bed's server certificate and requires it of the monitoring account.
#
#   galera.sh up|down|status|reset|sql 1 "SQL"|wipe   (the verbs of testcloud/galera.sh, node 1 only)
#
# Node 1 on 127.0.0.1: client 3341, gcomm 13512, IST 13513, SST (rsync) 13514. A single-node cluster
# (wsrep_cluster_size 1). ssl_ca / ssl_cert / ssl_key: <cache>/tls/{ca,server}.pem, server.key (made by tls.sh).
# Accounts: root@127.0.0.1 (no password, the harness), stacktop_tls@127.0.0.1 USAGE only, REQUIRE SSL (tls.sh sets
# it on every up), password made once and kept in <cache>/tls/galera.password (mode 600).
# State: ${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/tls/galera/node1/
set -euo pipefail

HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
TLS_DIR="$HOME_DIR/tls"
TAG=tls/galera.sh
CLUSTER_LABEL=galera-tls
BASE="$TLS_DIR/galera"
NODES=(1)
CLIENT_BASE=3340 GCOMM_BASE=13511 IST_BASE=13512 SST_BASE=13513
PROVIDER="${STACKTOP_GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}"
RUN_USER="$(id -un)"
SST_METHOD=stacktop_rsync
CLUSTER_NAME=stacktop_galera_tls
PASSWORD_FILE=tls/galera.password
ARBITRATOR=""
RUN=()
MONITOR_USER=stacktop_tls
# a password of its own, made once per cache (a word as common as "stacktop" would be masked in every text
# stacktop shows, as any password is)
MONITOR_PASSWORD=$(cat "$TLS_DIR/galera.password" 2>/dev/null || true)
[[ -n "$MONITOR_PASSWORD" ]] || MONITOR_PASSWORD=$(openssl rand -hex 12)
EXTRA_CNF="ssl_ca=$TLS_DIR/ca.pem
ssl_cert=$TLS_DIR/server.pem
ssl_key=$TLS_DIR/server.key"
EXTRA_SQL="ALTER USER '$MONITOR_USER'@'127.0.0.1' REQUIRE SSL;"

check_server() {
  [[ -f "$PROVIDER" ]] || die "Galera provider $PROVIDER not found (install galera-4 or set STACKTOP_GALERA_PROVIDER)"
  [[ -f "$TLS_DIR/server.pem" && -f "$TLS_DIR/server.key" ]] || die "no certificate in $TLS_DIR: run testcloud/tls.sh up"
}
SERVER_CHECK=check_server

source "$(dirname "${BASH_SOURCE[0]}")/../galera_lib.sh"
galera_main "$@"
