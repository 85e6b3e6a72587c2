#!/usr/bin/env bash
# usage: testcloud/openstack.sh up|down|status|reset   The OpenStack part of the test bed (see testcloud/README.md).
#   up      install (or reuse) the venv, render config, set up once, start what is not running, wait until
#           ready. A quick no-op when every recorded process is alive and the APIs say all is healthy.
#   down    stop only the processes it started (recorded PIDs under $STACKTOP_TESTCLOUD_HOME/openstack/run).
#   status  per-process PID and API health; exit 0 only when healthy.
#   reset   make sure it is up, then delete every server, volume and leftover allocation; wait all up.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
D="$HERE/openstack"
source "$D/common.sh"
READY_TIMEOUT="${STACKTOP_TESTCLOUD_READY_TIMEOUT:-300}"
export OS_CLIENT_CONFIG_FILE="$CLOUDS_YAML" TESTCLOUD_ROOT="$B" \
       TESTCLOUD_NOVA_MANAGE="$V/nova-manage --config-file $B/etc/nova/nova.conf"

cloudctl() { "$V/python" "$D/py/cloudctl.py" "$@"; }

# processes a running test holds down on purpose (tests/testbed): not restarted, not required healthy.
# Read again once the lock is taken (a wait for the lock can be long).
HELD="$(held_list)"
export TESTCLOUD_HELD="$HELD"

all_running() {
  local i n
  for n in "${SERVICES[@]}"; do held "$n" || pid_alive "$n" || return 1; done
  for i in "${!API_URLS[@]}"; do held "${SERVICES[$i]}" || http_ok "${API_URLS[$i]}" || return 1; done
}

healthy() {
  [ -f "$B/setup.stamp" ] && [ -f "$CLOUDS_YAML" ] && [ -x "$V/python" ] && all_running && cloudctl check >/dev/null
}

# one up/down/reset at a time (parallel pytest sessions)
lock() { exec 9>"$B/.lock"; flock 9; HELD="$(held_list)"; TESTCLOUD_HELD="$HELD"; }

bring_up() {
  local t0=$SECONDS
  "$D/install.sh"
  "$D/setup.sh"
  export TESTCLOUD_STARTED_FILE="$B/run/.started" TESTCLOUD_FRESH_SINCE
  TESTCLOUD_FRESH_SINCE="$(date +%s)"
  : > "$TESTCLOUD_STARTED_FILE"
  "$D/start.sh"
  # the processes started now must report (heartbeat newer than their start), not only their old records
  TESTCLOUD_STARTED="$(tr '\n' ' ' < "$TESTCLOUD_STARTED_FILE")" cloudctl ready --timeout "$READY_TIMEOUT"
  log "up in $((SECONDS - t0)) s"
}

case "${1:-}" in
  up)
    lock
    [ -z "$HELD" ] || log "held down by a running test (left alone): $HELD"
    if healthy; then
      log "up (already running, healthy)"
    else
      bring_up
    fi
    log "clouds.yaml: $CLOUDS_YAML (cloud $CLOUD_NAME)"
    ;;
  down)
    lock
    "$D/stop.sh"
    log "down"
    ;;
  status)
    rc=0
    for n in "${SERVICES[@]}"; do
      if pid_alive "$n"; then printf '  %-26s pid %s\n' "$n" "$(cat "$B/run/$n.pid")"
      elif held "$n"; then printf '  %-26s held down by test pid %s\n' "$n" "$(cat "$B/run/$n.hold")"
      else printf '  %-26s not running\n' "$n"; rc=1; fi
    done
    for u in "${API_URLS[@]}"; do
      if http_ok "$u"; then printf '  %-26s answers\n' "$u"; else printf '  %-26s DOES NOT ANSWER\n' "$u"; rc=1; fi
    done
    if [ $rc = 0 ] && [ -x "$V/python" ] && [ -f "$CLOUDS_YAML" ] && cloudctl check; then
      log "up, healthy (clouds.yaml: $CLOUDS_YAML, cloud $CLOUD_NAME)"
    else
      log "not ready"; rc=1
    fi
    exit $rc
    ;;
  reset)
    lock
    # a reset means every service up: holds of tests are dropped
    rm -f "$B"/run/*.hold; HELD=""; TESTCLOUD_HELD=""
    healthy || bring_up
    cloudctl reset --timeout "$READY_TIMEOUT"
    ;;
  *)
    echo "usage: $0 up|down|status|reset" >&2; exit 2 ;;
esac
