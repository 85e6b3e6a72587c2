#!/usr/bin/env bash
# usage: stop.sh [NAME...]   Stop the cloud's processes (all, or the NAMEs) by their recorded PID: SIGTERM to
# the process group each was started in (setsid), SIGKILL after a deadline (nova-compute ignores SIGTERM for
# >10 s). Nothing else is touched.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
DEADLINE="${STACKTOP_TESTCLOUD_STOP_DEADLINE:-10}"
names=("$@"); [ ${#names[@]} -gt 0 ] || names=("${SERVICES[@]}")
pids=()
for n in "${names[@]}"; do
  f="$B/run/$n.pid"
  if pid_alive "$n"; then
    p="$(cat "$f")"; pids+=("$p")
    kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
    log "TERM $n (pid $p)"
  fi
  rm -f "$f"
done
[ ${#pids[@]} -gt 0 ] || exit 0
end=$((SECONDS + DEADLINE))
while [ "$SECONDS" -lt "$end" ]; do
  alive=0; for p in "${pids[@]}"; do kill -0 -- "-$p" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && exit 0
  sleep 0.3
done
for p in "${pids[@]}"; do
  if kill -0 -- "-$p" 2>/dev/null; then kill -KILL -- "-$p" 2>/dev/null || true; log "KILL pid group $p"; fi
done
