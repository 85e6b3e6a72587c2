"""Register a region of the OVN profile in the test cloud's Keystone: the same public URLs as RegionOne for every
service, except `network`, which is the private ML2/OVN neutron-server (testcloud/ovn.sh), and the services given
as TYPE=URL (RegionOVNNova: compute and placement of testcloud/ovn_nova.sh). Idempotent: only what is missing or
different is written; RegionOne and its endpoints are never changed. Runs with the cloud's own venv
(openstacksdk).

usage: region.py REGION NETWORK_URL [TYPE=URL...]     (OS_CLIENT_CONFIG_FILE / OS_CLOUD: the admin cloud)
"""

from __future__ import annotations

import sys

import openstack


def main() -> int:
    region, network_url = sys.argv[1], sys.argv[2]
    override = dict(arg.split("=", 1) for arg in sys.argv[3:])
    override["network"] = network_url
    conn = openstack.connect()
    ident = conn.identity
    if ident.find_region(region) is None:
        ident.create_region(id=region, description="stacktop test bed: RegionOne with an ML2/OVN neutron "
                                                   "(testcloud/ovn.sh)")
    types = {s.id: s.type for s in ident.services()}
    wanted: dict[str, str] = {}
    for ep in ident.endpoints(interface="public", region_id="RegionOne"):
        wanted[ep.service_id] = override.get(types.get(ep.service_id, ""), ep.url)
    if "network" not in {types.get(s) for s in wanted}:
        print(f"{region}: RegionOne has no public network endpoint", file=sys.stderr)
        return 1
    have = {ep.service_id: ep for ep in ident.endpoints(interface="public", region_id=region)}
    for service_id, url in sorted(wanted.items()):
        ep = have.get(service_id)
        if ep is None:
            ident.create_endpoint(service_id=service_id, interface="public", region_id=region, url=url)
        elif ep.url != url:
            ident.update_endpoint(ep, url=url)
    print(f"{region}: {len(wanted)} public endpoints, " + ", ".join(f"{t} {u}" for t, u in sorted(override.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
