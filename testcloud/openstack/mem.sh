#!/usr/bin/env bash
# Memory of the test bed at rest: RSS and PSS (shared pages split between processes) of every OpenStack
# process group (recorded PID + its children), of the Galera nodes (mariadbd under the cache folder) and of
# the machine's RabbitMQ (beam.smp; not started by testcloud, shown for the total).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
kb() { awk -v k="$2:" '$1==k{print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
sum() { local r=0 p=0 q; for q in "$@"; do r=$((r + $(kb "$q" Rss))); p=$((p + $(kb "$q" Pss))); done; echo "$r $p"; }
trss=0; tpss=0
line() { printf '%-26s RSS %6d MiB  PSS %6d MiB\n' "$1" $(($2 / 1024)) $(($3 / 1024)); trss=$((trss + $2)); tpss=$((tpss + $3)); }
for n in "${SERVICES[@]}"; do
  if pid_alive "$n"; then
    p="$(cat "$B/run/$n.pid")"
    read -r r s < <(sum $(pgrep -g "$p" | tr '\n' ' '))
    line "$n" "$r" "$s"
  else printf '%-26s not running\n' "$n"; fi
done
os_rss=$trss; os_pss=$tpss
printf '%-26s RSS %6d MiB  PSS %6d MiB\n' "= OpenStack" $((os_rss / 1024)) $((os_pss / 1024))
gal=$(pgrep -f "mariadbd --defaults-file=$OS_HOME/galera" | tr '\n' ' ' || true)
if [ -n "$gal" ]; then read -r r s < <(sum $gal); line "galera ($(wc -w <<<"$gal") mariadbd)" "$r" "$s"; fi
rmq=$(pgrep -x beam.smp | tr '\n' ' ' || true)
if [ -n "$rmq" ]; then read -r r s < <(sum $rmq); line "rabbitmq (machine's)" "$r" "$s"; fi
printf '%-26s RSS %6d MiB  PSS %6d MiB\n' "= TOTAL" $((trss / 1024)) $((tpss / 1024))
