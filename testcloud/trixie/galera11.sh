#!/usr/bin/env bash
# MariaDB 11.8 + galera-4 26.4 test cluster: 3 nodes run from the trixie root (testcloud/trixie/rootfs.sh, built
# on first use), each mariadbd chrooted in it (inroot.sh: private mount namespace, host network).
#
#   galera11.sh up|down|status|reset|kill N [M..]|start N|bootstrap-pc N|sql N "SQL"|wipe
#   (the verbs of testcloud/galera.sh, same behaviour: see its header)
#
# Node N (1..3), all on 127.0.0.1:  client 333N, gcomm 461N, IST 462N, SST (rsync) 446N.
# Datadirs: inside the root at /var/lib/galera11/nodeN/{my.cnf,data,error.log,...}
#   (= <root>/var/lib/galera11 on the host; the root is <testcloud cache>/trixie/root).
# Accounts and test data: as testcloud/galera.sh (root@127.0.0.1 without password, `stacktop`@127.0.0.1
#   USAGE only, password "stacktop", written to $STACKTOP_TESTCLOUD_HOME/galera11.password, mode 600).
# The nodes run as the root's `mysql` user: as root, the rsync SST daemon drops to `nobody` inside the chroot
#   and cannot write the datadir. MariaDB 11.8 makes its own TLS certificate at start: it offers TLS to every
#   client (self-signed, verifiable by no CA); plaintext logins stay allowed. The 11.8 command-line client
#   verifies certificates by default (--skip-ssl-verify-server-cert); this script talks over the unix socket
#   with the machine's own client.
# Lowered group-communication timers as in testcloud/galera.sh.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
HOME_DIR="$TESTCLOUD_HOME"
TAG=galera11.sh
CLUSTER_LABEL=galera11
IBASE=/var/lib/galera11
BASE="$TRIXIE_ROOT$IBASE"
RUN=("$HERE/inroot.sh")
NODES=(1 2 3)
CLIENT_BASE=3330 GCOMM_BASE=4610 IST_BASE=4620 SST_BASE=4460
PROVIDER=/usr/lib/galera/libgalera_smm.so
RUN_USER=mysql
SST_METHOD=rsync
CLUSTER_NAME=stacktop_galera11
PASSWORD_FILE=galera11.password
ARBITRATOR=""

check_server() {  # run by `up`: the root is built on first use (a quick no-op once built)
  "$HERE/rootfs.sh" >&2 || die "the trixie root could not be built (testcloud/trixie/rootfs.sh)"
  [[ -f "$TRIXIE_ROOT$PROVIDER" ]] || die "no Galera provider in the trixie root ($TRIXIE_ROOT$PROVIDER)"
}
SERVER_CHECK=check_server

source "$HERE/../galera_lib.sh"
galera_main "$@"
