#!/usr/bin/env bash
# usage: gunicorn_svc.sh NAME PORT WSGIMODULE [ENV=VAL...]   one API under gunicorn (1 worker, 4 threads)
# Request limits: what deployments accept, not gunicorn's defaults (a 4,094-byte request line). kolla-ansible
# serves the APIs under uWSGI with `buffer-size = 65535` (ansible/roles/service-uwsgi-config/templates/
# uwsgi.ini.j2): 64 KB for the request line and headers. nova-api lists the ports of up to 150 servers in one
# `GET /v2.0/ports?device_id=...` (nova/network/security_group_api.py MAX_SEARCH_IDS), ~7 KB. gunicorn caps a
# finite request line at 8,190 bytes, so the line is unlimited (0: gunicorn's 1 MB ceiling) and a header
# field may take 65,535 bytes.
# run/SERVICE.launcher records this script's checksum: `up` restarts an API started under other settings.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
name=$1; port=$2; mod=$3; shift 3
launcher_sum > "$B/run/${TESTCLOUD_SERVICE:-$name}.launcher"  # (start_one.sh NAME)
exec env PYTHONPATH="$B/wsgi" "$@" "$V/gunicorn" -b "127.0.0.1:$port" -w 1 --threads 4 -k gthread \
  --limit-request-line 0 --limit-request-field_size 65535 \
  --no-control-socket --timeout 120 --access-logfile "$B/logs/$name-access.log" "$mod:application"
