#!/usr/bin/env bash
# usage: start_one.sh NAME CMD...   Start CMD in its own session (setsid), record its PID in run/NAME.pid.
# Does nothing if the recorded PID is alive and still ours (its command line names the cloud's folder).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
name=$1; shift
if pid_alive "$name"; then exit 0; fi
mkdir -p "$B/run" "$B/logs"
cd "$B"
# the environment of the messaging profile the cloud runs (common.sh profile_env; none for the default)
mapfile -t penv < <(profile_env "$(running_profile)" "$name")
setsid nohup env "${penv[@]}" TESTCLOUD_SERVICE="$name" "$@" >> "$B/logs/$name.out" 2>&1 < /dev/null 9>&- &
echo $! > "$B/run/$name.pid"
# for `up`: what was (re)started now must show a fresh heartbeat before the cloud counts as ready
[ -z "${TESTCLOUD_STARTED_FILE:-}" ] || echo "$name" >> "$TESTCLOUD_STARTED_FILE"
log "started $name (pid $!)"
