"""Start the simulated cloud: engine + one HTTP listener per service + a clouds.yaml + a Config for it."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import threading
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from tui.config import CloudConfig, Config, GaleraConfig, OpenStackConfig, RabbitMQConfig, Secret, Thresholds
from tui.rules.task_states import DEFAULT_STUCK_SECONDS
from tui.sim import api_keystone, api_misc, api_nova, api_rabbit, story
from tui.sim.clock import SimClock
from tui.sim.engine import Engine
from tui.sim.galera import GaleraSim, SimGaleraConnection
from tui.sim.http import Listener, Stats
from tui.sim.shell import (
    CLOUD,
    CLOUDS,
    GALERA_PASSWORD,
    GALERA_USER,
    PASSWORD,
    PROJECT,
    RABBIT_PASSWORD,
    RABBIT_USER,
    USERNAME,
)

SERVICES = ("identity", "compute", "network", "volume", "placement", "image", "rabbitmq")
# stuck thresholds short enough for the storyline to show instance.stuck within two minutes
DEMO_STUCK = {**DEFAULT_STUCK_SECONDS, "scheduling": 30.0, "networking": 60.0, "block_device_mapping": 60.0,
              "spawning": 45.0, "deleting": 60.0}

_active: list[Demo] = []
_active_lock = threading.Lock()


class Demo:
    """A running simulated cloud. Use as a context manager or call stop()."""

    def __init__(self, engine: Engine, *, tmpdir: Path) -> None:
        self.engine = engine
        self.clock = engine.clock
        self.stats = Stats()
        self.tmpdir = tmpdir
        self.auth = api_keystone.Auth(engine, USERNAME, PASSWORD, PROJECT)
        self.galera = GaleraSim(engine, GALERA_USER, GALERA_PASSWORD)
        nova_base: list[str] = [""]
        clock = engine.clock.time
        apps = {
            "identity": api_keystone.make_app(self.auth, self._catalog),
            "compute": api_nova.make_app(engine, self.auth, nova_base),
            "network": api_misc.make_neutron(engine, self.auth),
            "volume": api_misc.make_cinder(engine, self.auth),
            "placement": api_misc.make_placement(engine, self.auth),
            "image": api_misc.make_glance(),
            "rabbitmq": api_rabbit.make_app(engine, RABBIT_USER, RABBIT_PASSWORD),
        }
        self.listeners: dict[str, Listener] = {
            name: Listener(name, app, self.stats, clock=clock) for name, app in apps.items()}
        for lst in self.listeners.values():
            lst.start()
        nova_base[0] = self.listeners["compute"].base
        self.clouds_file = tmpdir / "clouds.yaml"
        self.clouds_file.write_text(self._clouds_yaml())
        self.clouds_file.chmod(0o600)
        self._stopped = False

    # -- URLs
    def url(self, service: str) -> str:
        """The catalog URL of a service (identity includes /v3/, volume the project id)."""
        base = self.listeners[service].base
        return {"identity": f"{base}/v3/", "compute": f"{base}/v2.1",
                "volume": f"{base}/v3/{self.engine.admin_project}"}.get(service, base)

    @property
    def auth_url(self) -> str:
        return f"{self.listeners['identity'].base}/v3"

    @property
    def rabbitmq_url(self) -> str:
        return self.listeners["rabbitmq"].base

    def _catalog(self) -> list[dict[str, Any]]:
        names = {"identity": ("identity", "keystone"), "compute": ("compute", "nova"),
                 "network": ("network", "neutron"), "volume": ("volumev3", "cinderv3"),
                 "placement": ("placement", "placement"), "image": ("image", "glance")}
        entries = {}
        for svc, (stype, name) in names.items():
            sid = hashlib.md5(f"{svc}:{self.engine.seed}".encode()).hexdigest()
            entries[stype] = (name, self.url(svc), sid)
        return api_keystone.catalog_entries(entries, self.engine)

    def _clouds_yaml(self) -> str:
        return (
            "# written by stacktop's built-in simulator: fake credentials for a fake cloud\n"
            "clouds:\n"
            f"  {CLOUD}:\n"
            "    auth:\n"
            f"      auth_url: {self.auth_url}\n"
            f"      username: {USERNAME}\n"
            f"      password: {PASSWORD}\n"
            f"      project_name: {PROJECT}\n"
            "      user_domain_name: Default\n"
            "      project_domain_name: Default\n"
            "    region_name: RegionOne\n"
            "    interface: public\n"
            "    identity_api_version: 3\n"
        )

    # -- what stacktop is pointed at
    def config(self, base: Config | None = None) -> Config:
        """A Config pointing every section at the simulator (thresholds tuned for the storyline)."""
        base = base or Config()
        th = base.thresholds
        return replace(
            base,
            openstack=OpenStackConfig(cloud=CLOUD, clouds_file=str(self.clouds_file),
                                      interval=base.openstack.interval, timeout=base.openstack.timeout),
            rabbitmq=RabbitMQConfig(management_url=self.rabbitmq_url, user=RABBIT_USER,
                                    password=Secret(RABBIT_PASSWORD, "demo"), vhosts=(),
                                    interval=base.rabbitmq.interval, timeout=base.rabbitmq.timeout),
            galera=GaleraConfig(nodes=tuple(n.address for n in self.engine.galera_nodes), user=GALERA_USER,
                                password=Secret(GALERA_PASSWORD, "demo"),
                                expected_size=len(self.engine.galera_nodes) + len(self.engine.galera_arbitrators),
                                arbitrators=tuple(self.engine.galera_arbitrators),
                                interval=base.galera.interval, timeout=base.galera.timeout),
            thresholds=Thresholds(service_down_time=self.engine.service_down_time,
                                  agent_down_time=self.engine.agent_down_time,
                                  volume_service_down_time=th.volume_service_down_time,
                                  fleet_down_fraction=th.fleet_down_fraction, stuck=dict(DEMO_STUCK)),
            demo=True,
        )

    def galera_connector(self, address: Any, user: str, password: str | None,
                         timeout: float = 5.0) -> SimGaleraConnection:
        """The Galera collector's connector seam, answered by the simulated cluster."""
        return self.galera.connect(address, user, password, timeout)

    # -- control
    def warm(self) -> float:
        """Pre-render every server's cached JSON (what the first full list would otherwise pay, ~60 us a
        server); returns the CPU seconds spent. Benchmarks call it so they measure the client, not this."""
        import time

        from tui.sim.api_nova import NovaViews

        views = NovaViews(self.engine, self.listeners["compute"].base)
        cpu0 = time.thread_time()
        t = self.engine.sync()
        with self.engine.lock:
            for inst in self.engine.instances.values():
                views.server_bytes(inst, (2, 96), t)
        return time.thread_time() - cpu0

    def now(self) -> datetime:
        return self.clock.now()

    def advance(self, seconds: float) -> None:
        """Step sim time (manual clocks, or to jump ahead) and apply every event due."""
        self.clock.advance(seconds)
        self.engine.sync()

    def set_refusing(self, service: str, refusing: bool = True) -> None:
        """Make one service's endpoint refuse connections (True) or accept them again (False)."""
        lst = self.listeners[service]
        if refusing:
            lst.stop()
        else:
            lst.start()

    def keystone_refusing(self, refusing: bool = True) -> None:
        self.set_refusing("identity", refusing)

    def inject(self, what: str, **kw: Any) -> None:
        self.engine.inject(what, **kw)

    def story(self) -> list[tuple[float, str, dict[str, Any]]]:
        """Storyline events so far: (sim epoch seconds, name, details)."""
        with self.engine.lock:
            return list(self.engine.story_log)

    def milestones(self) -> dict[str, float]:
        return story.milestones(self.engine.service_down_time, self.engine.agent_down_time)

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        for lst in [*self.listeners.values(), *getattr(self, "listeners_extra", {}).values()]:
            lst.stop()
        shutil.rmtree(self.tmpdir, ignore_errors=True)
        with _active_lock:
            if self in _active:
                _active.remove(self)

    def __enter__(self) -> Demo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_demo(*, instances: int = 200, hosts: int = 8, queues: int = 300, churn: float = 6.0,
               speed: float = 1.0, seed: int = 0, manual: bool = False, start: float | None = None,
               service_down_time: float = 60.0, agent_down_time: float = 75.0,
               period: float = story.DEFAULT_PERIOD, storyline: bool = True, queue_growth: bool = True,
               steady: bool = False, hostile: bool = False, galera_arbitrator: bool = False,
               rabbitmq4: bool = False, ovn: bool = False) -> Demo:
    """Start the simulated cloud on 127.0.0.1 (ephemeral ports) and return the running Demo.

    speed != 1 runs sim time faster than the wall clock (timestamps run ahead: compare against demo.now());
    manual=True freezes sim time until demo.advance(). churn is boots (and as many deletes) per minute;
    steady=True lets those deletes take stuck and ERROR servers too, so the server count stays put for hours.
    hostile=True: tenant strings that try to steer or break a terminal UI (tui.sim.hostile).
    galera_arbitrator=True: the small-site Galera shape, two data nodes + garbd (not with the storyline, which
    takes two of three data nodes away).
    rabbitmq4=True: the broker is a 3-node RabbitMQ 4.0 cluster with quorum queues, queue-manager reply names
    and stream fanouts (oslo.messaging's 2025 profile).
    ovn=True: neutron runs ML2/OVN (an OVN Controller and an OVN Metadata agent per compute host, no DHCP, L3 or
    metadata agents on the controllers); the storyline's dying agent is then an ovn-controller.
    """
    if galera_arbitrator and storyline:
        raise ValueError("galera_arbitrator needs storyline=False (the storyline plays a 3-data-node cluster)")
    clock = SimClock(start, speed=speed, manual=manual)
    engine = Engine(clock, instances=instances, hosts=hosts, queues=queues, churn=churn, seed=seed,
                    service_down_time=service_down_time, agent_down_time=agent_down_time, period=period,
                    storyline=storyline, queue_growth=queue_growth,
                    steady=steady, hostile=hostile, rabbitmq4=rabbitmq4, ovn=ovn)
    if galera_arbitrator:
        engine.galera_nodes = engine.galera_nodes[:2]
        engine.galera_arbitrators = ["sim-garbd:4567"]
    demo = Demo(engine, tmpdir=Path(tempfile.mkdtemp(prefix="stacktop-demo-")))
    with _active_lock:
        _active.append(demo)
    return demo


