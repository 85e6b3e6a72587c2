"""Admin tasks on the stacktop test cloud, run with the cloud's own venv (openstacksdk 4.22).

usage: cloudctl.py ready [--timeout S] | check | reset [--timeout S] | delete-servers NAME_REGEX [--timeout S]

  ready           wait until every service is up (4 nova binaries, 2 hypervisors, 2 placement providers,
                  2 alive OVS agents, cinder scheduler + volume), then make sure flavors m1.tiny / x.huge,
                  image `tiny` and network `provider` exist. Exit 1 with what is missing at the deadline.
  check           one pass of the same checks, no waiting, no writes: exit 0 when all is healthy.
  reset           delete every server, volume, leftover allocation and compute port, re-enable services,
                  then `ready`.
  delete-servers  reset's server deletion for the servers whose name matches NAME_REGEX only (a test's own).

Env: OS_CLIENT_CONFIG_FILE (the generated clouds.yaml), STACKTOP_TESTCLOUD_CLOUD (default
stacktop-testcloud), TESTCLOUD_ROOT (the cloud's state folder),
TESTCLOUD_NOVA_MANAGE (nova-manage command line for discover_hosts).
"""

from __future__ import annotations

import datetime
import os
import shlex
import subprocess
import sys
import time

import openstack

CLOUD = os.environ.get("STACKTOP_TESTCLOUD_CLOUD", "stacktop-testcloud")
PLACEMENT_MV = {"OpenStack-API-Version": "placement 1.39"}
CINDER_BINARIES = {"cinder-scheduler", "cinder-volume"}
HOSTS = ("compute-01", "compute-02")


def log(msg: str) -> None:
    print(f"openstack: {msg}", flush=True)


def connect(timeout: float = 60.0) -> openstack.connection.Connection:
    deadline = time.monotonic() + timeout
    while True:
        try:
            conn = openstack.connect(cloud=CLOUD, compute_api_version="2.96")
            conn.authorize()
            return conn
        except Exception as exc:  # keystone not answering yet
            if time.monotonic() > deadline:
                raise SystemExit(f"openstack: cannot authenticate to keystone: {exc}") from exc
            time.sleep(1)


def held() -> set[str]:
    """Processes a running test holds down on purpose (TESTCLOUD_HELD, from testcloud/openstack.sh)."""
    return set(os.environ.get("TESTCLOUD_HELD", "").split())


def _epoch(ts: str | None) -> float:
    """An API timestamp (UTC, with or without 'Z' / microseconds) as epoch seconds; 0 when missing."""
    if not ts:
        return 0.0
    ts = ts.rstrip("Z").replace(" ", "T").split("+")[0]
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in ts else "%Y-%m-%dT%H:%M:%S"
    return datetime.datetime.strptime(ts, fmt).replace(tzinfo=datetime.UTC).timestamp()


def stale(conn: openstack.connection.Connection) -> list[str]:
    """Processes (re)started by this `up` (TESTCLOUD_STARTED) whose heartbeat is older than their start
    (TESTCLOUD_FRESH_SINCE): right after a restart the API still shows the dead process's last report."""
    started = set(os.environ.get("TESTCLOUD_STARTED", "").split())
    since = float(os.environ.get("TESTCLOUD_FRESH_SINCE", "0")) - 1
    if not started or since <= 0:
        return []
    out = []
    nova = {(s.binary, s.host): s for s in conn.compute.services()}
    for name in started:
        if name.startswith("nova-compute-"):
            svc = nova.get(("nova-compute", name.removeprefix("nova-")))
        elif name in ("nova-conductor", "nova-scheduler"):
            svc = next((s for (b, _h), s in nova.items() if b == name), None)
        else:
            svc = None
        if svc is not None and _epoch(svc.updated_at) < since:
            out.append(f"{name}: no heartbeat since its start")
    agents = {a.host: a for a in conn.network.agents() if a.agent_type == "Open vSwitch agent"}
    for host in HOSTS:
        a = agents.get(host)
        if f"neutron-agent-{host}" in started and a is not None and _epoch(a.last_heartbeat_at) < since:
            out.append(f"neutron-agent-{host}: no heartbeat since its start")
    return out


