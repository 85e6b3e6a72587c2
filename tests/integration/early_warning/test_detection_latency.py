"""Early warning on the real test cloud: how soon stacktop names the owner of a dead, hung or stopped service,
against how soon the cloud's own API says "down" (report_interval 5 s, service_down_time 20 s).

Each scenario runs the services and RabbitMQ collectors as the runner does, each polled every 5 s (the
intervals testcloud/stacktop.toml ships), RabbitMQ with amqp_url (a passive declare confirms consumers live),
and judges every poll with the per-source rules and the triage hints. A thread asks the API every 0.5 s for the
service's state. The fault is applied once both sources have two polls of history. Processes are held while
down (a parallel `testcloud up` leaves them) and restarted in `finally`.

The measured seconds are written to `detection-latency.json` in pytest's temporary folder and printed (`-s`);
README's "Detection latency" table gives one such run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.integration.services.conftest import make_collector, os_config
from tests.testbed import paths
from tests.testbed.openstack import (
    OpenStackCloud,
    held_by_others,
    kill_service,
    process_reported,
    service_pid,
    start_service,
    wait_all_healthy,
)
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import Thresholds
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.rules.triage import triage_hints, without_absorbed

pytestmark = pytest.mark.integration

POLL_S = 5.0  # testcloud/stacktop.toml: [openstack] and [rabbitmq] interval
GRACE_S = 5.0  # testcloud/stacktop.toml: [thresholds] consumer_lost_grace (the cloud's report_interval)
THRESHOLDS = Thresholds(service_down_time=20, agent_down_time=20, volume_service_down_time=20,
                        fleet_down_fraction=0.5, consumer_lost_grace=GRACE_S)
RESULTS: dict[str, dict[str, Any]] = {}


@dataclass
class Judged:
    t: float  # seconds since the fault
    findings: list[Finding]


@dataclass
class Watch:
    """The two sources polled as the runner polls them, every poll judged with the cross-source hints."""

    services: Any
    rabbit: RabbitMQCollector
    fault_at: float | None = None
    judged: list[Judged] = field(default_factory=list)
    obs: dict[str, Observation] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=lambda: {"services": 0, "rabbitmq": 0})
    rabbit_queues: list[Any] = field(default_factory=list)  # every queue of every RabbitMQ poll after the fault

    async def _source(self, name: str, collector: Any, stop: asyncio.Event) -> None:
        while not stop.is_set():
            start = time.monotonic()
            try:
                snap = await asyncio.wait_for(collector.collect(), timeout=30)
            except Exception:  # a failing poll counts as "not yet", as in the runner
                snap = None
            if snap is not None:
                findings = collector.findings(snap, datetime.now(UTC))
                now = time.time()
                self.obs[name] = Observation(source=name, snapshot=snap, error=None, ok_at=now, tried_at=now,
                                             findings=tuple(findings))
                self.polls[name] += 1
                every = [f for o in self.obs.values() for f in o.findings]
                every += triage_hints(self.obs)
                if self.fault_at is not None:
                    self.judged.append(Judged(time.monotonic() - self.fault_at, every))
                    if name == "rabbitmq":
                        self.rabbit_queues.extend(snap.queues)
            with_rest = POLL_S - (time.monotonic() - start)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=max(0.0, with_rest))

    def first(self, pred: Callable[[Finding], bool]) -> Judged | None:
        return next((j for j in self.judged if any(pred(f) for f in j.findings)), None)


class ApiWatch(threading.Thread):
    """When the API first says the process is down (seconds since the fault), asked every 0.5 s."""

    def __init__(self, conn: Any, name: str, fault_at: float) -> None:
        super().__init__(daemon=True)
        self.conn, self.name, self.fault_at = conn, name, fault_at
        self.down_after: float | None = None
        self.stop = threading.Event()

    def reported(self) -> bool | None:
        if self.name == "cinder-volume":
            rows = [r for r in self.conn.block_storage.services() if r.binary == "cinder-volume"]
            return bool(rows) and all(r.state == "up" for r in rows)
        return process_reported(self.conn, self.name)

    def run(self) -> None:
        while not self.stop.is_set() and self.down_after is None:
            try:
                if self.reported() is False:
                    self.down_after = time.monotonic() - self.fault_at
            except Exception:  # an API hiccup: ask again
                pass
            self.stop.wait(0.5)


@pytest.fixture
def watch(openstack_cloud: OpenStackCloud, conn: Any) -> Iterator[Watch]:
    if held_by_others():
        pytest.fail(f"another test holds {sorted(held_by_others())} down: run this module alone")
    wait_all_healthy(conn)
    services = make_collector(os_config(openstack_cloud.clouds_yaml, openstack_cloud.cloud), THRESHOLDS)
    rabbit = RabbitMQCollector("http://127.0.0.1:15672", "guest", "guest", vhosts=("openstack",),
                               amqp_url="amqp://127.0.0.1:5672/", interval=POLL_S, consumer_grace_s=GRACE_S)
    yield Watch(services, rabbit)


async def run_fault(watch: Watch, conn: Any, process: str, apply: Callable[[], None], *, seconds: float
                    ) -> ApiWatch:
    """Poll until both sources have history, apply the fault, then watch for `seconds`."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(watch._source("services", watch.services, stop)),
             asyncio.create_task(watch._source("rabbitmq", watch.rabbit, stop))]
    try:
        while min(watch.polls.values()) < 2:
            await asyncio.sleep(0.2)
        await asyncio.sleep(POLL_S * 0.4)  # not right after a poll: an ordinary moment in the cycle
        watch.fault_at = time.monotonic()
        await asyncio.to_thread(apply)
        api = ApiWatch(conn, process, watch.fault_at)
        api.start()
        await asyncio.sleep(seconds)
        api.stop.set()
        return api
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await watch.services.aclose()
        await watch.rabbit.aclose()


