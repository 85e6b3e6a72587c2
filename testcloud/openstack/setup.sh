#!/usr/bin/env bash
# Render the cloud's config into $STACKTOP_TESTCLOUD_HOME/openstack and, once, initialise it: RabbitMQ vhost
# `openstack`, databases stacktop_os_* on the machine's MariaDB (root over the socket), schema syncs, keystone
# bootstrap, service users and catalog. The heavy part is skipped when its stamp matches and the databases
# and vhost are still there. A cache without a stamp (first run, or the cache was wiped) starts from empty
# databases, so the cloud's state always matches its cache (fernet keys, compute node identities, passwords).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$HERE/common.sh"
SOCK="${STACKTOP_MYSQL_SOCKET:-/run/mysqld/mysqld.sock}"
DBS=(keystone placement nova_api nova_cell0 nova glance neutron cinder)

# secrets: generated once per cache, never in the repo
SECRETS="$B/secrets.env"
if [ ! -f "$SECRETS" ]; then
  rm -f "$B/setup.stamp"
  ( umask 077
    echo "ADMIN_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' 'xy')"
    echo "SERVICE_PASSWORD=$(head -c 18 /dev/urandom | base64 | tr '+/' 'xy')" ) > "$SECRETS"
fi
# shellcheck disable=SC1090
source "$SECRETS"

# render etc/, wsgi/, pylib/ (placeholders @ROOT@, @MYSQL_SOCKET@, @SERVICE_PASSWORD@)
mkdir -p "$B"/{logs,run,locks,data/glance,data/nova,data/nova-compute-01,data/nova-compute-02,data/cinder} \
         "$B/etc/keystone/fernet-keys" "$B/etc/keystone/credential-keys"
( cd "$HERE" && find etc wsgi pylib -type f ! -name '*.pyc' ! -path '*__pycache__*' ) | while read -r f; do
  mkdir -p "$B/$(dirname "$f")"
  tmp="$B/$f.tmp"
  ( umask 077; sed -e "s#@ROOT@#$B#g" -e "s#@MYSQL_SOCKET@#$SOCK#g" -e "s#@SERVICE_PASSWORD@#$SERVICE_PASSWORD#g" \
      "$HERE/$f" > "$tmp" )
  if cmp -s "$tmp" "$B/$f"; then rm -f "$tmp"; else mv "$tmp" "$B/$f"; fi
done
# the api-paste files ship in the installed packages
for f in nova/api-paste.ini neutron/api-paste.ini cinder/api-paste.ini cinder/resource_filters.json \
         glance/glance-api-paste.ini; do
  cmp -s "$VENV/etc/$f" "$B/etc/$f" || cp "$VENV/etc/$f" "$B/etc/$f"
done
# clouds.yaml for the harness and for stacktop (admin, project-scoped)
( umask 077; cat > "$CLOUDS_YAML.tmp" <<YAML
# written by testcloud/openstack/setup.sh: the stacktop test cloud on 127.0.0.1 (admin, project-scoped)
clouds:
  $CLOUD_NAME:
    auth:
      auth_url: http://127.0.0.1:5000/v3
      username: admin
      password: "$ADMIN_PASSWORD"
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
    interface: public
YAML
)
mv "$CLOUDS_YAML.tmp" "$CLOUDS_YAML"

want="$( { cat "$HERE/setup.sh" "$HERE/py/setup_keystone.py"; (cd "$HERE" && find etc -type f | LC_ALL=C sort | xargs cat); } \
         | sha256sum | cut -d' ' -f1)"
have_dbs="$("${MYSQL[@]}" -N -e "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name LIKE '${DB_PREFIX//_/\\_}%'")"
if [ -f "$B/setup.stamp" ] && [ "$(cat "$B/setup.stamp")" = "$want" ] && [ "$have_dbs" = "${#DBS[@]}" ] \
   && grep -qx openstack <<<"$(rabbitmqctl -q list_vhosts 2>/dev/null)"; then
  log "setup already done (stamp matches, databases and vhost present)"
  exit 0