def problems(conn: openstack.connection.Connection) -> list[str]:
    """What keeps the cloud from being ready (empty list = healthy). What a test holds down is not required,
    nor what depends on it (nova-compute heartbeats go through nova-conductor)."""
    out: list[str] = []
    hold = held()
    try:
        services = list(conn.compute.services())
        for binary in ("nova-scheduler", "nova-conductor"):
            if binary not in hold and not any(s.binary == binary and s.state == "up" for s in services):
                out.append(f"{binary}: not up")
        if "nova-conductor" not in hold:
            for host in HOSTS:
                if f"nova-{host}" in hold:
                    continue
                # state only: a service a test disabled is still healthy (reset re-enables it)
                if not any(s.binary == "nova-compute" and s.host == host and s.state == "up" for s in services):
                    out.append(f"nova-compute on {host}: not up")
        hyps = list(conn.compute.hypervisors())
        if len(hyps) < 2:
            out.append(f"hypervisors: {len(hyps)}/2 (hosts not mapped to cell1 yet)")
        rps = list(conn.placement.resource_providers())
        if len(rps) < 2:
            out.append(f"placement providers: {len(rps)}/2")
        alive = {a.host for a in conn.network.agents() if a.agent_type == "Open vSwitch agent" and a.is_alive}
        want = {h for h in HOSTS if f"neutron-agent-{h}" not in hold}
        if not want <= alive:
            out.append(f"OVS agents alive: {sorted(alive)}")
        vol = {s.binary for s in conn.block_storage.services() if s.state == "up"}
        if not vol >= CINDER_BINARIES - hold:
            out.append(f"cinder services up: {sorted(vol)}")
        out.extend(stale(conn))
    except Exception as exc:
        out.append(f"API error: {type(exc).__name__}: {exc}")
    return out


def discover_hosts() -> None:
    cmd = os.environ.get("TESTCLOUD_NOVA_MANAGE")
    if cmd:
        subprocess.run([*shlex.split(cmd), "cell_v2", "discover_hosts"], capture_output=True, check=False)


def ensure_resources(conn: openstack.connection.Connection) -> None:
    root = os.environ.get("TESTCLOUD_ROOT", ".")
    if not conn.compute.find_flavor("m1.tiny"):
        conn.compute.create_flavor(name="m1.tiny", ram=512, vcpus=1, disk=1, id="1")
    if not conn.compute.find_flavor("x.huge"):
        # more disk than any fake host has (600000 GB): the scheduler answers "No valid host was found"
        conn.compute.create_flavor(name="x.huge", ram=512, vcpus=1, disk=10_000_000, id="99")
    img = conn.image.find_image("tiny")
    if img is None:
        path = os.path.join(root, "data", "tiny.img")
        with open(path, "wb") as fh:
            fh.write(b"\0" * 1024 * 1024)
        img = conn.create_image("tiny", filename=path, disk_format="raw", container_format="bare", wait=True,
                                is_public=True)
    net = conn.network.find_network("provider")
    if net is None:
        net = conn.network.create_network(name="provider", provider_network_type="flat",
                                          provider_physical_network="physnet1", is_shared=True)
    if not list(conn.network.subnets(network_id=net.id)):
        conn.network.create_subnet(network_id=net.id, name="provider-v4", ip_version=4, cidr="192.0.2.0/24",
                                   is_dhcp_enabled=False)


def ready(timeout: float) -> int:
    t0 = time.monotonic()
    conn = connect(timeout)
    last_discover = 0.0
    while True:
        missing = problems(conn)
        if not missing:
            break
        if any(m.startswith("hypervisors") for m in missing) and time.monotonic() - last_discover > 5:
            discover_hosts()
            last_discover = time.monotonic()
        if time.monotonic() - t0 > timeout:
            log(f"NOT READY after {timeout:.0f} s: " + "; ".join(missing))
            return 1
        time.sleep(1)
    ensure_resources(conn)
    note = f" (held down by a test, not required: {' '.join(sorted(held()))})" if held() else ""
    log(f"ready ({time.monotonic() - t0:.1f} s): 4 nova services up, 2 hypervisors, 2 providers, "
        f"2 OVS agents, cinder up; flavors m1.tiny x.huge, image tiny, network provider{note}")
    return 0


def check() -> int:
    try:
        conn = openstack.connect(cloud=CLOUD, compute_api_version="2.96")
        conn.authorize()
    except Exception as exc:
        log(f"keystone: {exc}")
        return 1
    missing = problems(conn)
    for m in missing:
        log(f"unhealthy: {m}")
    return 1 if missing else 0


