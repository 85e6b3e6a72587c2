#!/usr/bin/env bash
# RabbitMQ part of the stacktop test bed. The broker itself is the machine's own (127.0.0.1:5672, guest/guest);
# this script only makes sure its management API answers.
#   up      enable rabbitmq_management (idempotent, no restart) and wait until
#           http://127.0.0.1:15672/api/overview answers with guest/guest
#   down    nothing: the broker and its plugin belong to the machine, we leave them as we found them
#   status  exit 0 and print "rabbitmq: up" when the management API answers, else exit 1
#   reset   up, then vm_memory_high_watermark back to 0.4 (clears a memory alarm left by a test)
#   restore-watermark   only the latter (for a shell trap: `trap 'testcloud/rabbitmq.sh restore-watermark' EXIT`)
# Env: STACKTOP_RABBITMQ_MGMT_URL (default http://127.0.0.1:15672), STACKTOP_RABBITMQ_USER/PASSWORD (guest),
#      STACKTOP_RABBITMQ_WAIT (seconds, default 60).
set -euo pipefail
MGMT_URL="${STACKTOP_RABBITMQ_MGMT_URL:-http://127.0.0.1:15672}"
USER_="${STACKTOP_RABBITMQ_USER:-guest}"
PASS_="${STACKTOP_RABBITMQ_PASSWORD:-guest}"
WAIT="${STACKTOP_RABBITMQ_WAIT:-60}"

mgmt_ok() {
  curl -fsS -m 2 -o /dev/null -u "$USER_:$PASS_" "$MGMT_URL/api/overview" 2>/dev/null
}

amqp_ok() {
  # the AMQP port answers (bash /dev/tcp, no extra tools)
  (exec 3<>/dev/tcp/127.0.0.1/5672) 2>/dev/null
}

case "${1:-}" in
  up)
    if mgmt_ok; then
      echo "rabbitmq: up (management $MGMT_URL, already enabled)"
      exit 0
    fi
    if ! amqp_ok; then
      echo "rabbitmq: the machine's broker does not answer on 127.0.0.1:5672; it must be running" >&2
      exit 1
    fi
    rabbitmq-plugins enable rabbitmq_management >/dev/null
    deadline=$((SECONDS + WAIT))
    until mgmt_ok; do
      if [ "$SECONDS" -ge "$deadline" ]; then
        echo "rabbitmq: management API $MGMT_URL/api/overview did not answer within ${WAIT}s" >&2
        exit 1
      fi
      sleep 0.5
    done
    echo "rabbitmq: up (management $MGMT_URL, user $USER_)"
    ;;
  down)
    echo "rabbitmq: nothing to stop (the broker belongs to the machine)"
    ;;
  status)
    if mgmt_ok; then
      echo "rabbitmq: up (management $MGMT_URL)"
    elif amqp_ok; then
      echo "rabbitmq: broker up, management API down"; exit 1
    else
      echo "rabbitmq: down"; exit 1
    fi
    ;;
  reset)
    # the known state for tests: management up, no memory alarm left by a test (watermark back to 0.4)
    "$0" up
    rabbitmqctl -q set_vm_memory_high_watermark 0.4 >/dev/null
    echo "rabbitmq: vm_memory_high_watermark set to 0.4"
    ;;
  restore-watermark)
    # for a shell trap around a test run: undo a memory alarm a killed test could not restore
    rabbitmqctl -q set_vm_memory_high_watermark 0.4 >/dev/null
    ;;
  *)
    echo "usage: $0 up|down|status|reset|restore-watermark" >&2; exit 2
    ;;
esac