def start_demo_at(offset: float = story.SNAPSHOT_OFFSET, **options: Any) -> Demo:
    """A simulated cloud frozen `offset` sim seconds into its first storyline loop, with sim time at the wall
    clock's now: every read sees the same cloud, whenever it comes (`stacktop snapshot --demo`). The knobs
    are start_demo's (speed does not apply: the clock stands still)."""
    import time

    options = {k: v for k, v in options.items() if k not in ("speed", "manual", "start")}
    # a start on a whole RabbitMQ statistics tick: the queue counts, published per tick, do not depend on it
    start = (time.time() - offset) // api_rabbit.STATS_INTERVAL * api_rabbit.STATS_INTERVAL
    demo = start_demo(manual=True, start=start, **options)
    demo.advance(offset)
    return demo


class DemoClouds:
    """Several simulated clouds at once (`stacktop --demo`): the first runs the storyline, the others are
    quiet. Same controls as a Demo where they make sense (config, now, stop); demos[name] for the rest."""

    def __init__(self, demos: dict[str, Demo]) -> None:
        self.demos = demos
        self.first = next(iter(demos.values()))

    def config(self, base: Config | None = None) -> Config:
        """Every demo as a [[clouds]] entry; the first one's sections active."""
        configs = {name: demo.config(base) for name, demo in self.demos.items()}
        clouds = tuple(CloudConfig(name, c.openstack, c.rabbitmq, c.galera) for name, c in configs.items())
        return replace(next(iter(configs.values())), clouds=clouds)

    @property
    def galera_connectors(self) -> dict[str, Any]:
        return {name: demo.galera_connector for name, demo in self.demos.items()}

    @property
    def galera_connector(self) -> Any:
        return self.first.galera_connector

    def now(self) -> datetime:
        return self.first.now()

    def stop(self) -> None:
        for demo in self.demos.values():
            demo.stop()


def start_demo_clouds(**options: Any) -> DemoClouds:
    """`demo-east` (the storyline, shaped by the knobs) and a small, healthy `demo-west` (3 hosts: none in
    maintenance; Galera of two data nodes + garbd; RabbitMQ a 4.0 cluster with quorum queues and stream
    fanouts) on the same clock."""
    east = start_demo(**options)
    try:
        west = start_demo(instances=45, hosts=3, queues=60, churn=2.0, speed=east.clock.speed,
                          seed=int(options.get("seed", 0)) + 1, start=east.clock.time(),
                          manual=bool(options.get("manual", False)), storyline=False, galera_arbitrator=True,
                          rabbitmq4=True)
    except BaseException:
        east.stop()
        raise
    return DemoClouds(dict(zip(CLOUDS, (east, west), strict=True)))


def galera_connector(address: Any, user: str, password: str | None, timeout: float = 5.0) -> SimGaleraConnection:
    """Module-level connector for the most recently started demo (for code that only has a Config)."""
    with _active_lock:
        if not _active:
            raise RuntimeError("no simulated cloud is running: call tui.sim.start_demo() first")
        demo = _active[-1]
    return demo.galera_connector(address, user, password, timeout)
