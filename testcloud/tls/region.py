"""Register region RegionTLS in the test cloud's Keystone: one public https endpoint per public RegionOne
endpoint whose port HAProxy fronts (testcloud/tls.sh). Idempotent: only what is missing or different is
written; RegionOne and its endpoints are never changed. Runs with the cloud's own venv (openstacksdk).

usage: region.py REGION PLAIN_PORT=TLS_PORT...     (OS_CLIENT_CONFIG_FILE / OS_CLOUD: the admin cloud)
"""

from __future__ import annotations

import re
import sys

import openstack


def main() -> int:
    region, ports = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
    conn = openstack.connect()
    ident = conn.identity
    if ident.find_region(region) is None:
        ident.create_region(id=region, description="stacktop test bed: the APIs behind TLS (testcloud/tls.sh)")
    wanted: dict[str, str] = {}
    covered: set[str] = set()
    for ep in ident.endpoints(interface="public", region_id="RegionOne"):
        m = re.match(r"http://127\.0\.0\.1:(\d+)(.*)$", ep.url)
        if m and m.group(1) in ports:
            wanted[ep.service_id] = f"https://127.0.0.1:{ports[m.group(1)]}{m.group(2)}"
            covered.add(m.group(1))
    have = {ep.service_id: ep for ep in ident.endpoints(interface="public", region_id=region)}
    for service_id, url in sorted(wanted.items()):
        ep = have.get(service_id)
        if ep is None:
            ident.create_endpoint(service_id=service_id, interface="public", region_id=region, url=url)
        elif ep.url != url:
            ident.update_endpoint(ep, url=url)
    missing = sorted(set(ports) - covered)
    if missing:
        print(f"{region}: RegionOne has no public endpoint on port(s) {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"{region}: {len(wanted)} public https endpoints")
    return 0


if __name__ == "__main__":
    sys.exit(main())
