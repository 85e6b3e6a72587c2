#!/usr/bin/env bash
# ML2/OVN profile of the stacktop test bed: the OVN control plane with two chassis (testcloud/ovn_probe.sh) and a
# private neutron-server with the OVN mechanism driver (testcloud/ovn_neutron_probe.sh), reachable through the
# shared Keystone as region RegionOVN.
#
#   ovn.sh up       packages (once, cached), OVN NB/SB + northd, compute-01/compute-02 (ovsdb-server,
#                   ovs-vswitchd with the dummy datapath, ovn-controller), the private MariaDB and
#                   neutron-server, the OVN metadata agent (compute-01) and neutron-ovn-agent (compute-02);
#                   waits until neutron lists all four agents alive; region RegionOVN in Keystone;
#                   ovn/clouds.yaml. A quick no-op when all of it answers; restarts what is missing (a killed
#                   ovn-controller among them)
#   ovn.sh down     stop every daemon of the profile (by their pid files), its own nova (ovn_nova.sh) first;
#                   state, packages and region stay
#   ovn.sh status   one line per part; exit 0 only when every daemon runs and neutron lists 4 alive agents
#   ovn.sh reset    up (the tests create nothing that outlives them)
#   ovn.sh wipe     down, then delete <cache>/ovn but the packages (next `up` starts from empty databases)
#
# Needs the plain test cloud up (scripts/testcloud up openstack): its venv runs neutron and its Keystone holds
# the region. The shared neutron-server, nova and RegionOne are not touched; nova is not wired to this neutron.
#
# Ports (127.0.0.1): OVN NB $STACKTOP_OVN_NB_PORT (16641), SB $STACKTOP_OVN_SB_PORT (16642), neutron-server
# $STACKTOP_OVN_NEUTRON_PORT (16696, auth_strategy noauth: it ignores the token clients send and serves every
# request with an admin context). MariaDB listens on a unix socket only.
# Keystone: region RegionOVN, one public endpoint per public RegionOne endpoint with the same URL, except
# `network` -> http://127.0.0.1:16696 (testcloud/ovn/region.py). ovn/clouds.yaml: cloud `stacktop-testcloud-ovn`
# (the admin of clouds.yaml, region_name RegionOVN; mode 600).
# Files in ${STACKTOP_OVN_HOME:-${STACKTOP_TESTCLOUD_HOME:-~/.cache/stacktop/testcloud}/ovn}/:
#   pkg/ (unpacked packages)  run/central/ run/compute-NN/ (daemons, logs, sockets)  neutron/ (neutron-server,
#   MariaDB, agents)  clouds.yaml  region.log  .lock
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${STACKTOP_TESTCLOUD_HOME:-${HOME:-/root}/.cache/stacktop/testcloud}"
export STACKTOP_OVN_HOME="${STACKTOP_OVN_HOME:-$HOME_DIR/ovn}"
export STACKTOP_OVN_NB_PORT="${STACKTOP_OVN_NB_PORT:-16641}"
export STACKTOP_OVN_SB_PORT="${STACKTOP_OVN_SB_PORT:-16642}"
export STACKTOP_OVN_NEUTRON_PORT="${STACKTOP_OVN_NEUTRON_PORT:-16696}"
O="$STACKTOP_OVN_HOME"
REGION=RegionOVN
CLOUD=stacktop-testcloud-ovn
NEUTRON="http://127.0.0.1:$STACKTOP_OVN_NEUTRON_PORT"
PY="$HOME_DIR/openstack/venv/bin/python"
AGENTS_WAIT="${STACKTOP_OVN_AGENTS_WAIT:-90}"

log() { echo "[ovn.sh $(date +%T)] $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# 9: the lock, never held by a daemon
control() { "$ROOT/testcloud/ovn_probe.sh" "$@" 9>&-; }
neutron() { "$ROOT/testcloud/ovn_neutron_probe.sh" "$@" 9>&-; }

# "HOST BINARY ALIVE" per agent neutron lists, sorted; nothing when neutron does not answer
agents() {
  curl -sf -m 10 "$NEUTRON/v2.0/agents" 2>/dev/null | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin)["agents"], key=lambda a: (a["host"], a["binary"])):
    print(a["host"], a["binary"], a["alive"])' 2>/dev/null || true
}

WANT_AGENTS="compute-01 neutron-ovn-metadata-agent True
compute-01 ovn-controller True
compute-02 neutron-ovn-agent True
compute-02 ovn-controller True"

wait_agents() {  # neutron marks a restarted agent alive at its next nb_cfg round (<= agent_down_time / 2 s)
  local t0=$SECONDS
  until [[ "$(agents)" == "$WANT_AGENTS" ]]; do
    [[ $((SECONDS - t0)) -le $AGENTS_WAIT ]] \
      || die "neutron does not list the 4 OVN agents alive after ${AGENTS_WAIT}s: $(agents | tr '\n' ';') (see $O/neutron/neutron-server.log)"
    sleep 1
  done
}

