#!/usr/bin/env bash
# TLS profile of the stacktop test bed: the running plain test cloud and broker behind HAProxy with certificates
# from a CA made for the test bed, and a single MariaDB 10.11 Galera node that requires TLS of its reader.
#
#   tls.sh up       certificates (once, cached), HAProxy (apt-get install haproxy when missing), region RegionTLS
#                   in Keystone, tls/clouds.yaml, the Galera node; a quick no-op when all of it answers
#   tls.sh down     stop HAProxy and the Galera node (by their recorded PIDs); certificates and region stay
#   tls.sh status   one line per part; exit 0 only when every frontend answers over verified TLS
#   tls.sh reset    up (nothing else holds state)
#   tls.sh wipe     down, then delete <cache>/tls (next `up` makes a new CA)
#
# Needs the plain test cloud and the broker up (scripts/testcloud up openstack rabbitmq): HAProxy only forwards.
#
# Frontends, all on 127.0.0.1, certificate tls/server.pem (CN 127.0.0.1, SAN IP:127.0.0.1, DNS:localhost):
#   13500 keystone (5000)   13501 nova (8774)    13502 placement (8778)
#   13503 neutron (9696)    13504 cinder (8776)  13505 glance (9292)
#   15671 RabbitMQ management (15672)
#   13510 keystone, 13511 RabbitMQ management: served with tls/expired.pem (signed by the same CA, expired)
# HAProxy sets X-Forwarded-Proto: https; gunicorn trusts it from 127.0.0.1, so the APIs' version documents
# link to the https address the client used.
# Keystone: region RegionTLS with one public https endpoint per service (testcloud/tls/region.py); RegionOne is
# left as it is. tls/clouds.yaml: cloud `stacktop-testcloud-tls` (the admin of clouds.yaml, auth_url
# https://127.0.0.1:13500/v3, region_name RegionTLS, cacert tls/ca.pem; mode 600).
# Galera: node 127.0.0.1:3341 (gcomm 13512, IST 13513, SST 13514), ssl_cert = the server certificate; account
# stacktop_tls@127.0.0.1 (USAGE, REQUIRE SSL, password made once, in tls/galera.password), root@127.0.0.1 as in galera.sh.
# Files in ${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/tls/:
#   ca.pem ca.key        the test bed's CA (10 years)        other-ca.pem  a CA that signed nothing here
#   server.pem .key      the servers' certificate (825 days)  expired.pem .key  expired (notAfter in the past)
#   haproxy.cfg haproxy.pid haproxy.log   clouds.yaml   galera.password   galera/node1/
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
T="$HOME_DIR/tls"
REGION=RegionTLS
CLOUD=stacktop-testcloud-tls
# plain port -> TLS port
API_PORTS=(5000:13500 8774:13501 8778:13502 9696:13503 8776:13504 9292:13505)
MGMT_PLAIN=15672 MGMT_TLS=15671
EXPIRED_KEYSTONE=13510 EXPIRED_MGMT=13511
GALERA_PORT=3341

