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
  [ -z "$(stale_apis)" ] && [ -f "$B/setup.stamp" ] && [ -f "$CLOUDS_YAML" ] && [ -x "$V/python" ] && [ "$(running_profile)" = "$(wanted_profile)" ] \
    && all_running && cloudctl check >/dev/null
}

# one up/down/reset at a time (parallel pytest sessions)
lock() { exec 9>"$B/.lock"; flock 9; HELD="$(held_list)"; TESTCLOUD_HELD="$HELD"; }

bring_up() {
  local t0=$SECONDS profile
  profile="$(wanted_profile)"
  case " ${PROFILES[*]} " in *" $profile "*) ;; *)
    log "unknown profile '$profile' (STACKTOP_TESTCLOUD_PROFILE: ${PROFILES[*]})" >&2; exit 2 ;; esac
  "$D/install.sh"
  "$D/setup.sh"
  if [ "$(running_profile)" != "$profile" ]; then
    log "messaging profile $(running_profile) -> $profile: restarting every process"
    "$D/stop.sh" >/dev/null
    if [ "$profile" = 2025 ]; then
      # a fresh vhost each time: queues another profile (or an earlier run) declared must not linger
      rabbitmqctl -q delete_vhost openstack2025 >/dev/null 2>&1 || true
      rabbitmqctl -q add_vhost openstack2025 >/dev/null
      rabbitmqctl -q set_permissions -p openstack2025 guest '.*' '.*' '.*' >/dev/null
    fi
  fi
  local stale
  stale="$(stale_apis)"
  if [ -n "$stale" ]; then
    log "restarting the APIs launched with other settings than gunicorn_svc.sh's (request limits): $stale"
    # shellcheck disable=SC2086
    "$D/stop.sh" $stale >/dev/null
  fi
  echo "$profile" > "$B/profile.running"
  export TESTCLOUD_STARTED_FILE="$B/run/.started" TESTCLOUD_FRESH_SINCE
  TESTCLOUD_FRESH_SINCE="$(date +%s)"
  : > "$TESTCLOUD_STARTED_FILE"
  "$D/start.sh"
  # the processes started now must report (heartbeat newer than their start), not only their old records
  TESTCLOUD_STARTED="$(tr '\n' ' ' < "$TESTCLOUD_STARTED_FILE")" cloudctl ready --timeout "$READY_TIMEOUT"
  log "up in $((SECONDS - t0)) s"
}

# The broker's statistics must be on before the services declare their queues: a classic queue created while
# RabbitMQ's management plugin was off never reports messages or consumers to the management API, so the
# RabbitMQ collector sees no queue without a consumer (the conductor triage test failed so on a fresh machine
# where a test started the cloud before any test enabled the plugin). rabbitmq.sh up is a no-op when it is on.
stats_queue_names() {  # the vhost's queues the management API lists without a message count
  curl -fsS -m 5 -u "${STACKTOP_RABBITMQ_USER:-guest}:${STACKTOP_RABBITMQ_PASSWORD:-guest}" \
    "${STACKTOP_RABBITMQ_MGMT_URL:-http://127.0.0.1:15672}/api/queues/openstack?columns=name,messages" 2>/dev/null \
    | "$V/python" -c 'import json, sys; print("\n".join(sorted(q["name"] for q in json.load(sys.stdin) if "messages" not in q)))'
}

broker_stats_on() {
  "$HERE/rabbitmq.sh" up >/dev/null
  [ -x "$V/python" ] || return 0  # no venv yet: no cloud has run, no queue predates the statistics
  local first blind
  first="$(stats_queue_names)" || return 0  # no vhost yet: the same
  [ -n "$first" ] || return 0
  sleep 6  # a new queue reports after one statistics interval (5 s): only those still blind predate them
  blind="$(comm -12 <(printf '%s\n' "$first") <(stats_queue_names || true))"
  [ -n "$blind" ] || return 0
  log "$(wc -l <<<"$blind") queues of vhost openstack predate the broker's statistics (management enabled after the cloud started): restarting the cloud without them"
  "$D/stop.sh" >/dev/null
  # (rabbitmqctl reads stdin: without </dev/null it eats the rest of the list)
  while read -r q; do rabbitmqctl -q delete_queue -p openstack "$q" </dev/null >/dev/null 2>&1 || true; done <<<"$blind"
}

case "${1:-}" in
  up)
    lock
    broker_stats_on
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
      log "up, healthy, messaging profile $(running_profile) (clouds.yaml: $CLOUDS_YAML, cloud $CLOUD_NAME)"
    else
      log "not ready"; rc=1
    fi
    exit $rc
    ;;
  reset)
    lock
    # a reset means every service up: holds of tests are dropped
    rm -f "$B"/run/*.hold; HELD=""; TESTCLOUD_HELD=""
    broker_stats_on
    healthy || bring_up
    cloudctl reset --timeout "$READY_TIMEOUT"
    ;;
  *)
    echo "usage: $0 up|down|status|reset" >&2; exit 2 ;;
esac
