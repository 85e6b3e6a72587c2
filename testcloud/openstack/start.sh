#!/usr/bin/env bash
# usage: start.sh [NAME...]   Start the cloud's processes (all, or the NAMEs of common.sh SERVICES) that are
# not already running (recorded PID alive), then wait until the APIs answer. Idempotent; used by `up` and by
# tests/testbed to restart a service they killed. compute-02's spawn delay: STACKTOP_TESTCLOUD_SPAWN_DELAY.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
S="$HERE/start_one.sh"; G="$HERE/gunicorn_svc.sh"
NC=(--config-file "$B/etc/nova/nova.conf")
NEU=(--config-file "$B/etc/neutron/neutron.conf" --config-file "$B/etc/neutron/ml2_conf.ini")
CC=(--config-file "$B/etc/cinder/cinder.conf")
SPAWN_DELAY="${STACKTOP_TESTCLOUD_SPAWN_DELAY:-3}"

wait_http() {
  local deadline=$((SECONDS + ${2:-90}))
  until http_ok "$1"; do
    if [ "$SECONDS" -ge "$deadline" ]; then log "TIMEOUT: $1 does not answer (see $B/logs)" >&2; return 1; fi
    sleep 0.5
  done
}

launch() {
  case "$1" in
    keystone) "$S" keystone "$G" keystone 5000 keystone_wsgi \
                OS_KEYSTONE_CONFIG_DIR="$B/etc/keystone" OS_KEYSTONE_CONFIG_FILES=keystone.conf ;;
    placement-api) "$S" placement-api "$G" placement 8778 placement_wsgi OS_PLACEMENT_CONFIG_DIR="$B/etc/placement" ;;
    glance-api) "$S" glance-api "$G" glance-api 9292 glance_api_wsgi OS_GLANCE_CONFIG_DIR="$B/etc/glance" ;;
    nova-api) "$S" nova-api "$G" nova-api 8774 nova_api_wsgi OS_NOVA_CONFIG_DIR="$B/etc/nova" \
                "OS_NOVA_CONFIG_FILES=api-paste.ini;nova.conf;nova-api-log.conf" ;;
    neutron-server) "$S" neutron-server "$G" neutron-server 9696 neutron_api_wsgi \
                OS_NEUTRON_CONFIG_DIR="$B/etc/neutron" "OS_NEUTRON_CONFIG_FILES=neutron.conf;ml2_conf.ini" ;;
    cinder-api) "$S" cinder-api "$G" cinder-api 8776 cinder_api_wsgi ;;
    neutron-rpc-server) "$S" neutron-rpc-server "$V/neutron-rpc-server" "${NEU[@]}" \
                --log-file "$B/logs/neutron-rpc-server.log" ;;
    neutron-agent-compute-0[12]) h="${1#neutron-agent-}"
                "$S" "$1" env PYTHONPATH="$B/pylib" "$V/python" "$B/pylib/fake_ovs_agent.py" "$h" "${NEU[@]}" ;;
    cinder-scheduler) "$S" cinder-scheduler "$V/cinder-scheduler" "${CC[@]}" --log-file "$B/logs/cinder-scheduler.log" ;;
    cinder-volume) "$S" cinder-volume "$V/cinder-volume" "${CC[@]}" --log-file "$B/logs/cinder-volume.log" ;;
    nova-scheduler) "$S" nova-scheduler "$V/nova-scheduler" "${NC[@]}" --log-file "$B/logs/nova-scheduler.log" ;;
    nova-conductor) "$S" nova-conductor "$V/nova-conductor" "${NC[@]}" --log-file "$B/logs/nova-conductor.log" ;;
    nova-compute-01) "$S" nova-compute-01 env PYTHONPATH="$B/pylib" \
                "$V/python" "$B/pylib/nova_compute_wrapper.py" "${NC[@]}" --config-file "$B/etc/nova/compute-01.conf" ;;
    nova-compute-02) "$S" nova-compute-02 env PYTHONPATH="$B/pylib" SLOWFAKE_SPAWN_S="$SPAWN_DELAY" \
                "$V/python" "$B/pylib/nova_compute_wrapper.py" "${NC[@]}" --config-file "$B/etc/nova/compute-02.conf" ;;
    *) log "unknown service '$1' (known: ${SERVICES[*]})" >&2; return 2 ;;
  esac
}

if [ $# -gt 0 ]; then
  for n in "$@"; do launch "$n"; done
  exit 0
fi
# without names: every process, except those a running test holds down on purpose (common.sh held)
for i in "${!SERVICES[@]}"; do
  n="${SERVICES[$i]}"
  if [ "$n" = neutron-rpc-server ] && ! held keystone; then wait_http http://127.0.0.1:5000/v3; fi  # daemons need keystone
  if held "$n"; then log "$n: held down by a test (pid $(cat "$B/run/$n.hold")), not started"; continue; fi
  launch "$n"
done
for i in "${!API_URLS[@]}"; do held "${SERVICES[$i]}" || wait_http "${API_URLS[$i]}"; done
log "all APIs answer"
