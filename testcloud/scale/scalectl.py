"""The scale profile's API-side steps (testcloud/scale.sh), with the test cloud's venv (keystoneauth).

usage: scalectl.py --nova URL --placement URL ready [--count]
       scalectl.py --nova URL --placement URL boot --real N --errors E
       scalectl.py --nova URL --placement URL hold --count N --host HOST

  ready  exit 0 when the 4 nova-computes are up, their hypervisors mapped and their providers in placement
         (then flavors scale.nano and x.huge exist); 2 when the token's catalog lacks the region's endpoints.
         --count: print how many servers the cloud holds.
  boot   N servers through the API, multi-create: N - E ACTIVE on scale-01..03 (flavor scale.nano, no port),
         E in ERROR (flavor x.huge: no host has its disk); waits until none is building.
  hold   N servers named scale-held-* in task_state `spawning` on HOST (its driver sleeps a day); held servers
         no longer spawning (their compute restarted) are deleted first.
Env: OS_CLIENT_CONFIG_FILE / OS_CLOUD (the profile's clouds.yaml, region RegionScale).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import yaml
from keystoneauth1 import session
from keystoneauth1.identity import v3

HOSTS = ("scale-01", "scale-02", "scale-03", "scale-04")
BOOT_HOSTS = HOSTS[:3]
BATCH = 50
MV = {"OpenStack-API-Version": "compute 2.96", "X-OpenStack-Nova-API-Version": "2.96"}


def log(msg: str) -> None:
    print(f"[scalectl {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Api:
    def __init__(self, nova: str, placement: str) -> None:
        with open(os.environ["OS_CLIENT_CONFIG_FILE"]) as f:
            cfg = yaml.safe_load(f)["clouds"][os.environ["OS_CLOUD"]]
        self.region = cfg["region_name"]
        self.s = session.Session(auth=v3.Password(**cfg["auth"]), timeout=120)
        self.nova, self.placement = nova.rstrip("/"), placement.rstrip("/")

    def get(self, path: str, **kw: Any) -> Any:
        return self.s.get(f"{self.nova}{path}", headers=MV, **kw).json()

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.s.post(f"{self.nova}{path}", headers=MV, json=body)

    def catalog_ok(self) -> bool:
        catalog = self.s.auth.get_access(self.s).service_catalog
        try:
            urls = {t: (catalog.url_for(service_type=t, region_name=self.region, interface="public") or "").rstrip("/")
                    for t in ("compute", "placement")}
        except Exception:  # keystoneauth's EndpointNotFound
            return False
        return urls == {"compute": self.nova, "placement": self.placement}

    def flavor_id(self, name: str) -> str:
        for f in self.get("/flavors")["flavors"]:
            if f["name"] == name:
                return str(f["id"])
        raise LookupError(name)

    def ensure_flavors(self) -> None:
        have = {f["name"] for f in self.get("/flavors")["flavors"]}
        if "scale.nano" not in have:
            self.post("/flavors", {"flavor": {"name": "scale.nano", "vcpus": 1, "ram": 64, "disk": 0}})
        if "x.huge" not in have:  # more disk than any fake host has: "No valid host was found"
            self.post("/flavors", {"flavor": {"name": "x.huge", "vcpus": 1, "ram": 64, "disk": 10_000_000}})

    def image_id(self) -> str:
        glance = self.s.get_endpoint(service_type="image", region_name=self.region, interface="public")
        images = self.s.get(f"{glance.rstrip('/')}/v2/images?name=tiny").json()["images"]
        if not images:
            raise LookupError("image `tiny` (scripts/testcloud up openstack makes it)")
        return str(images[0]["id"])

    def servers(self, **params: Any) -> list[dict[str, Any]]:
        """Every page of the plain listing (no port lookups), all projects."""
        out: list[dict[str, Any]] = []
        q = {"all_tenants": 1, "limit": 1000, **params}
        while True:
            page = self.get("/servers/detail", params=q)["servers"]
            out.extend(page)
            if len(page) < q["limit"]:
                return out
            q["marker"] = page[-1]["id"]

    def create(self, name: str, flavor: str, count: int, host: str | None = None) -> None:
        body: dict[str, Any] = {"name": name, "flavorRef": flavor, "imageRef": self.image_id(), "networks": "none",
                                "min_count": count, "max_count": count}
        if host:
            body["availability_zone"] = f"nova:{host}"
        self.post("/servers", {"server": body})


def ready(api: Api, count: bool) -> int:
    if not api.catalog_ok():
        print(f"region {api.region}: no compute/placement endpoints of this profile")
        return 2
    svc = api.get("/os-services", params={"binary": "nova-compute"})["services"]
    hyp = api.get("/os-hypervisors")["hypervisors"]
    rps = api.s.get(f"{api.placement}/resource_providers",
                    headers={"OpenStack-API-Version": "placement 1.14"}).json()["resource_providers"]
    up = sorted(x["host"] for x in svc if x["state"] == "up")
    ok = (up == list(HOSTS) and sorted(h["hypervisor_hostname"] for h in hyp) == list(HOSTS)
          and sorted(r["name"] for r in rps) == list(HOSTS))
    if not ok:
        print(f"computes up {up}, hypervisors {[h['hypervisor_hostname'] for h in hyp]}, "
              f"providers {[r['name'] for r in rps]}")
        return 1
    api.ensure_flavors()
    if count:
        servers = api.servers()
        by: dict[str, int] = {}
        for s in servers:
            key = f"{s['status']}/{s.get('OS-EXT-STS:task_state') or '-'}"
            by[key] = by.get(key, 0) + 1
        print(f"{len(servers)} servers: " + ", ".join(f"{k} {v}" for k, v in sorted(by.items())))
    return 0


def wait_built(api: Api, what: str, timeout: float = 3600) -> None:
    t0 = time.monotonic()
    while True:
        building = [s for s in api.servers(status="BUILD") if not s["name"].startswith("scale-held")]
        if not building:
            return
        if time.monotonic() - t0 > timeout:
            raise SystemExit(f"{len(building)} servers still building after {timeout:.0f} s")
        log(f"{what}: {len(building)} building")
        time.sleep(5)


def boot(api: Api, real: int, errors: int) -> int:
    t0 = time.monotonic()
    nano, huge = api.flavor_id("scale.nano"), api.flavor_id("x.huge")
    have = len(api.servers())
    left = real - errors - have
    i = 0
    while left > 0:
        # one batch per host at a time: a nova-compute claims its builds one by one and each claim walks the
        # allocations of the builds still queued on its host (a batch of hundreds takes minutes)
        for host in BOOT_HOSTS:
            n = min(BATCH, left)
            if n <= 0:
                break
            api.create(f"scale-{host}-b{i}", nano, n, host)
            left -= n
        wait_built(api, f"round {i}")
        i += 1
    if errors and not any(s["status"] == "ERROR" for s in api.servers(status="ERROR")):
        api.create("scale-error", huge, errors)
        wait_built(api, "error servers")
    log(f"{len(api.servers())} real servers in {time.monotonic() - t0:.0f} s")
    return 0


def hold(api: Api, count: int, host: str) -> int:
    nano = api.flavor_id("scale.nano")
    held = api.servers(name="^scale-held-")
    spawning = [s for s in held if s.get("OS-EXT-STS:task_state") == "spawning"]
    for s in held:
        if s not in spawning and s["status"] != "BUILD":
            api.s.delete(f"{api.nova}/servers/{s['id']}", headers=MV)
    missing = count - len([s for s in held if s["status"] == "BUILD"])
    if missing > 0:
        api.create(f"scale-held-{int(time.time())}", nano, missing, host)
    t0 = time.monotonic()
    while True:
        now = [s for s in api.servers(name="^scale-held-") if s.get("OS-EXT-STS:task_state") == "spawning"]
        if len(now) >= count:
            log(f"{len(now)} servers held in spawning on {host}")
            return 0
        if time.monotonic() - t0 > 300:
            log(f"only {len(now)} of {count} held servers reached spawning")
            return 1
        time.sleep(3)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nova", required=True)
    p.add_argument("--placement", required=True)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ready")
    r.add_argument("--count", action="store_true")
    b = sub.add_parser("boot")
    b.add_argument("--real", type=int, required=True)
    b.add_argument("--errors", type=int, required=True)
    h = sub.add_parser("hold")
    h.add_argument("--count", type=int, required=True)
    h.add_argument("--host", required=True)
    a = p.parse_args(argv)
    api = Api(a.nova, a.placement)
    if a.cmd == "ready":
        return ready(api, a.count)
    if a.cmd == "boot":
        return boot(api, a.real, a.errors)
    return hold(api, a.count, a.host)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
