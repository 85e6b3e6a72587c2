"""Keystone catalog for the test cloud (run by setup.sh, idempotent): project `service`, the service users with
roles admin + service in it (password $SERVICE_PASSWORD, reset when they exist), services and endpoints."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cloudctl import connect, log


def keystone_setup() -> None:
    conn = connect()
    idn = conn.identity
    password = os.environ["SERVICE_PASSWORD"]
    dom = idn.find_domain("default")
    proj = idn.find_project("service", domain_id=dom.id) or idn.create_project(name="service", domain_id=dom.id)
    roles = {r.name: r for r in idn.roles()}
    if "service" not in roles:
        roles["service"] = idn.create_role(name="service")
    for name in ("placement", "nova", "glance", "neutron", "cinder"):
        user = idn.find_user(name, domain_id=dom.id)
        if user is None:
            user = idn.create_user(name=name, password=password, domain_id=dom.id)
        else:
            idn.update_user(user, password=password)
        for role in ("admin", "service"):
            idn.assign_project_role_to_user(proj, user, roles[role])
    for name, typ, url in [
        ("placement", "placement", "http://127.0.0.1:8778"),
        ("nova", "compute", "http://127.0.0.1:8774/v2.1"),
        ("glance", "image", "http://127.0.0.1:9292"),
        ("neutron", "network", "http://127.0.0.1:9696"),
        ("cinderv3", "volumev3", "http://127.0.0.1:8776/v3/%(project_id)s"),
    ]:
        svc = idn.find_service(name) or idn.create_service(name=name, type=typ)
        have = {e.interface for e in idn.endpoints(service_id=svc.id)}
        for itf in ("public", "internal", "admin"):
            if itf not in have:
                idn.create_endpoint(service_id=svc.id, interface=itf, url=url, region_id="RegionOne")
    log(f"keystone catalog: {sorted(s.name for s in idn.services())}")


if __name__ == "__main__":
    keystone_setup()