fi
t0=$SECONDS
log "setting up: vhost, databases, schema syncs, keystone catalog (about a minute; log: $B/logs/setup.log)"
heavy() {
if [ ! -f "$B/setup.stamp" ]; then
  log "fresh cache: (re)creating the databases ${DB_PREFIX}* and the RabbitMQ vhost openstack"
  for d in "${DBS[@]}"; do "${MYSQL[@]}" -e "DROP DATABASE IF EXISTS ${DB_PREFIX}$d"; done
  rabbitmqctl -q delete_vhost openstack >/dev/null 2>&1 || true
  rm -rf "$B/etc/keystone/fernet-keys/"* "$B/etc/keystone/credential-keys/"* "$B"/data/nova*/* "$B/data/glance/"*
fi
rabbitmqctl -q add_vhost openstack >/dev/null 2>&1 || true
rabbitmqctl -q set_permissions -p openstack guest '.*' '.*' '.*' >/dev/null
for d in "${DBS[@]}"; do "${MYSQL[@]}" -e "CREATE DATABASE IF NOT EXISTS ${DB_PREFIX}$d CHARACTER SET utf8mb4"; done
KS=(--config-file "$B/etc/keystone/keystone.conf")
"$V/keystone-manage" "${KS[@]}" db_sync
[ -f "$B/etc/keystone/fernet-keys/0" ] || "$V/keystone-manage" "${KS[@]}" fernet_setup --keystone-user root --keystone-group root
[ -f "$B/etc/keystone/credential-keys/0" ] || "$V/keystone-manage" "${KS[@]}" credential_setup --keystone-user root --keystone-group root
"$V/keystone-manage" "${KS[@]}" bootstrap --bootstrap-password "$ADMIN_PASSWORD" --bootstrap-region-id RegionOne \
  --bootstrap-admin-url http://127.0.0.1:5000/v3/ --bootstrap-internal-url http://127.0.0.1:5000/v3/ \
  --bootstrap-public-url http://127.0.0.1:5000/v3/
"$V/placement-manage" --config-file "$B/etc/placement/placement.conf" db sync
"$V/glance-manage" --config-file "$B/etc/glance/glance-api.conf" db_sync
NM=("$V/nova-manage" --config-file "$B/etc/nova/nova.conf")
"${NM[@]}" api_db sync
"${NM[@]}" cell_v2 map_cell0 \
  --database_connection "mysql+pymysql://root@/${DB_PREFIX}nova_cell0?unix_socket=$SOCK&charset=utf8"
cells="$("${NM[@]}" cell_v2 list_cells 2>/dev/null)"   # (not piped into grep -q: pipefail + SIGPIPE)
grep -q ' cell1 ' <<<"$cells" || "${NM[@]}" cell_v2 create_cell --name cell1
# cell1's transport URL as nova's template: each process fills it from its own [DEFAULT] transport_url, so the
# conductor casts to the vhost of the messaging profile the cloud runs (common.sh), not a fixed one
cell1="$("${NM[@]}" cell_v2 list_cells 2>/dev/null | awk -F'|' '$2 ~ / cell1 / {gsub(/ /, "", $3); print $3}')"
"${NM[@]}" cell_v2 update_cell --cell_uuid "$cell1" \
  --transport-url 'rabbit://{username}:{password}@{hostname}:{port}/{path}'
"${NM[@]}" db sync
"$V/neutron-db-manage" --config-file "$B/etc/neutron/neutron.conf" --config-file "$B/etc/neutron/ml2_conf.ini" upgrade heads
"$V/cinder-manage" --config-file "$B/etc/cinder/cinder.conf" db sync
# keystone must answer for the catalog
"$HERE/start.sh" keystone
deadline=$((SECONDS + 90))
until http_ok http://127.0.0.1:5000/v3; do
  [ "$SECONDS" -lt "$deadline" ] || { log "keystone did not answer (see $B/logs/keystone*)" >&2; exit 1; }
  sleep 0.5
done
OS_CLIENT_CONFIG_FILE="$CLOUDS_YAML" SERVICE_PASSWORD="$SERVICE_PASSWORD" \
  "$V/python" "$HERE/py/setup_keystone.py"
}
set +e
( set -e; heavy ) > "$B/logs/setup.log" 2>&1
rc=$?
set -e
if [ $rc != 0 ]; then tail -n 40 "$B/logs/setup.log" >&2; log "setup FAILED (full log: $B/logs/setup.log)" >&2; exit 1; fi
echo "$want" > "$B/setup.stamp"
log "setup done in $((SECONDS - t0)) s"