write_clouds_yaml() {  # the admin entry of the plain clouds.yaml, pointed at region RegionOVN
  "$PY" "$ROOT/testcloud/region_clouds_yaml.py" "$HOME_DIR/clouds.yaml" "$O/clouds.yaml" "$CLOUD" "$REGION" \
    "written by testcloud/ovn.sh: the stacktop test cloud with its ML2/OVN neutron-server (admin)"
}

region_answers() {  # a token whose catalog has RegionOVN's network endpoint on the private neutron-server
  # (urllib, not openstacksdk: its import alone takes seconds on a loaded machine)
  "$PY" - "$O/clouds.yaml" "$CLOUD" "$REGION" "$NEUTRON" <<'PY' >/dev/null 2>&1
import json, sys, urllib.request, yaml
path, cloud, region, want = sys.argv[1:]
auth = yaml.safe_load(open(path))["clouds"][cloud]["auth"]
body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": auth["username"], "password": auth["password"], "domain": {"name": auth["user_domain_name"]}}}},
    "scope": {"project": {"name": auth["project_name"], "domain": {"name": auth["project_domain_name"]}}}}}
req = urllib.request.Request(auth["auth_url"].rstrip("/") + "/auth/tokens", json.dumps(body).encode(),
                             {"Content-Type": "application/json"})
catalog = json.load(urllib.request.urlopen(req, timeout=20))["token"]["catalog"]
urls = {s["type"]: e["url"] for s in catalog for e in s["endpoints"]
        if e["region_id"] == region and e["interface"] == "public"}
sys.exit(0 if urls.get("network", "").rstrip("/") == want and "compute" in urls else 1)
PY
}

register_region() {
  OS_CLIENT_CONFIG_FILE="$HOME_DIR/clouds.yaml" OS_CLOUD=stacktop-testcloud \
    "$PY" "$ROOT/testcloud/ovn/region.py" "$REGION" "$NEUTRON" >"$O/region.log" 2>&1 \
    || { tail -5 "$O/region.log" >&2; die "could not register region $REGION in Keystone (see $O/region.log)"; }
}

cmd_up() {
  local t0=$SECONDS
  curl -fsS -m 3 -o /dev/null http://127.0.0.1:5000/v3 2>/dev/null \
    || die "Keystone does not answer on http://127.0.0.1:5000: scripts/testcloud up openstack first"
  [[ -x "$PY" ]] || die "the test cloud's venv $PY is missing: scripts/testcloud up openstack first"
  neutron up >"$O/up.log" 2>&1 || { tail -15 "$O/up.log" >&2; die "the OVN profile did not start (see $O/up.log)"; }
  wait_agents
  write_clouds_yaml
  region_answers || register_region
  region_answers || die "the catalog of $CLOUD has no $REGION network endpoint $NEUTRON (see $O/region.log)"
  log "up in $((SECONDS - t0))s"
  # neutron may judge a just-restarted agent dead once more before its heartbeats settle (a loaded machine):
  # up means the status holds, so read it again until it does
  local t1=$SECONDS out
  until out="$(cmd_status)"; do
    [[ $((SECONDS - t1)) -le $AGENTS_WAIT ]] || { echo "$out"; return 1; }
    sleep 2
  done
  echo "$out"
}

cmd_status() {
  local rc=0 line
  while read -r line; do
    [[ "$line" == running* ]] || { echo "ovn $line"; rc=1; }
  done < <(control status 2>/dev/null || true)
  local got; got="$(agents)"
  if [[ -z "$got" ]]; then echo "ovn neutron-server $NEUTRON not answering"; rc=1
  elif [[ "$got" != "$WANT_AGENTS" ]]; then echo "ovn neutron agents: $(echo "$got" | tr '\n' ';')"; rc=1; fi
  [[ $rc -eq 0 ]] && echo "ovn OVN NB tcp:127.0.0.1:$STACKTOP_OVN_NB_PORT SB tcp:127.0.0.1:$STACKTOP_OVN_SB_PORT, chassis compute-01 compute-02, neutron-server (ML2/OVN) $NEUTRON with 4 alive agents; cloud $CLOUD in $O/clouds.yaml"
  return $rc
}

cmd_down() {
  # the profile's own nova (testcloud/ovn_nova.sh) first: its databases are in this MariaDB, its files in $O/nova
  if [[ -d "$O/nova/run" ]]; then "$ROOT/testcloud/ovn_nova.sh" down 9>&- || die "ovn_nova.sh down failed"; fi
  neutron down >"$O/down.log" 2>&1 || { tail -5 "$O/down.log" >&2; die "down failed (see $O/down.log)"; }
}

locked() {  # one up/down at a time: several pytest sessions may bring the profile up together
  mkdir -p "$O"
  exec 9>"$O/.lock"
  flock -w 300 9 || die "another ovn.sh holds $O/.lock for more than 300 s"
}

case "${1:-}" in
  up|reset|down|wipe) locked ;;
esac
case "${1:-}" in
  up|reset) cmd_up ;;
  status) cmd_status ;;
  down) cmd_down ;;
  wipe) cmd_down; find "$O" -mindepth 1 -maxdepth 1 ! -name pkg ! -name .lock -exec rm -rf {} +; log "wiped $O (packages kept)" ;;
  *) echo "usage: $0 up|down|status|reset|wipe" >&2; exit 2 ;;
esac
