"""A small simulated cloud with every collector pointed at it, faults injectable, and the helpers the
reliability tests share: which parts of which source are degraded, and whether a reason is readable."""

from __future__ import annotations

import asyncio
import math
import re
from dataclasses import dataclass, field, replace
from typing import Any

from tui.collectors.galera import GaleraCollector
from tui.collectors.instances import InstancesCollector
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.collectors.services import ServicesCollector
from tui.config import Config
from tui.models.observation import Observation
from tui.openstack.client import OpenStackClient, connect
from tui.openstack.triage import TriageClient, triage_client
from tui.runner import CollectorRunner
from tui.sim.faults import Faults, FaultyGaleraConnector

OPENSTACK_TIMEOUT = 2.5  # services: 1 s per endpoint check and per listing; instances: the whole poll
RABBITMQ_TIMEOUT = 1.5
GALERA_TIMEOUT = 2.0

# which parts a fault on a source may degrade (its own), and which one it must degrade (None: on demand only)
OWN_PARTS = {
    "keystone": ({"keystone", "endpoint:identity"}, "keystone"),
    "nova": ({"nova", "instances", "endpoint:compute"}, "nova"),
    "neutron": ({"neutron", "endpoint:network"}, "neutron"),
    "cinder": ({"cinder", "endpoint:block-storage"}, "cinder"),
    "placement": ({"endpoint:placement"}, None),
    "rabbitmq": ({"rabbitmq"}, "rabbitmq"),
}


@dataclass
class World:
    demo: Any
    faults: Faults
    galera_faults: FaultyGaleraConnector
    config: Config
    client_kind: str = "sdk"  # "sdk": openstacksdk's client; "light": the dashboard's (tui.openstack.light)
    client: OpenStackClient | TriageClient | None = None
    collectors: dict[str, Any] = field(default_factory=dict)
    runners: dict[str, CollectorRunner] = field(default_factory=dict)

    def build(self) -> None:
        cfg = self.config
        client: Any
        if self.client_kind == "light":  # what the dashboard reads through, steady state included
            client = triage_client(cfg.openstack, handover_after_s=math.inf)
            assert client is not None and client.backend == "light", "the simulator's cloud is a light one"
        else:
            client = connect(cfg.openstack)
        self.client = client
        self.collectors = {
            "services": ServicesCollector(cfg.openstack, cfg.thresholds, client_factory=lambda: client),
            "instances": InstancesCollector(cfg.openstack, client_factory=lambda: client),
            "rabbitmq": RabbitMQCollector.from_config(cfg.rabbitmq),
            "galera": GaleraCollector(cfg.galera.nodes, cfg.galera.user, cfg.galera.password.value,
                                      timeout=cfg.galera.timeout, connector=self.galera_faults,
                                      max_backoff_s=0.01),
        }
        self.runners = {name: CollectorRunner(c) for name, c in self.collectors.items()}

    def fresh_runners(self) -> None:
        """New runners (their locks belong to the test's event loop); collectors and client are kept."""
        self.runners = {name: CollectorRunner(c) for name, c in self.collectors.items()}

    async def end_test(self) -> None:
        """The httpx client belongs to this test's event loop: drop it (the next test opens its own)."""
        await self.collectors["rabbitmq"].aclose()

    async def poll(self) -> dict[str, Observation]:
        obs = await asyncio.gather(*(r.run_once() for r in self.runners.values()))
        return {o.source: o for o in obs}

    async def close(self) -> None:
        for c in self.collectors.values():
            await c.aclose()
        if self.client is not None:
            self.client.close()


def make_config(demo: Any, *, slow: float = 1.0) -> Config:
    """Short timeouts (x slow: the UI tests need a hang to outlast a keypress on a loaded machine)."""
    cfg = demo.config()
    return replace(cfg, openstack=replace(cfg.openstack, timeout=OPENSTACK_TIMEOUT * slow, interval=1.0),
                   rabbitmq=replace(cfg.rabbitmq, timeout=RABBITMQ_TIMEOUT * slow, interval=1.0),
                   galera=replace(cfg.galera, timeout=GALERA_TIMEOUT * slow, interval=1.0))


def degraded(obs: dict[str, Observation]) -> dict[str, str]:
    """part -> reason, for every part of every source that is not fresh and fine."""
    out: dict[str, str] = {}
    svc = obs["services"]
    if svc.error:
        out["services"] = svc.error
    snap = svc.snapshot
    if snap is not None:
        if not snap.keystone.ok:
            out["keystone"] = snap.keystone.error or "(no reason)"
        elif snap.keystone.late:  # one late answer: a warning, still not fine
            out["keystone"] = snap.keystone.late
        for part, section in (("nova", snap.compute), ("neutron", snap.network), ("cinder", snap.volume)):
            if section.error:
                out[part] = section.error
        for check in snap.catalog:
            if not check.ok or check.late:
                out[f"endpoint:{check.service_type}"] = check.error or f"answered {check.status}"
    if obs["instances"].error:
        out["instances"] = obs["instances"].error
    if obs["rabbitmq"].error:
        out["rabbitmq"] = obs["rabbitmq"].error
    gal = obs["galera"]
    if gal.error:
        out["galera"] = gal.error
    if gal.snapshot is not None:
        for node in gal.snapshot.nodes:
            if node.error:
                out[f"galera:{node.address}"] = node.error
    return out


_BAD = re.compile(r"Traceback|File \"|object at 0x|^\w+Error: \S+$|^\w+(Error|Exception)$|^None$")


def assert_readable(reason: str, *, names: tuple[str, ...] = ()) -> None:
    """One line a human can act on: no traceback, no repr, not a bare exception name; names what failed."""
    assert reason and reason.strip() == reason, f"empty or padded reason: {reason!r}"
    assert "\n" not in reason, f"more than one line: {reason!r}"
    assert len(reason) < 500, f"too long for a pane border: {reason!r}"
    assert not _BAD.search(reason), f"not a readable reason: {reason!r}"
    if names:
        assert any(n in reason for n in names), f"the reason names none of {names}: {reason!r}"