def _wait(pred, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise SystemExit(f"openstack: reset: timed out waiting for {what}")
        time.sleep(0.5)


def delete_servers(conn: openstack.connection.Connection, timeout: float, name: str | None = None) -> int:
    """Delete every server of every project (name: only those whose name matches this regular expression,
    nova's `name` filter) and wait until the detailed listing shows none; return how many there were."""
    filters: dict[str, object] = {"all_projects": True}
    if name is not None:
        filters["name"] = name
    servers = list(conn.compute.servers(**filters))
    for srv in servers:
        # a server stuck with a task_state (e.g. resize_finish after a killed compute) refuses DELETE: put it in
        # ERROR with no task first (os-resetState); VERIFY_RESIZE is reverted (a delete would confirm it)
        try:
            if srv.status == "VERIFY_RESIZE":
                conn.compute.revert_server_resize(srv)
            elif srv.task_state:
                conn.compute.reset_server_state(srv, "error")
        except Exception as exc:
            log(f"reset: {srv.id} ({srv.status}/{srv.task_state}): {exc}")
    last_delete = 0.0
    sent: dict[str, float] = {}  # server id -> when its DELETE was last sent

    def servers_gone() -> bool:
        nonlocal last_delete
        left = list(conn.compute.servers(**filters))
        if left and time.monotonic() - last_delete > 5:
            last_delete = now = time.monotonic()
            for srv in left:
                # each DELETE casts one more terminate to the compute: a server already `deleting` is asked
                # again only after a minute (a delete lost with a restarted compute), not every 5 s
                if srv.task_state == "deleting" and now - sent.get(srv.id, 0.0) < 60:
                    continue
                try:
                    if srv.task_state and srv.task_state != "deleting":
                        conn.compute.reset_server_state(srv, "error")
                    conn.compute.delete_server(srv)
                    sent[srv.id] = now
                except Exception as exc:
                    log(f"reset: delete {srv.id} ({srv.status}/{srv.task_state}): {exc}")
        return not left

    _wait(servers_gone, timeout, "servers to be deleted")
    return len(servers)


def reset(timeout: float) -> int:
    t0 = time.monotonic()
    conn = connect(timeout)
    # services: re-enable and clear forced_down (a test may have disabled one)
    for s in conn.compute.services():
        if s.status != "enabled":
            conn.compute.enable_service(s, s.host, s.binary)
        if getattr(s, "is_forced_down", False):
            conn.compute.update_service_forced_down(s, s.host, s.binary, False)
    deleted = delete_servers(conn, timeout)
    vols = list(conn.block_storage.volumes(all_projects=True))
    for vol in vols:
        if vol.status not in ("available", "error"):
            conn.block_storage.reset_volume_status(vol, status="available", attach_status="detached",
                                                   migration_status=None)
        conn.block_storage.delete_volume(vol, force=True)
    _wait(lambda: not list(conn.block_storage.volumes(all_projects=True)), timeout, "volumes to be deleted")
    # allocations left on the providers with no server behind them (orphans, migrations of dead servers)
    consumers: set[str] = set()
    for rp in conn.placement.resource_providers():
        allocs = conn.placement.get(f"/resource_providers/{rp.id}/allocations", headers=PLACEMENT_MV).json()
        consumers.update(allocs["allocations"])
    for consumer in consumers:
        conn.placement.delete(f"/allocations/{consumer}", headers=PLACEMENT_MV)
    ports = [p for p in conn.network.ports() if (p.device_owner or "").startswith("compute:")]
    for port in ports:
        conn.network.delete_port(port)
    log(f"reset: deleted {deleted} servers, {len(vols)} volumes, {len(consumers)} leftover allocations, "
        f"{len(ports)} ports in {time.monotonic() - t0:.1f} s")
    return ready(timeout)


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    timeout = float(argv[argv.index("--timeout") + 1]) if "--timeout" in argv else 300.0
    cmd = argv[0]
    if cmd == "ready":
        return ready(timeout)
    if cmd == "check":
        return check()
    if cmd == "reset":
        return reset(timeout)
    if cmd == "delete-servers" and len(argv) > 1:
        t0 = time.monotonic()
        n = delete_servers(connect(timeout), timeout, name=argv[1])
        log(f"deleted {n} servers named like {argv[1]!r} in {time.monotonic() - t0:.1f} s")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