def shown(findings: list[Finding]) -> list[Finding]:
    """What the findings pane and snapshot show: the hints' absorbed findings left out."""
    hints = [f for f in findings if f.kind.startswith("triage.")]
    return without_absorbed([f for f in findings if not f.kind.startswith("triage.")], hints) + hints


def names(host: str, binary: str) -> Callable[[Finding], bool]:
    """A finding that names `binary` on `host` as the owner (any severity: the name is what the engineer needs)."""
    def pred(f: Finding) -> bool:
        ev = f.evidence
        about = (ev.get("host") == host and binary in (ev.get("service"), ev.get("binary")))
        return about and f.kind in ("rabbitmq.consumer_lost", "triage.service_lost", "nova.service_late",
                                    "nova.service_enabled_but_down", "nova.service_down", "triage.compute_down",
                                    "rabbitmq.queue_no_consumer")
    return pred


def record(fault: str, named: Judged | None, api: ApiWatch) -> None:
    record_cluster(fault, None if named is None else named.t, api.down_after)


def record_cluster(fault: str, named_s: float | None, cloud_s: float | None) -> None:
    """Keep one fault's figures (and write them all to $STACKTOP_LATENCY_OUT when set); `-s` prints them."""
    RESULTS[fault] = {"stacktop_named_s": None if named_s is None else round(named_s, 1),
                      "api_down_s": None if cloud_s is None else round(cloud_s, 1)}
    where = os.environ.get("STACKTOP_LATENCY_OUT")
    if where:
        path = Path(where)
        known = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**known, **RESULTS}, indent=2) + "\n")
    print(f"\n{fault}: {RESULTS[fault]}")


async def test_nova_compute_sigkill_is_named_within_10_s_before_nova_says_down(watch: Watch, conn: Any) -> None:
    try:
        api = await run_fault(watch, conn, "nova-compute-02", lambda: kill_service("nova-compute-02"), seconds=24)
    finally:
        start_service("nova-compute-02")
    named = watch.first(names("compute-02", "nova-compute"))
    record("nova-compute SIGKILL", named, api)
    assert named is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    assert named.t <= 10.0, named.t
    assert api.down_after is None or named.t < api.down_after
    lost = next(f for f in named.findings if names("compute-02", "nova-compute")(f))
    assert "compute-02" in lost.summary and "nova-compute" in lost.summary


async def test_scheduler_stopped_is_named_within_10_s(watch: Watch, conn: Any) -> None:
    try:
        api = await run_fault(watch, conn, "nova-scheduler",
                              lambda: kill_service("nova-scheduler", sig=signal.SIGTERM), seconds=24)
    finally:
        start_service("nova-scheduler")
    named = watch.first(lambda f: f.kind in ("rabbitmq.consumer_lost", "triage.service_lost")
                        and "nova-scheduler" in (f.evidence.get("service"), f.evidence.get("binary")))
    record("nova-scheduler stopped", named, api)
    assert named is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    assert named.t <= 10.0, named.t
    assert api.down_after is None or named.t < api.down_after


