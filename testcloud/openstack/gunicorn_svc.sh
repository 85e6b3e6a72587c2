#!/usr/bin/env bash
# usage: gunicorn_svc.sh NAME PORT WSGIMODULE [ENV=VAL...]   one API under gunicorn (1 worker, 4 threads)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
name=$1; port=$2; mod=$3; shift 3
exec env PYTHONPATH="$B/wsgi" "$@" "$V/gunicorn" -b "127.0.0.1:$port" -w 1 --threads 4 -k gthread \
  --no-control-socket --timeout 120 --access-logfile "$B/logs/$name-access.log" "$mod:application"