log() { echo "[tls.sh $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
galera() { bash "$ROOT/testcloud/tls/galera.sh" "$@" 9>&-; }  # 9: the lock, never held by a daemon

# ------------------------------------------------------------------------------------------- certificates
cert_ok() {  # cert_ok FILE: signed by our CA, valid for 30 more days
  openssl verify -CAfile "$T/ca.pem" "$1" >/dev/null 2>&1 && openssl x509 -in "$1" -noout -checkend 2592000 >/dev/null
}

make_certs() {
  mkdir -p "$T"; chmod 700 "$T"
  local ext="$T/cert.ext"
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" "subjectAltName=IP:127.0.0.1,DNS:localhost" >"$ext"
  if ! openssl x509 -in "$T/ca.pem" -noout -checkend 31536000 >/dev/null 2>&1 || [[ ! -f "$T/ca.key" ]]; then
    log "making the test bed CA"
    rm -f "$T"/server.* "$T"/expired.* "$T/haproxy.pem" "$T/haproxy-expired.pem"
    ( umask 077; openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" -days 3650 \
        -subj "/O=stacktop test bed/CN=stacktop testcloud CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" ) \
      >"$T/openssl.log" 2>&1 || die "openssl could not make the CA (see $T/openssl.log)"
  fi
  if [[ ! -f "$T/other-ca.pem" ]]; then
    ( umask 077; openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/other-ca.key" -out "$T/other-ca.pem" \
        -days 3650 -subj "/O=stacktop test bed/CN=some other CA" -addext "basicConstraints=critical,CA:TRUE" ) \
      >>"$T/openssl.log" 2>&1 || die "openssl could not make the other CA (see $T/openssl.log)"
  fi
  local name days
  for name in server expired; do
    if [[ "$name" == server ]]; then cert_ok "$T/server.pem" && continue; days=825
    else [[ -f "$T/expired.pem" ]] && openssl verify -no_check_time -CAfile "$T/ca.pem" "$T/expired.pem" \
           >/dev/null 2>&1 && continue; days=-1; fi
    log "making $name.pem"
    ( umask 077
      openssl req -newkey rsa:2048 -nodes -keyout "$T/$name.key" -out "$T/$name.csr" \
        -subj "/O=stacktop test bed/CN=127.0.0.1" >>"$T/openssl.log" 2>&1
      # days -1: notAfter one day before now, so the certificate is already expired
      openssl x509 -req -in "$T/$name.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
        -out "$T/$name.pem" -days "$days" -extfile "$ext" >>"$T/openssl.log" 2>&1
      cat "$T/$name.pem" "$T/$name.key" >"$T/haproxy-$name.pem" ) || die "openssl could not make $name.pem"
    rm -f "$T/$name.csr"
  done
}

cert_stamp() { cat "$T/haproxy-server.pem" "$T/haproxy-expired.pem" | sha256sum | cut -c1-16; }

# ------------------------------------------------------------------------------------------------ HAProxy
haproxy_pid() {  # the recorded PID, if it is our HAProxy (its command line names our config)
  local p; p=$(cat "$T/haproxy.pid" 2>/dev/null || true)
  [[ -n "$p" ]] && kill -0 "$p" 2>/dev/null && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF -- "$T/haproxy.cfg" \
    && echo "$p"
  return 0
}

ensure_haproxy() {
  command -v haproxy >/dev/null && return 0
  log "haproxy is missing: apt-get install haproxy"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy >"$T/apt.log" 2>&1 \
    || { apt-get update -q >>"$T/apt.log" 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q haproxy \
           >>"$T/apt.log" 2>&1; } \
    || die "haproxy is missing and apt-get install -y haproxy failed (see $T/apt.log)"
}

frontend() {  # frontend NAME TLS_PORT PLAIN_PORT CERT
  cat <<EOF

frontend $1
  bind 127.0.0.1:$2 ssl crt $T/haproxy-$4.pem
  http-request set-header X-Forwarded-Proto https
  default_backend $1
backend $1
  server plain 127.0.0.1:$3
EOF
}

write_haproxy_cfg() {
  local pair
  {
    cat <<EOF
# written by testcloud/tls.sh - rewritten on every up
# certificates (a new one restarts HAProxy): $(cert_stamp)
global
  maxconn 1024
  ssl-default-bind-options ssl-min-ver TLSv1.2
defaults
  mode http
  option forwardfor
  timeout connect 5s
  timeout client 300s
  timeout server 300s
EOF
    for pair in "${API_PORTS[@]}"; do frontend "api_${pair%%:*}" "${pair##*:}" "${pair%%:*}" server; done
    frontend rabbitmq_mgmt "$MGMT_TLS" "$MGMT_PLAIN" server
    frontend expired_keystone "$EXPIRED_KEYSTONE" 5000 expired
    frontend expired_rabbitmq_mgmt "$EXPIRED_MGMT" "$MGMT_PLAIN" expired
  } >"$T/haproxy.cfg.new"
}

tls_ports() { local pair; for pair in "${API_PORTS[@]}"; do echo "${pair##*:}"; done; echo "$MGMT_TLS"; }

frontends_answer() {  # every frontend answers over TLS verified against our CA (any HTTP status)
  local port
  for port in $(tls_ports); do
    curl -sS -m 3 -o /dev/null --cacert "$T/ca.pem" "https://127.0.0.1:$port/" 2>/dev/null || return 1
  done
  for port in "$EXPIRED_KEYSTONE" "$EXPIRED_MGMT"; do
    curl -sS -m 3 -o /dev/null -k "https://127.0.0.1:$port/" 2>/dev/null || return 1
  done
}

start_haproxy() {
  ensure_haproxy
  write_haproxy_cfg
  haproxy -c -f "$T/haproxy.cfg.new" >"$T/haproxy-check.log" 2>&1 \
    || { cat "$T/haproxy-check.log" >&2; die "the HAProxy config does not load (see $T/haproxy.cfg.new)"; }
  local p; p=$(haproxy_pid)
  if [[ -n "$p" ]] && cmp -s "$T/haproxy.cfg.new" "$T/haproxy.cfg"; then rm -f "$T/haproxy.cfg.new"; return 0; fi
  [[ -z "$p" ]] || stop_haproxy
  mv "$T/haproxy.cfg.new" "$T/haproxy.cfg"
  local port
  for port in $(tls_ports) "$EXPIRED_KEYSTONE" "$EXPIRED_MGMT"; do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
      && die "port $port on 127.0.0.1 is used by a process this script did not start (see: ss -ltnp | grep :$port)"
  done
  log "starting HAProxy"
  # -D: daemon (its own session, no terminal); output to the log, never to the caller's pipe
  haproxy -D -f "$T/haproxy.cfg" -p "$T/haproxy.pid" >>"$T/haproxy.log" 2>&1 </dev/null 9>&- \
    || die "HAProxy did not start (see $T/haproxy.log)"
}

stop_haproxy() {
  local p i; p=$(haproxy_pid)
  [[ -n "$p" ]] || return 0
  log "stopping HAProxy (pid $p)"
  kill -TERM "$p" 2>/dev/null || true
  for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
  rm -f "$T/haproxy.pid"
}

# -------------------------------------------------------------------------------------- Keystone, clouds
write_clouds_yaml() {  # the admin entry of the plain clouds.yaml, pointed at the TLS region
  local venv="$HOME_DIR/openstack/venv/bin/python"
  [[ -x "$venv" ]] || die "the test cloud's venv $venv is missing: scripts/testcloud up openstack first"
  "$venv" "$ROOT/testcloud/region_clouds_yaml.py" "$HOME_DIR/clouds.yaml" "$T/clouds.yaml" "$CLOUD" "$REGION" \
    "written by testcloud/tls.sh: the stacktop test cloud through its TLS endpoints (admin)" \
    auth_url=https://127.0.0.1:13500/v3 "cacert=$T/ca.pem"
}

register_region() {
  local args=() pair
  for pair in "${API_PORTS[@]}"; do args+=("${pair%%:*}=${pair##*:}"); done
  OS_CLIENT_CONFIG_FILE="$HOME_DIR/clouds.yaml" OS_CLOUD=stacktop-testcloud \
    "$HOME_DIR/openstack/venv/bin/python" "$ROOT/testcloud/tls/region.py" "$REGION" "${args[@]}" >"$T/region.log" 2>&1 \
    || { tail -5 "$T/region.log" >&2; die "could not register region $REGION in Keystone (see $T/region.log)"; }
}

region_answers() {  # a token through the TLS keystone whose catalog has the TLS compute endpoint
  "$HOME_DIR/openstack/venv/bin/python" - "$T/clouds.yaml" "$CLOUD" <<'PY' >/dev/null 2>&1
import sys, openstack, openstack.config
cfg = openstack.config.OpenStackConfig(config_files=[sys.argv[1]]).get_one(sys.argv[2])
conn = openstack.connection.Connection(config=cfg)
url = conn.session.get_endpoint(service_type="compute", interface="public", region_name="RegionTLS")
sys.exit(0 if url.startswith("https://127.0.0.1:13501") else 1)
PY
}

# ------------------------------------------------------------------------------------------------- verbs
cmd_up() {
  local t0=$SECONDS
  curl -fsS -m 3 -o /dev/null http://127.0.0.1:5000/v3 2>/dev/null \
    || die "Keystone does not answer on http://127.0.0.1:5000: scripts/testcloud up openstack first"
  curl -sS -m 3 -o /dev/null "http://127.0.0.1:$MGMT_PLAIN/" 2>/dev/null \
    || die "the RabbitMQ management API does not answer on 127.0.0.1:$MGMT_PLAIN: scripts/testcloud up rabbitmq first"
  make_certs
  start_haproxy
  local i
  for i in $(seq 1 100); do frontends_answer && break; sleep 0.1; done
  frontends_answer || die "HAProxy runs but a frontend does not answer over TLS (see $T/haproxy.log)"
  write_clouds_yaml
  region_answers || register_region
  region_answers || die "the catalog from https://127.0.0.1:13500 has no $REGION compute endpoint (see $T/region.log)"
  # the node reads its certificate at start: restart it when the certificate changed since
  if [[ "$(cat "$T/galera.certstamp" 2>/dev/null)" != "$(cert_stamp)" ]]; then galera down; fi
  galera up >/dev/null
  cert_stamp >"$T/galera.certstamp"
  galera sql 1 "ALTER USER 'stacktop_tls'@'127.0.0.1' IDENTIFIED BY '$(cat "$T/galera.password")' REQUIRE SSL" \
    || die "could not require TLS of stacktop_tls"
  log "up in $((SECONDS - t0))s"
  cmd_status
}

cmd_status() {
  local rc=0 p port
  p=$(haproxy_pid)
  if [[ -z "$p" ]]; then echo "tls haproxy DOWN"; rc=1
  else
    for port in $(tls_ports) "$EXPIRED_KEYSTONE" "$EXPIRED_MGMT"; do
      if [[ "$port" == "$EXPIRED_KEYSTONE" || "$port" == "$EXPIRED_MGMT" ]]; then
        curl -sS -m 3 -o /dev/null -k "https://127.0.0.1:$port/" 2>/dev/null || { echo "tls 127.0.0.1:$port (expired) not answering"; rc=1; }
      else
        curl -sS -m 3 -o /dev/null --cacert "$T/ca.pem" "https://127.0.0.1:$port/" 2>/dev/null \
          || { echo "tls https://127.0.0.1:$port not answering over verified TLS"; rc=1; }
      fi
    done
    [[ $rc -eq 0 ]] && echo "tls haproxy pid=$p: https 127.0.0.1:13500-13505 (APIs), :$MGMT_TLS (RabbitMQ management), :$EXPIRED_KEYSTONE :$EXPIRED_MGMT (expired certificate); CA $T/ca.pem"
  fi
  galera status | sed 's/^/tls /' || rc=1
  return $rc
}

cmd_down() {
  stop_haproxy
  galera down
}

locked() {  # one up/down at a time: several pytest sessions may bring the profile up together
  mkdir -p "$T"; chmod 700 "$T"
  exec 9>"$T/.lock"
  flock -w 300 9 || die "another tls.sh holds $T/.lock for more than 300 s"
}

case "${1:-}" in
  up|reset|down|wipe) locked ;;
esac
case "${1:-}" in
  up) cmd_up ;;
  reset) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  wipe) cmd_down; galera wipe; rm -rf "$T"; log "wiped $T" ;;
  *) echo "usage: $0 up|down|status|reset|wipe" >&2; exit 2 ;;
esac