async def test_cinder_volume_killed_is_named_within_10_s(watch: Watch, conn: Any) -> None:
    try:
        api = await run_fault(watch, conn, "cinder-volume", lambda: kill_service("cinder-volume"), seconds=24)
    finally:
        start_service("cinder-volume")
    named = watch.first(lambda f: f.kind in ("rabbitmq.consumer_lost", "rabbitmq.consumers_lost",
                                             "triage.service_lost")
                        and "cinder-volume" in (f.evidence.get("service"), f.evidence.get("binary")))
    record("cinder-volume SIGKILL", named, api)
    assert named is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    assert named.t <= 10.0, named.t
    assert api.down_after is None or named.t < api.down_after


async def test_neutron_agent_killed_is_a_warning_before_neutron_says_dead(watch: Watch, conn: Any) -> None:
    """An L2 agent consumes only fanout queues (no queue names its host): its late heartbeat tells it first."""
    process = "neutron-agent-compute-02"
    try:
        api = await run_fault(watch, conn, process, lambda: kill_service(process), seconds=26)
    finally:
        start_service(process)
    late = watch.first(lambda f: f.kind in ("neutron.agent_late", "neutron.agent_down", "triage.service_lost")
                       and f.evidence.get("host") == "compute-02" and f.severity in ("warning", "critical"))
    record("neutron L2 agent SIGKILL", late, api)
    assert late is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    assert late.t <= 0.5 * 20 + 1.0 + POLL_S + 3.0, late.t  # half agent_down_time + slack, then a poll
    assert api.down_after is None or late.t < api.down_after


def _sigstop(process: str) -> None:
    pid = service_pid(process)
    assert pid is not None
    paths.hold_file(process).write_text(f"{os.getpid()}\n")
    os.killpg(pid, signal.SIGSTOP)


def _sigcont(process: str) -> None:
    pid = service_pid(process)
    if pid is not None:
        os.killpg(pid, signal.SIGCONT)
    paths.hold_file(process).unlink(missing_ok=True)


async def test_nova_compute_sigstop_is_a_warning_within_half_the_down_time_and_a_poll(watch: Watch,
                                                                                       conn: Any) -> None:
    try:
        api = await run_fault(watch, conn, "nova-compute-02", lambda: _sigstop("nova-compute-02"), seconds=22)
    finally:
        _sigcont("nova-compute-02")
    late = watch.first(lambda f: f.kind in ("nova.service_late", "triage.service_lost")
                       and f.evidence.get("host") == "compute-02" and f.severity in ("warning", "critical"))
    record("nova-compute SIGSTOP", late, api)
    assert late is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    # hung, not dead: its AMQP connection stays, so its queue keeps its consumer; the heartbeat is what stops
    # half the down time, then at most one poll interval until the next poll, and that poll's own read
    assert late.t <= 0.5 * 20 + POLL_S + 3.0, late.t
    hint = next((f for f in late.findings if f.kind == "triage.service_lost"), None)
    assert hint is not None and hint.evidence["consumer"] == "present" and "cannot report" in hint.summary


async def test_conductor_stopped_is_named_within_10_s(watch: Watch, conn: Any) -> None:
    try:
        api = await run_fault(watch, conn, "nova-conductor", lambda: kill_service("nova-conductor", sig=signal.SIGTERM),
                              seconds=26)
    finally:
        start_service("nova-conductor")
    named = watch.first(lambda f: f.kind in ("rabbitmq.consumer_lost", "triage.service_lost")
                        and "nova-conductor" in (f.evidence.get("service"), f.evidence.get("binary")))
    record("nova-conductor stopped", named, api)
    assert named is not None, [(f.kind, f.subject) for j in watch.judged for f in j.findings]
    assert named.t <= 10.0, named.t
    assert api.down_after is None or named.t < api.down_after
    # both signals, one finding: its queue lost its consumer and its heartbeat stopped
    merged = [(j, f) for j in watch.judged for f in shown(j.findings) if f.kind == "triage.service_lost"
              and f.evidence.get("binary") == "nova-conductor" and f.evidence.get("consumer") == "gone"
              and f.evidence.get("heartbeat") in ("late", "down")]
    assert merged, [(round(j.t, 1), f.kind, f.subject) for j in watch.judged for f in j.findings]
    judged, hint = merged[0]
    assert "the process died or lost the bus" in hint.summary and hint.severity == "critical"
    host = hint.evidence["host"]
    told_apart = [f.kind for f in shown(judged.findings) if f.evidence.get("host") == host
                  and f.kind in ("rabbitmq.consumer_lost", "nova.service_late")]
    assert told_apart == [], told_apart




