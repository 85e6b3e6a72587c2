"""Per-host log sources over a real sshd (testcloud/sshd.sh): nova-compute's log read as
`ssh -F <config> {host} tail -c ... <logs>/nova-{host}.log` on compute-01 and compute-02, which the profile's
ssh config sends to an OpenSSH server on 127.0.0.1; every other service read from its file. The logs are the
test cloud's real service logs (testcloud/README.md).

A build on compute-02 is traced end to end with nova-compute's lines read from "compute-02"; a stuck-build
finding about that build shows that build's lines; a host that never answers is one line within its timeout;
a host name with shell metacharacters runs nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.testbed.openstack import OpenStackCloud, create_server, delete_server_and_wait
from tests.testbed.sshd import HOSTS, SshTestbed
from tests.testbed.wait import wait_for
from tui.config import ConfigError, LogSource, load_config
from tui.exercises.hostlogs import finding_query, lines_that_matter, query_lines
from tui.exercises.live import create_events, grep_all, run_request_trace
from tui.models.finding import Finding

pytestmark = pytest.mark.integration


def compute_source(bed: SshTestbed, logs: Path, hosts: tuple[str, ...] = HOSTS, timeout: float = 20) -> LogSource:
    return LogSource("nova-compute", command=f"{bed.ssh()} {{host}} tail -c 20000000 {logs}/nova-{{host}}.log",
                     hosts=hosts, timeout=timeout)


@pytest.fixture(scope="module")
def sources(openstack_cloud: OpenStackCloud, ssh_hosts: SshTestbed) -> tuple[LogSource, ...]:
    logs = openstack_cloud.root / "logs"
    local = [LogSource(svc, path=str(logs / f"{stem}.log"), timeout=20) for stem, svc in (
        ("nova-api", "nova-api"), ("nova-scheduler", "nova-scheduler"), ("nova-conductor", "nova-conductor"),
        ("placement", "placement"), ("neutron-server", "neutron"))]
    return (*local, compute_source(ssh_hosts, logs))


STUCK_AT_ONCE = {state: 0.0 for state in ("default", "scheduling", "block_device_mapping", "networking",
                                            "spawning")}


def stuck_finding(client: Any, server_id: str) -> Finding | None:
    """stacktop's own instance.stuck rule on the server as read now, with every threshold at 0 s: the finding a
    build stuck in its current phase raises (None once it left every phase)."""
    from tui.collectors.instances import parse_server
    from tui.rules.stuck import instance_stuck, with_task_since

    server = with_task_since(parse_server(client.server(server_id)), None)
    if server.phase is None:
        return None
    # the request id of its latest action, as the instances collector gives a server needing attention
    actions = client.instance_actions(server_id)
    server = dataclasses.replace(server, request_id=(actions[0].get("request_id") if actions else None) or None)
    return instance_stuck(server, datetime.now(UTC) + timedelta(seconds=1), STUCK_AT_ONCE)


@pytest.fixture(scope="module")
def build(conn: Any, client: Any) -> Iterator[tuple[str, str, Finding]]:
    """(server id, create request id, the stuck-build finding stacktop's rule raised while nova-compute on
    compute-02 spawned it) of a server built on compute-02 (spawning takes 3 s there; deleted afterwards)."""
    srv = create_server(conn, host="compute-02")
    try:
        seen: list[Finding] = []

        def settled() -> bool:
            found = stuck_finding(client, srv.id)
            if found is not None and found.evidence.get("host") == "compute-02":
                seen.append(found)
            return conn.compute.get_server(srv.id).status in ("ACTIVE", "ERROR")

        wait_for(settled, timeout=180, interval=0.2, what=f"server {srv.id} ACTIVE")
        assert seen, "the build was never seen in a phase owned on compute-02"
        rid, _events = create_events(client, srv.id)
        assert rid, "nova recorded no create action"
        yield srv.id, rid, seen[-1]
    finally:
        delete_server_and_wait(conn, srv.id)


async def test_build_on_compute_02_traced_with_nova_computes_lines_from_compute_02(
        build: tuple[str, str, Finding], client: Any, sources: tuple[LogSource, ...],
        openstack_cloud: OpenStackCloud) -> None:
    server_id, rid, _finding = build
    log = openstack_cloud.root / "logs" / "nova-compute-02.log"
    wait_for(lambda: server_id in log.read_text(errors="replace"), timeout=30, what="the build in compute-02's log")
    rt = await run_request_trace(client, rid, sources)
    assert not rt.errors, rt.errors
    assert rt.instance_id == server_id
    rows = {r.service: r for r in rt.timeline()}
    assert {"nova-api", "nova-conductor", "nova-compute"} <= set(rows), sorted(rows)
    compute_hits = [h for h in rt.relevant_hits() if h.slot == "nova-compute"]
    assert compute_hits and all(h.source.startswith("compute-02: ssh -F ") for h in compute_hits), \
        {h.source for h in compute_hits}
    assert any(server_id in h.line for h in compute_hits)
    # both hosts were read (compute-01's log has no line of this build)
    assert any(src.startswith("compute-01: ") for src in rt.searched)
    assert rows["nova-api"].first <= rows["nova-compute"].first


def test_a_stuck_build_finding_shows_the_lines_of_that_build(
        build: tuple[str, str, Finding], sources: tuple[LogSource, ...]) -> None:
    server_id, rid, finding = build
    assert (finding.kind, finding.subject, finding.evidence["request_id"]) == ("instance.stuck", server_id, rid)
    query = finding_query(finding)
    assert (query.owner, query.host) == ("nova-compute", "compute-02")
    blocks = query_lines(sources, query)
    assert [(b.service, b.host) for b in blocks] == [("nova-compute", "compute-02")], blocks
    block = blocks[0]
    assert block.error is None and block.lines and block.chosen_by == "request id"
    assert all(rid in ln for ln in block.lines), block.lines
    assert any(f"[instance: {server_id}]" in ln for ln in block.lines), block.lines


@contextlib.contextmanager
def silent_listener() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (ssh waits for a banner that never comes)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError, OSError):
                held.append(sock.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for c in held:
            c.close()
        sock.close()


def test_an_unreachable_host_is_one_line_within_its_timeout(ssh_hosts: SshTestbed, tmp_path: Path,
                                                            openstack_cloud: OpenStackCloud) -> None:
    logs = openstack_cloud.root / "logs"
    with silent_listener() as port:
        config = tmp_path / "ssh_config"
        base = ssh_hosts.config.read_text()
        config.write_text(base + f"\nHost compute-03\n  HostName 127.0.0.1\n  Port {port}\n  BatchMode yes\n"
                          "  ConnectTimeout 120\n")
        src = LogSource("nova-compute", command=f"ssh -F {config} {{host}} tail -c 20000000 {logs}/nova-{{host}}.log",
                        hosts=("compute-03", "compute-02"), timeout=3)
        t0 = time.monotonic()
        blocks = lines_that_matter([src], "nova-compute", None, ["req-00000000-0000-0000-0000-000000000000"], None)
        took = time.monotonic() - t0
    # the hung host is killed at its 3 s timeout (ssh itself would wait 120 s): < 30 s holds on a loaded box
    assert took < 30, took
    by_host = {b.host: b for b in blocks}
    assert set(by_host) == {"compute-03", "compute-02"}
    hung = by_host["compute-03"]
    assert hung.error is not None and "timed out after 3 s" in hung.error and "\n" not in hung.error
    assert hung.lines == []
    assert by_host["compute-02"].error is None, by_host["compute-02"].error  # the other host was read


def test_a_refused_host_is_one_line(ssh_hosts: SshTestbed, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = tmp_path / "ssh_config"
    config.write_text(ssh_hosts.config.read_text() + f"\nHost compute-09\n  HostName 127.0.0.1\n  Port {port}\n")
    src = LogSource("nova-compute", command=f"ssh -F {config} {{host}} true", hosts=("compute-09",), timeout=20)
    [(target, lines, err)] = grep_all([src], ["anything"])
    assert target.host == "compute-09" and lines == []
    assert err is not None and "exited 255" in err and "Connection refused" in err and "\n" not in err


HOSTILE = ("compute-01;touch${IFS}{marker}", "compute-01$(touch {marker})", "compute-01`touch {marker}`",
           "-oProxyCommand=touch {marker}", "compute-01 && touch {marker}", "compute-01|touch {marker}")


def test_a_host_name_with_shell_metacharacters_runs_nothing(ssh_hosts: SshTestbed, tmp_path: Path,
                                                            openstack_cloud: OpenStackCloud) -> None:
    marker = tmp_path / "ran"
    hostile = tuple(h.replace("{marker}", str(marker)) for h in HOSTILE)
    logs = openstack_cloud.root / "logs"
    # over ssh (whose remote side is a shell), and through a local shell template
    sources = [LogSource("nova-compute", command=f"{ssh_hosts.ssh()} {{host}} cat {logs}/nova-{{host}}.log",
                         hosts=hostile, timeout=10),
               LogSource("nova-compute", command="sh -c 'echo {host}'", hosts=hostile, timeout=10)]
    answers = grep_all(sources, ["compute"])
    assert len(answers) == 2 * len(hostile)
    for target, lines, err in answers:
        assert target.argv is None and lines == [], target
        assert err is not None and "is not a plain name" in err, err
    time.sleep(0.5)
    assert not marker.exists(), "a host name ran a command"
    # the config file refuses them too, with one line naming the key
    for host in hostile:
        cfg = tmp_path / "stacktop.toml"
        cfg.write_text('[[recorder.log_sources]]\nservice = "nova-compute"\n'
                       f'command = "ssh {{host}} docker logs nova_compute"\nhosts = [{_toml(host)}]\n')
        with pytest.raises(ConfigError) as info:
            load_config(str(cfg), env={})
        assert "recorder.log_sources[0].hosts" in str(info.value) and "not a plain name" in str(info.value)
    assert not marker.exists()


def _toml(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_the_same_template_reads_each_host_as_one_argument(ssh_hosts: SshTestbed,
                                                           openstack_cloud: OpenStackCloud) -> None:
    """compute-01 and compute-02 are read in parallel, each from its own file through ssh."""
    logs = openstack_cloud.root / "logs"
    answers = grep_all([compute_source(ssh_hosts, logs)], ["nova.compute"])
    assert [t.host for t, _l, _e in answers] == ["compute-01", "compute-02"]
    for target, _lines, err in answers:
        assert err is None, err
        assert target.argv is not None and target.argv[3] == target.host
        assert target.argv[-1] == f"{logs}/nova-{target.host}.log"
