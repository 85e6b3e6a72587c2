"""OpenStack scenario helpers on the real test cloud (scripts/testcloud up openstack).

Each scenario is a context manager that undoes itself on exit, also when the test fails: servers are deleted,
killed services restarted (through testcloud/openstack/start.sh, the same start script) and waited up,
allocations and volumes removed. `conn` is an openstacksdk Connection (admin, compute microversion 2.96),
e.g. from the `openstack_cloud` fixture's connect().

Timers of the test cloud (lowered for tests): report_interval=5, service_down_time=20, agent_down_time=20,
so a killed nova-compute shows `state=down` ~20 s after the kill, and `up` ~10 s after its restart.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.testbed import paths
from tests.testbed.wait import wait_for

PLACEMENT_MV = {"OpenStack-API-Version": "placement 1.39"}
COMPUTE_MV = {"OpenStack-API-Version": "compute 2.96"}
HOSTS = ("compute-01", "compute-02")

# process name (testcloud/openstack/common.sh SERVICES) -> what the API shows for it
NOVA_PROCESSES = {
    "nova-compute-01": ("nova-compute", "compute-01"),
    "nova-compute-02": ("nova-compute", "compute-02"),
    "nova-conductor": ("nova-conductor", None),
    "nova-scheduler": ("nova-scheduler", None),
}
AGENT_PROCESSES = {"neutron-agent-compute-01": "compute-01", "neutron-agent-compute-02": "compute-02"}

Conn = Any  # openstack.connection.Connection (kept loose: the SDK's proxies are dynamic)


@dataclass(frozen=True)
class OpenStackCloud:
    """The test cloud, as the `openstack_cloud` fixture yields it."""

    clouds_yaml: Path
    cloud: str = "stacktop-testcloud"
    root: Path = field(default_factory=paths.openstack_root)
    reset_hook: Callable[[], object] | None = None

    def connect(self, compute_api_version: str = "2.96") -> Conn:
        """A fresh openstacksdk Connection (admin, project-scoped) to the test cloud."""
        import openstack.config
        import openstack.connection

        region = openstack.config.OpenStackConfig(config_files=[str(self.clouds_yaml)]).get_one(cloud=self.cloud)
        return openstack.connection.Connection(config=region, compute_api_version=compute_api_version)

    @property
    def env(self) -> dict[str, str]:
        """Environment for a subprocess (e.g. stacktop itself) to reach the cloud."""
        return {"OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), "OS_CLOUD": self.cloud}

    def reset(self) -> None:
        """No servers, volumes or leftover allocations; every service up (scripts/testcloud reset openstack)."""
        if self.reset_hook is not None:
            self.reset_hook()
        else:
            from tests.testbed.testcloud import testcloud

            testcloud("reset", "openstack")


# ------------------------------------------------------------------------------------------ processes
def service_pid(name: str) -> int | None:
    """PID recorded for a test-cloud process, if it is alive and ours (working directory = the cloud's)."""
    try:
        pid = int(paths.pid_file(name).read_text().strip())
        os.kill(pid, 0)
        if os.readlink(f"/proc/{pid}/cwd") != str(paths.openstack_root()):
            return None
    except (OSError, ValueError):
        return None
    return pid


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # zombies count as gone
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def kill_service(name: str, *, sig: int = signal.SIGKILL, deadline: float = 10.0) -> int:
    """Signal the process group of test-cloud process `name` (it was started with setsid); if it has not
    exited after `deadline` seconds, SIGKILL it. Returns the PID. Does NOT restart it: see service_killed().

    Until start_service(name), `name` is *held* (run/NAME.hold names this process): a `scripts/testcloud up`
    from another pytest session leaves it down instead of restarting it behind this test's back."""
    pid = service_pid(name)
    if pid is None:
        raise RuntimeError(f"test-cloud process {name} is not running (no live PID in {paths.pid_file(name)})")
    paths.hold_file(name).write_text(f"{os.getpid()}\n")
    os.killpg(pid, sig)
    end = time.monotonic() + deadline
    while _group_alive(pid) and time.monotonic() < end:
        time.sleep(0.2)
    if _group_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        wait_for(lambda: not _group_alive(pid), timeout=15, what=f"{name} (pid {pid}) to exit after SIGKILL")
    return pid


def stop_service(name: str, *, deadline: float = 10.0) -> int:
    """SIGTERM, then SIGKILL after `deadline` s (nova-compute ignores SIGTERM for >10 s)."""
    return kill_service(name, sig=signal.SIGTERM, deadline=deadline)


def start_service(name: str) -> None:
    """(Re)start test-cloud process `name` through testcloud/openstack/start.sh (no-op when it runs)."""
    script = paths.OPENSTACK_SCRIPTS / "start.sh"
    paths.hold_file(name).unlink(missing_ok=True)
    proc = subprocess.run([str(script), name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{script} {name} failed: {proc.stderr[-2000:]}")


def nova_service(conn: Conn, binary: str, host: str | None = None) -> Any:
    found = [s for s in conn.compute.services(binary=binary) if host is None or s.host == host]
    if not found:
        raise LookupError(f"no {binary} service{' on ' + host if host else ''}")
    return found[0]


def agent(conn: Conn, host: str) -> Any:
    return next(a for a in conn.network.agents(host=host) if a.agent_type == "Open vSwitch agent")


def process_reported(conn: Conn, name: str) -> bool | None:
    """What the API says of process `name`: True up/alive, False down, None (not reported by an API)."""
    if name in NOVA_PROCESSES:
        binary, host = NOVA_PROCESSES[name]
        return nova_service(conn, binary, host).state == "up"
    if name in AGENT_PROCESSES:
        return bool(agent(conn, AGENT_PROCESSES[name]).is_alive)
    return None


def held_by_others() -> set[str]:
    """Processes another live test process holds down on purpose (run/NAME.hold of another PID)."""
    out = set()
    for f in (paths.openstack_root() / "run").glob("*.hold"):
        try:
            pid = int(f.read_text().strip())
            if pid != os.getpid():
                os.kill(pid, 0)
                out.add(f.stem)
        except (OSError, ValueError):
            continue
    return out


def all_healthy(conn: Conn) -> bool:
    """Every nova service up (state; a disabled one counts) and both OVS agents alive, except what another
    test session holds down on purpose (and, if it holds nova-conductor, the computes that report through it)."""
    hold = held_by_others()
    nova = [s for s in conn.compute.services() if s.state == "up"]
    for binary in ("nova-scheduler", "nova-conductor"):
        if binary not in hold and not any(s.binary == binary for s in nova):
            return False
    if "nova-conductor" not in hold:
        for host in HOSTS:
            if f"nova-{host}" not in hold and not any(s.binary == "nova-compute" and s.host == host for s in nova):
                return False
    alive = {a.host for a in conn.network.agents() if a.agent_type == "Open vSwitch agent" and a.is_alive}
    return {h for h in HOSTS if f"neutron-agent-{h}" not in hold} <= alive


def wait_all_healthy(conn: Conn, timeout: float = 90.0) -> None:
    wait_for(lambda: all_healthy(conn), timeout=timeout, what="every nova service up and both agents alive")


@contextlib.contextmanager
def service_killed(conn: Conn, name: str, *, sig: int = signal.SIGKILL, wait_down: bool = True,
                   timeout: float = 90.0) -> Iterator[int]:
    """Kill test-cloud process `name` (nova-compute-01/02, nova-conductor, nova-scheduler,
    neutron-agent-compute-01/02, or any other of common.sh SERVICES) for the block; yields its old PID.
    wait_down: first wait until the API reports it down (~20 s with the lowered timers). On exit it is
    restarted through start.sh and the block waits until every service is up again."""
    pid = kill_service(name, sig=sig)
    try:
        if wait_down and name in {**NOVA_PROCESSES, **AGENT_PROCESSES}:
            wait_for(lambda: process_reported(conn, name) is False, timeout=timeout,
                     what=f"the API to report {name} down")
        yield pid
    finally:
        start_service(name)
        wait_all_healthy(conn, timeout)


# -------------------------------------------------------------------------------------------- servers
def _provider_network_id(conn: Conn, network: str) -> str:
    net = conn.network.find_network(network)
    if net is None:
        raise LookupError(f"network {network} not found")
    return net.id


def _poll(probe: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """Like wait_for, but an AssertionError from probe() fails at once (a state that cannot recover)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            found = probe()
        except AssertionError:
            raise
        except Exception:  # an API restarting
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def wait_server_status(conn: Conn, server_id: str, statuses: set[str], timeout: float = 120.0) -> Any:
    """Wait until the server's status is one of `statuses`. An unexpected ERROR fails at once, with its fault."""

    def probe() -> Any:
        s = conn.compute.get_server(server_id)
        if s.status in statuses:
            return s
        if s.status == "ERROR":
            raise AssertionError(f"server {server_id} went ERROR: {s.fault}")
        return None

    try:
        return _poll(probe, timeout, f"server {server_id} to be {'/'.join(sorted(statuses))}")
    except TimeoutError:
        s = conn.compute.get_server(server_id)
        raise TimeoutError(f"server {server_id} not in {sorted(statuses)} after {timeout:.0f} s: "
                           f"status={s.status} task_state={s.task_state} host={s.compute_host}") from None


def delete_server_and_wait(conn: Conn, server_id: str, timeout: float = 90.0) -> None:
    """DELETE the server until it is gone (a DELETE can fail while a compute service is restarting)."""
    last_delete = 0.0

    def gone() -> bool:
        nonlocal last_delete
        if conn.compute.find_server(server_id, all_projects=True) is None:
            return True
        if time.monotonic() - last_delete > 5:
            last_delete = time.monotonic()
            with contextlib.suppress(Exception):
                conn.compute.delete_server(server_id, ignore_missing=True)
        return False

    wait_for(gone, timeout=timeout, what=f"server {server_id} to be deleted")


def create_server(conn: Conn, *, host: str | None = None, name: str | None = None, flavor: str = "m1.tiny",
                  image: str = "tiny", network: str | None = None) -> Any:
    """POST a server (returns at once). host: 'compute-01' / 'compute-02' (admin AZ 'nova:<host>');
    network: None = no port ('none'), else a network name, e.g. 'provider' (port with a binding)."""
    from keystoneauth1.exceptions import ConnectFailure

    fl = conn.compute.find_flavor(flavor)
    img = conn.image.find_image(image)
    if fl is None or img is None:
        raise LookupError(f"flavor {flavor} or image {image} missing: run scripts/testcloud up openstack")
    name = name or f"stacktop-test-{secrets.token_hex(3)}"
    kwargs: dict[str, Any] = {
        "name": name,
        "flavor_id": fl.id,
        "image_id": img.id,
        "networks": [{"uuid": _provider_network_id(conn, network)}] if network else "none",
    }
    if host:
        kwargs["availability_zone"] = f"nova:{host}"
    try:
        return conn.compute.create_server(**kwargs)
    except ConnectFailure:
        # nova-api closed the connection without an answer (a kept-alive connection it had dropped, on a
        # loaded machine): the POST is not retried blindly, the server exists only if it got through
        time.sleep(2)
        found = conn.compute.find_server(name, ignore_missing=True)
        return found if found is not None else conn.compute.create_server(**kwargs)


@contextlib.contextmanager
def server_on(conn: Conn, host: str | None = "compute-01", *, wait: bool = True, timeout: float = 120.0,
              **kwargs: Any) -> Iterator[Any]:
    """Boot a server on `host` (compute-02 spawns slowly: STACKTOP_TESTCLOUD_SPAWN_DELAY), wait ACTIVE
    (unless wait=False: then yield the server as POSTed); delete it and wait until it is gone on exit."""
    srv = create_server(conn, host=host, **kwargs)
    try:
        yield wait_server_status(conn, srv.id, {"ACTIVE"}, timeout) if wait else srv
    finally:
        delete_server_and_wait(conn, srv.id)


@contextlib.contextmanager
def error_server(conn: Conn, *, flavor: str = "x.huge", timeout: float = 90.0,
                 name: str | None = None) -> Iterator[Any]:
    """Boot a server with a flavor no host can take (x.huge: more disk than any host): yields it in ERROR,
    with fault.message 'No valid host was found. ...'; deleted on exit."""
    srv = create_server(conn, flavor=flavor, name=name)
    try:
        yield wait_server_status(conn, srv.id, {"ERROR"}, timeout)
    finally:
        delete_server_and_wait(conn, srv.id)


# ------------------------------------------------------------------------------------------ placement
def provider(conn: Conn, name: str) -> Any:
    found = list(conn.placement.resource_providers(name=name))
    if not found:
        raise LookupError(f"no placement resource provider named {name}")
    return found[0]


def provider_allocations(conn: Conn, provider_id: str) -> dict[str, dict]:
    """consumer uuid -> {'resources': {...}} on one provider."""
    r = conn.placement.get(f"/resource_providers/{provider_id}/allocations", headers=PLACEMENT_MV)
    r.raise_for_status()
    return r.json()["allocations"]


@dataclass(frozen=True)
class Orphan:
    consumer: str
    provider_id: str
    provider_name: str
    resources: dict[str, int]


@contextlib.contextmanager
def orphan_allocation(conn: Conn, host: str = "compute-01", resources: dict[str, int] | None = None,
                      consumer_type: str = "INSTANCE") -> Iterator[Orphan]:
    """Write an allocation for a random consumer UUID (no server, no migration behind it) on `host`'s
    provider through the Placement API (microversion 1.39: consumer_type required); deleted on exit."""
    resources = resources or {"VCPU": 1, "MEMORY_MB": 128}
    rp = provider(conn, host)
    consumer = str(uuid.uuid4())
    body = {
        "allocations": {rp.id: {"resources": resources}},
        "project_id": conn.current_project_id,
        "user_id": conn.current_user_id,
        "consumer_generation": None,
        "consumer_type": consumer_type,
    }
    r = conn.placement.put(f"/allocations/{consumer}", json=body, headers=PLACEMENT_MV)
    if r.status_code != 204:
        raise RuntimeError(f"PUT /allocations/{consumer} -> {r.status_code} {r.text}")
    try:
        yield Orphan(consumer, rp.id, rp.name, dict(resources))
    finally:
        conn.placement.delete(f"/allocations/{consumer}", headers=PLACEMENT_MV)


# ---------------------------------------------------------------------------------- stuck migration
def migrations(conn: Conn, server_id: str) -> list[dict]:
    r = conn.compute.get(f"/os-migrations?instance_uuid={server_id}", headers=COMPUTE_MV)
    r.raise_for_status()
    return r.json()["migrations"]


@dataclass(frozen=True)
class HeldMigration:
    server: Any
    migration_uuid: str
    source_host: str
    dest_host: str
    source_provider_id: str


@contextlib.contextmanager
def migration_held_allocation(conn: Conn, source: str = "compute-01",
                              timeout: float = 120.0) -> Iterator[HeldMigration]:
    """Boot on `source`, cold-migrate (VERIFY_RESIZE on the other host), SIGKILL the source nova-compute,
    confirm the resize: the source provider keeps an allocation whose consumer is the *migration* UUID
    (status 'confirming'). On exit: restart the source compute (which clears it), delete the server."""
    proc = f"nova-{source}"
    held: str | None = None
    with server_on(conn, source, timeout=timeout) as srv:
        killed = False
        try:
            conn.compute.migrate_server(srv)

            def resized() -> Any:
                failed = [m for m in migrations(conn, srv.id) if m["status"] in ("error", "failed")]
                if failed:  # e.g. NoValidHost when the other compute is down: fail now, not at the timeout
                    raise AssertionError(f"cold migration of {srv.id} failed: {failed[0]['status']} "
                                         f"(is the other compute up? see nova-conductor.log)")
                s = conn.compute.get_server(srv.id)
                return s if s.status == "VERIFY_RESIZE" else None

            moved = _poll(resized, timeout, f"server {srv.id} to reach VERIFY_RESIZE")
            mig = next(m for m in migrations(conn, srv.id) if m["migration_type"] == "migration")
            held = mig["uuid"]
            rp = provider(conn, source)
            kill_service(proc)
            killed = True
            conn.compute.confirm_server_resize(srv)
            wait_for(lambda: any(m["uuid"] == held and m["status"] == "confirming" for m in migrations(conn, srv.id)),
                     timeout=30, what="the migration to be 'confirming'")
            wait_for(lambda: held in provider_allocations(conn, rp.id), timeout=30,
                     what=f"an allocation held by migration {held} on {source}")
            yield HeldMigration(moved, held, source, mig["dest_compute"], rp.id)
        finally:
            if killed:
                start_service(proc)
                wait_all_healthy(conn, timeout)
                # the restarted source handles the queued confirm: wait until it did (confirmed, or error),
                # so that deleting the server does not race it
                with contextlib.suppress(TimeoutError):
                    wait_for(lambda: all(m["status"] != "confirming" for m in migrations(conn, srv.id)),
                             timeout=60, what="the migration to leave 'confirming'")
    if held is not None:  # whatever the restarted compute did, leave no allocation held by that migration
        conn.placement.delete(f"/allocations/{held}", headers=PLACEMENT_MV)


# ---------------------------------------------------------------------------------------------- volumes
def wait_volume_status(conn: Conn, volume_id: str, status: str, timeout: float = 60.0) -> Any:
    return wait_for(lambda: (v := conn.block_storage.get_volume(volume_id)).status == status and v,
                    timeout=timeout, what=f"volume {volume_id} to be {status}")


@contextlib.contextmanager
def attached_volume(conn: Conn, server: Any, *, size: int = 1, timeout: float = 90.0,
                    name: str | None = None) -> Iterator[Any]:
    """Create a volume (fake cinder backend), attach it to `server`, yield it in-use; detach and delete on
    exit (skipping the detach when the server is already gone)."""
    vol = conn.block_storage.create_volume(size=size, name=name or f"stacktop-test-{secrets.token_hex(3)}")
    try:
        wait_volume_status(conn, vol.id, "available", timeout)
        conn.compute.create_volume_attachment(server, volume=vol)
        yield wait_volume_status(conn, vol.id, "in-use", timeout)
    finally:
        if conn.compute.find_server(server.id, all_projects=True) is not None:
            with contextlib.suppress(Exception):
                conn.compute.delete_volume_attachment(server, vol)
        with contextlib.suppress(Exception):
            wait_volume_status(conn, vol.id, "available", timeout)
        conn.block_storage.delete_volume(vol, ignore_missing=True)
        wait_for(lambda: conn.block_storage.find_volume(vol.id, ignore_missing=True) is None, timeout=timeout,
                 what=f"volume {vol.id} to be deleted")


class KillGuard:
    """Keeps a killed test-cloud process dead while a test waits: the cloud is shared, and another session's
    `scripts/testcloud up` restarts whatever is not running. A restart seen here is killed again (at most 3
    times; the timing restarts from that kill); service_killed() still restores it at the end."""

    def __init__(self, name: str, sig: int = signal.SIGKILL) -> None:
        self.name, self.sig = name, sig
        self.killed_at = time.monotonic()
        self.rekills = 0

    def check(self) -> bool:
        if service_pid(self.name) is not None:
            assert self.rekills < 3, f"{self.name} keeps being restarted by someone else"
            kill_service(self.name, sig=self.sig)
            self.killed_at = time.monotonic()
            self.rekills += 1
            print(f"\n[note] {self.name} was restarted by another session: stopped again")
        return False