def _drop_connections(process: str) -> int:
    """Close every broker connection of test-cloud process `process` through the management API (the test
    harness acts on its own broker; stacktop only reads): oslo.messaging reconnects and consumes again after its
    rabbit_retry_interval (1 s), with new connections, as a restarted process does, but within a second or two
    on any machine. Returns how many were closed."""
    pid = service_pid(process)
    assert pid is not None
    auth = httpx.BasicAuth("guest", "guest")
    listed = httpx.get("http://127.0.0.1:15672/api/vhosts/openstack/connections",
                       params={"columns": "name,client_properties.connection_name"}, auth=auth, timeout=10).json()
    mine = [c["name"] for c in listed
            if str(c.get("client_properties", {}).get("connection_name", "")).split(":")[1:2] == [str(pid)]]
    for name in mine:
        httpx.delete(f"http://127.0.0.1:15672/api/connections/{quote(name, safe='')}", auth=auth, timeout=10)
    return len(mine)


async def test_a_consumer_back_within_the_grace_gives_no_warning(watch: Watch, conn: Any) -> None:
    """nova-compute-02's broker connections dropped: its consumer is gone and back (new connections) within the
    grace, as after a quick restart. Nothing about compute-02 may be louder than info, and the return is seen."""
    dropped: list[int] = []
    await run_fault(watch, conn, "nova-compute-02", lambda: dropped.append(_drop_connections("nova-compute-02")),
                    seconds=20)
    assert dropped and dropped[0] >= 1
    about = names("compute-02", "nova-compute")
    loud = [(round(j.t, 1), f.kind, f.severity) for j in watch.judged for f in shown(j.findings)
            if about(f) and f.severity in ("warning", "critical")]
    lost_for = [float(f.evidence["lost_for_s"]) for j in watch.judged for f in j.findings
                if f.kind == "rabbitmq.consumer_lost" and f.evidence.get("host") == "compute-02"]
    if max(lost_for, default=0.0) >= GRACE_S:
        pytest.fail(f"nova-compute consumed again only after {max(lost_for):.1f} s (> the {GRACE_S:g} s grace): "
                    f"oslo.messaging's reconnect took longer than its retry interval; loud findings: {loud}")
    assert loud == [], loud
    rabbit = [j for j in watch.judged if any(f.kind == "rabbitmq.consumer_lost" for f in j.findings)]
    back = [q for q in watch.rabbit_queues if q.name == "compute.compute-02" and q.consumer_restarted_at]
    assert back, "the consumer's return (a new connection) was not seen"
    RESULTS["nova-compute reconnect"] = {"consumer_lost_seen_polls": len(rabbit), "warnings": 0}


async def test_two_computes_lost_together_are_one_grouped_finding(watch: Watch, conn: Any) -> None:
    """Both nova-computes killed and restarted together (a careless rolling restart): their lost consumers are
    one rabbitmq.consumers_lost naming both hosts, never one finding each."""
    def both() -> None:
        for name in ("nova-compute-01", "nova-compute-02"):
            kill_service(name)
        for name in ("nova-compute-01", "nova-compute-02"):
            start_service(name)

    try:
        await run_fault(watch, conn, "nova-compute-02", both, seconds=15)
    finally:
        for name in ("nova-compute-01", "nova-compute-02"):
            start_service(name)
    polls = [[f for f in j.findings if f.kind in ("rabbitmq.consumer_lost", "rabbitmq.consumers_lost")
              and "nova-compute" in str(f.evidence.get("service"))] for j in watch.judged]
    grouped = [p for p in polls if any(f.kind == "rabbitmq.consumers_lost" for f in p)]
    assert grouped, polls
    for p in grouped:
        (f,) = p
        assert f.evidence["hosts"] == ["compute-01", "compute-02"], f.evidence
