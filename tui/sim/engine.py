"""The scenario engine: a seeded, deterministic cloud advanced lazily to the sim clock.

State changes happen only in timed events popped from a heap in (time, seq) order, each drawing from one
seeded RNG, so the state at sim time T depends only on (seed, knobs, T), never on when clients asked.
Everything is plain Python objects; renderers (tui/sim/views_*.py) turn them into API JSON under `lock`.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import random
import threading
from collections.abc import Callable
from typing import Any

from tui.sim import hostile as hostile_names
from tui.sim import story
from tui.sim.clock import SimClock
from tui.sim.model import (
    Action,
    Agent,
    Consumer,
    GaleraNode,
    Host,
    Instance,
    Migration,
    Port,
    Provider,
    Queue,
    RabbitNode,
    Service,
    Volume,
)
from tui.sim.util import hex32, uuid4

BUILD_STATES = ("scheduling", "networking", "block_device_mapping", "spawning")

# name -> (vcpus, ram MB, disk GB)
FLAVORS: dict[str, tuple[int, int, int]] = {
    "m1.small": (1, 2048, 20),
    "m1.medium": (2, 4096, 40),
    "m1.large": (4, 8192, 80),
    "m1.xlarge": (8, 16384, 160),
    "x.huge": (1, 512, 700000),
}
_COMMON_FLAVORS = ("m1.small", "m1.small", "m1.medium", "m1.medium", "m1.large", "m1.xlarge")
_NAME_PREFIXES = ("web", "api", "db", "cache", "batch", "ci", "k8s-node", "etl", "vpn", "mq")
CONTROLLERS = ("ctl-1", "ctl-2", "ctl-3")
STORAGE_BACKENDS = ("storage-01@ceph", "storage-02@ceph")
NOVALIDHOST_TRACE = (
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3/dist-packages/nova/conductor/manager.py", line 1683, in '
    "schedule_and_build_instances\n    host_lists = self._schedule_instances(context, request_specs[0],\n"
    '  File "/usr/lib/python3/dist-packages/nova/scheduler/manager.py", line 283, in select_destinations\n'
    '    raise exception.NoValidHost(reason="")\n\nnova.exception.NoValidHost: No valid host was found. \n'
)
DELETED_KEEP = 3600.0  # sim seconds a deleted server stays visible to changes-since


class Engine:
    """The simulated cloud. Call `sync()` (takes the lock) before reading state."""

    def __init__(self, clock: SimClock, *, instances: int = 200, hosts: int = 8, queues: int = 300,
                 churn: float = 6.0, seed: int = 0, service_down_time: float = 60.0,
                 agent_down_time: float = 75.0, period: float = story.DEFAULT_PERIOD,
                 storyline: bool = True, queue_growth: bool = True,
                 steady: bool = False, hostile: bool = False, rabbitmq4: bool = False, ovn: bool = False) -> None:
        """hostile=True: some hosts, servers, volumes, queues, a disabled reason and the ERROR faults carry the
        names of tui.sim.hostile (markup, terminal controls, zero-width and RTL characters, 255 characters).
        queue_growth=False: the notification queues (no consumer) hold a constant count instead of
        growing 0.4 messages/s, so with churn=0 and no storyline nothing visible changes (the idle benchmark).
        rabbitmq4=True: the broker is a 3-node RabbitMQ 4.0 cluster and oslo.messaging runs its 2025 profile
        (quorum topic queues, transient quorum reply queues with queue-manager names, stream fanouts).
        ovn=True: neutron runs ML2/OVN: each compute host has an OVN Controller agent (ovn-controller, its
        port-binding agent) and an OVN Metadata agent that neutron reports dead whenever that host's controller
        is; the controllers run no DHCP, L3 or metadata agent (OVN does their work)."""
        if hosts < 1:
            raise ValueError("hosts must be >= 1")
        self.clock = clock
        self.lock = threading.RLock()
        self.rng = random.Random(seed)
        self.seed = seed
        self.service_down_time = service_down_time
        self.agent_down_time = agent_down_time
        self.period = period
        self.churn = churn
        self.queue_growth = queue_growth
        # steady: churn's delete may take any server (also a build stuck on a dead compute, an ERROR one), as
        # users clean those up, so the server count stays put over hours (bench/soak.py); by default only
        # ACTIVE/SHUTOFF ones are deleted and stuck builds pile up, a few hundred over 4 hours at 10x speed
        self.steady = steady
        self.hostile = hostile
        self.rabbitmq4 = rabbitmq4
        self.ovn = ovn
        self.ovn_controller_of: dict[str, Agent] = {}  # OVN Metadata agent id -> its host's controller agent
        self._reply_counter = 0  # queue-manager counters of reply queue names (RabbitMQ 4 profile)
        self._hostile_count = 0
        self.t = clock.start
        self._heap: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self._seq = itertools.count()
        self.story_log: list[tuple[float, str, dict[str, Any]]] = []
        self.story_state: dict[str, Any] = {}
        self.specials: set[str] = set()

        self.instances: dict[str, Instance] = {}
        self.deleted: dict[str, Instance] = {}
        self.casts: dict[str, tuple[str, tuple[float, float, float, float], bool]] = {}  # build -> its compute
        self._order: list[tuple[float, str]] = []  # (created, id) ascending; nova lists it reversed
        self.ports: dict[str, Port] = {}
        self.volumes: dict[str, Volume] = {}
        self.providers: dict[str, Provider] = {}
        self.consumers: dict[str, Consumer] = {}
        self.migrations: list[Migration] = []
        self.queues: dict[tuple[str, str], Queue] = {}
        self._next_seq = 1
        self.galera_conf_id = 23
        self.galera_uuid = uuid4(self.rng)

        self._build(instances, hosts, queues)
        if churn > 0:
            self.at(self.t + 60.0 / churn, self._churn_tick)
        self.storyline = story.Storyline(self)  # its events can be played by hand (tests) when not running
        if storyline:
            self.storyline.start()
        self.advance_to(self.t)  # the first loop starts now: story_state is set before any request

    # ---------------------------------------------------------------- event loop
    def at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        heapq.heappush(self._heap, (when, next(self._seq), fn, args))

    def sync(self) -> float:
        """Advance to the clock's now; returns it. State may be read under `lock` afterwards."""
        t = self.clock.time()
        with self.lock:
            self.advance_to(t)
        return t

    def advance_to(self, t: float) -> None:
        with self.lock:
            while self._heap and self._heap[0][0] <= t:
                when, _, fn, args = heapq.heappop(self._heap)
                self.t = max(self.t, when)
                fn(*args)
            self.t = max(self.t, t)

    # ---------------------------------------------------------------- population
    def new_uuid(self) -> str:
        """A fresh id drawn from the seeded RNG (ids are part of the deterministic state)."""
        return uuid4(self.rng)

    def _build(self, n_instances: int, n_hosts: int, n_queues: int) -> None:
        rng, t0 = self.rng, self.t
        self.admin_project = hex32(rng)
        self.admin_user = hex32(rng)
        self.projects = [hex32(rng) for _ in range(max(3, min(40, n_instances // 250 + 3)))]
        self.users = {p: hex32(rng) for p in self.projects}
        self.images = {"cirros-0.6.2": self.new_uuid(), "ubuntu-24.04": self.new_uuid()}
        self.network_id, self.subnet_id = self.new_uuid(), self.new_uuid()
        self.security_group_id = self.new_uuid()
        width = max(2, len(str(n_hosts)))
        self.controller_services: list[Service] = []
        for host in CONTROLLERS:
            for binary in ("nova-scheduler", "nova-conductor"):
                self.controller_services.append(self._service(binary, host, "internal", t0))
        self.cinder_services = [self._service("cinder-scheduler", h, "nova", t0) for h in CONTROLLERS]
        for backend in STORAGE_BACKENDS:
            svc = self._service("cinder-volume", backend, "nova", t0)
            svc.backend = True
            self.cinder_services.append(svc)
        self.hosts: list[Host] = []
        for i in range(n_hosts):
            name = f"compute-{i + 1:0{width}d}"
            if self.hostile and i % 2 == 1:
                name += hostile_names.HOST_SUFFIXES[(i // 2) % len(hostile_names.HOST_SUFFIXES)]
            svc = self._service("nova-compute", name, "nova", t0)
            if self.ovn:
                agent = self._agent("OVN Controller agent", "ovn-controller", name, t0)
            else:
                agent = self._agent("Open vSwitch agent", "neutron-openvswitch-agent", name, t0)
            host = Host(name, i, self.new_uuid(), f"10.0.{i // 250}.{i % 250 + 10}", svc, agent)
            self.hosts.append(host)
            traits = ["COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_VOLUME_MULTI_ATTACH", "HW_CPU_X86_AVX2",
                      "COMPUTE_IMAGE_TYPE_QCOW2", "COMPUTE_NODE"]
            if i % 4 == 0:
                traits.append("HW_CPU_X86_AVX512F")
            if i % 10 == 3:
                traits.append("CUSTOM_SSD")
            inv = {
                "VCPU": _inv(64, 0, 4.0), "MEMORY_MB": _inv(262144, 4096, 1.0),
                "DISK_GB": _inv(2000 if i % 10 != 7 else 800, 0, 1.0),
            }
            self.providers[host.hypervisor_id] = Provider(host.hypervisor_id, name, inv, sorted(traits))
        if n_hosts >= 4:
            maint = self.hosts[3].service
            maint.status, maint.disabled_reason = "disabled", "maintenance: DIMM replacement (CHG-4821)"
            if self.hostile:
                maint.disabled_reason = hostile_names.DISABLED_REASON
            maint.status_changed = t0 - 7200
            self.providers[self.hosts[3].hypervisor_id].traits.append("COMPUTE_STATUS_DISABLED")
        self.host_by_name = {h.name: h for h in self.hosts}
        self.net_agents = [h.agent for h in self.hosts]
        for h in self.hosts if self.ovn else ():
            follower = self._agent("OVN Metadata agent", "neutron-ovn-metadata-agent", h.name, t0)
            self.ovn_controller_of[follower.id] = h.agent
            self.net_agents.append(follower)
        for host in () if self.ovn else CONTROLLERS:
            self.net_agents += [
                self._agent("DHCP agent", "neutron-dhcp-agent", host, t0),
                self._agent("L3 agent", "neutron-l3-agent", host, t0),
                self._agent("Metadata agent", "neutron-metadata-agent", host, t0),
            ]
        self.rabbit_nodes = [RabbitNode(f"rabbit@{h}", t0 - 86400 * 12) for h in CONTROLLERS]
        self.galera_nodes = [GaleraNode(f"sim-db-{i}", f"sim-db-{i}:3306", i) for i in (1, 2, 3)]
        # garbd members (group address "host:port"): no SQL, counted by the data nodes (galera_arbitrator())
        self.galera_arbitrators: list[str] = []
        self.galera_arbitrators_up = True
        self.galera_started = t0 - 86400 * 30

        schedulable = [h for h in self.hosts if h.service.status == "enabled"] or self.hosts
        for i in range(n_instances):
            host = schedulable[i % len(schedulable)] if i < len(schedulable) else rng.choice(schedulable)
            created = t0 - rng.uniform(600, 90 * 86400)
            self._initial_instance(host, created)
        self._order.sort()
        for k in range(min(5, len(self.instances))):
            self._historic_migration(k)
        self._build_queues(n_queues)
        if self.hostile:
            for i, bad in enumerate(hostile_names.NAMES):  # messages waiting, nobody consuming: worth attention
                q = self._queue(f"notifications.{bad}", t0, durable=True, consumers=0)
                q.ready = 10 + i
                q.prev = (0, q.ready, 0)

    def _service(self, binary: str, host: str, zone: str, t0: float) -> Service:
        interval = 10.0
        return Service(self.new_uuid(), binary, host, zone, created=t0 - 86400 * 40,
                       phase=t0 - self.rng.uniform(0, interval), interval=interval)

    def _agent(self, agent_type: str, binary: str, host: str, t0: float) -> Agent:
        conf: dict[str, Any] = {}
        if binary == "ovn-controller":
            conf = {"chassis_name": host, "bridge-mappings": "physnet1:br-ex", "datapath-type": "system",
                    "ovn-bridge": "br-int", "ovn-cms-options": "", "iface-types": "erspan,geneve,gre,internal,"
                    "ip6erspan,ip6gre,lisp,patch,stt,system,tap,vxlan"}
        elif binary == "neutron-openvswitch-agent":
            conf = {"bridge_mappings": {"physnet1": "br-ex"}, "datapath_type": "system", "devices": 0,
                    "integration_bridge": "br-int", "ovs_capabilities": {}, "ovs_hybrid_plug": False,
                    "tunnel_types": ["vxlan"], "vhostuser_socket_dir": "/var/run/openvswitch"}
        return Agent(self.new_uuid(), agent_type, binary, host, created=t0 - 86400 * 40,
                     started=t0 - 86400 * 3, phase=t0 - self.rng.uniform(0, 30.0), configurations=conf,
                     availability_zone="nova" if binary in ("neutron-dhcp-agent", "neutron-l3-agent") else None)

    def _new_instance(self, name: str, project: str, flavor: str, created: float) -> Instance:
        seq = self._next_seq
        self._next_seq += 1
        inst = Instance(
            id=self.new_uuid(), seq=seq, name=name, project_id=project, user_id=self.users[project],
            flavor=flavor, image_id=self.images["cirros-0.6.2" if seq % 3 else "ubuntu-24.04"],
            created=created, updated=created, reservation_id=f"r-{self.rng.getrandbits(40):010x}"[:10],
        )
        self.instances[inst.id] = inst
        bisect.insort(self._order, (inst.created, inst.id))
        return inst

    def server_name(self, plain: str, which: int | None = None) -> str:
        """plain, or with hostile=True a hostile name (every third server; `which` picks one for the story)."""
        if not self.hostile:
            return plain
        if which is not None:
            return f"{plain}-{hostile_names.name(which)}"
        self._hostile_count += 1
        return hostile_names.name(self._hostile_count // 3) if self._hostile_count % 3 == 0 else plain

    def _initial_instance(self, host: Host, created: float) -> None:
        rng = self.rng
        project = rng.choice(self.projects)
        prefix = _NAME_PREFIXES[self._next_seq % len(_NAME_PREFIXES)]
        inst = Instance(
            id=self.new_uuid(), seq=self._next_seq, name=self.server_name(f"{prefix}-{self._next_seq:05d}"),
            project_id=project,
            user_id=self.users[project], flavor=rng.choice(_COMMON_FLAVORS),
            image_id=self.images["cirros-0.6.2" if self._next_seq % 3 else "ubuntu-24.04"],
            created=created, updated=created + rng.uniform(5, 60), host=host.name,
            launched_at=created + rng.uniform(4, 40), reservation_id=f"r-{rng.getrandbits(40):010x}"[:10],
        )
        self._next_seq += 1
        if inst.seq % 31 == 0:
            inst.status, inst.vm_state, inst.power_state = "SHUTOFF", "stopped", 4
            inst.updated += rng.uniform(60, 3600)
        self.instances[inst.id] = inst
        self._order.append((inst.created, inst.id))
        self._claim(inst, host)
        self._make_port(inst, host.name, created + 2, status="ACTIVE" if inst.status == "ACTIVE" else "DOWN")
        if inst.seq % 5 == 0:
            self._make_volume(inst, created + 60, boot=False)
        elif inst.seq % 17 == 0:
            self._make_volume(inst, created + 1, boot=True)

    def _claim(self, inst: Instance, host: Host) -> None:
        vcpus, ram, disk = FLAVORS[inst.flavor]
        if inst.id not in self.consumers:
            self.consumers[inst.id] = Consumer(inst.id, inst.project_id, inst.user_id)
        self.providers[host.hypervisor_id].allocate(inst.id, {"VCPU": vcpus, "MEMORY_MB": ram, "DISK_GB": disk})

    def unclaim(self, consumer: str) -> None:
        """Drop every allocation of `consumer` and the consumer itself."""
        for prov in self.providers.values():
            if consumer in prov.allocations:
                prov.free(consumer)
        self.consumers.pop(consumer, None)

    def _make_port(self, inst: Instance, host: str, t: float, status: str) -> Port:
        n = inst.seq + 10
        mac = f"fa:16:3e:{self.rng.getrandbits(8):02x}:{self.rng.getrandbits(8):02x}:{self.rng.getrandbits(8):02x}"
        port = Port(self.new_uuid(), self.network_id, self.subnet_id, inst.project_id, mac,
                    f"10.{64 + (n >> 16) % 64}.{(n >> 8) & 255}.{n & 255}", inst.id, "compute:nova", host,
                    created=t, updated=t, status=status)
        self.ports[port.id] = port
        inst.port_id = port.id
        return port

    def _make_volume(self, inst: Instance, t: float, *, boot: bool) -> Volume:
        vol = Volume(self.new_uuid(), "" if boot else self.server_name(f"{inst.name}-data"), 20 if boot else 100,
                     inst.project_id, inst.user_id, created=t, updated=t, status="in-use", bootable=boot,
                     backend_host=f"{STORAGE_BACKENDS[inst.seq % 2]}#ceph")
        vol.attachments.append({
            "id": vol.id, "attachment_id": self.new_uuid(), "volume_id": vol.id, "server_id": inst.id,
            "host_name": inst.host, "device": "/dev/vda" if boot else "/dev/vdb", "attached_at": t,
        })
        self.volumes[vol.id] = vol
        inst.volumes.append((vol.id, boot))
        return vol

    def _historic_migration(self, k: int) -> None:
        inst = self.instances[self._order[-(k * 7 % len(self._order) + 1)][1]]
        others = [h for h in self.hosts if h.name != inst.host] or self.hosts
        src = self.rng.choice(others)
        t = inst.updated - 30
        self.migrations.append(Migration(
            len(self.migrations) + 1, self.new_uuid(), inst.id, src.name, inst.host or src.name,
            self.host_by_name[inst.host or src.name].host_ip, "confirmed", "migration",
            inst.project_id, inst.user_id, created=t - 120, updated=t))

    def _build_queues(self, n: int) -> None:
        t0, rng = self.t, self.rng
        essential = ["scheduler", "conductor", "compute", "q-plugin", "q-reports-plugin", "cinder-scheduler",
                     "notifications.info", "versioned_notifications.info"]
        essential += [f"compute.{h.name}" for h in self.hosts]
        essential += [f"scheduler.{h}" for h in CONTROLLERS] + [f"conductor.{h}" for h in CONTROLLERS]
        essential += [f"cinder-volume.{b}" for b in STORAGE_BACKENDS] + [f"cinder-volume.{b}.ceph"
                                                                          for b in STORAGE_BACKENDS]
        qtype = "quorum" if self.rabbitmq4 else "classic"  # rabbit_quorum_queue: topic queues are quorum
        for name in essential:
            q = self._queue(name, t0, durable=qtype == "quorum", qtype=qtype)
            if name == "compute":
                q.consumers = len(self.hosts)
            elif name in ("scheduler", "conductor", "cinder-scheduler", "q-plugin", "q-reports-plugin"):
                q.consumers = len(CONTROLLERS)
            elif name.startswith(("notifications.", "versioned_notifications.")):
                q.consumers, q.durable = 0, True
                q.ready = rng.randint(2000, 9000)
                q.growth, q.grow_from = (0.4 if self.queue_growth else 0.0), t0
            q.prev = (q.consumers, q.ready, 0)
        self.fanouts: dict[str, str] = {}
        self.replies: dict[str, str] = {}
        extra: list[tuple[str, str]] = []
        for h in self.hosts:
            extra.append(("fanout", h.name))
            extra.append(("reply", h.name))
        for h in CONTROLLERS:
            extra += [("reply", f"{h}/conductor"), ("reply", f"{h}/scheduler"), ("fanout", f"{h}/scheduler")]
        if self.rabbitmq4:  # rabbit_stream_fanout: one stream per fanout topic, read by every listener
            for topic, readers in (("scheduler", len(CONTROLLERS)), ("compute", len(self.hosts)),
                                   ("q-agent-notifier-port-update", len(self.hosts))):
                q = self._queue(f"{topic}_fanout", t0, durable=True, consumers=readers, qtype="stream")
                q.ready = rng.randint(200, 5000)  # retention, not backlog
                q.prev = (readers, q.ready, 0)
            extra = [e for e in extra if e[0] == "reply"]
        budget = max(0, n - len(self.queues))
        for kind, owner in extra[:budget]:
            self._owned_queue(kind, owner, t0)
        i = 0
        while len(self.queues) < n:
            if self.rabbitmq4:  # use_queue_manager names, transient quorum queues
                name = f"reply_{CONTROLLERS[i % len(CONTROLLERS)]}:nova-api:{i + 1}"
                self._queue(name, t0, expires=True, qtype="quorum", durable=True)
            else:
                name = f"q-agent-notifier-port-update_fanout_{hex32(rng)}" if i % 3 == 0 else f"reply_{hex32(rng)}"
                self._queue(name, t0, expires=True)
            i += 1

    def _queue(self, name: str, t: float, *, durable: bool = False, expires: bool = False,
               consumers: int = 1, qtype: str = "classic") -> Queue:
        args: dict[str, Any] = {"x-expires": 1800000} if expires else {}
        if self.rabbitmq4:
            args["x-queue-type"] = qtype  # RabbitMQ 4 lists it on every queue, classic too
        q = Queue(name, "/", created=t, consumers=consumers, durable=durable, arguments=args, changed=t,
                  prev=(consumers, 0, 0), grow_from=t, qtype=qtype, leader=len(self.queues) % len(CONTROLLERS))
        self.queues[(q.vhost, name)] = q
        return q

    def _owned_queue(self, kind: str, owner: str, t: float) -> Queue:
        if self.rabbitmq4:  # use_queue_manager: reply_<hostname>:<processname>:<counter>, transient quorum
            host, _, process = owner.partition("/")
            process = f"nova-{process}" if process else "nova-compute"
            if kind == "fanout":
                topic = "scheduler" if process == "nova-scheduler" else "compute"
                q = self._queue(f"{topic}_fanout_{host}:{process}:1", t, expires=True, qtype="quorum",
                                durable=True)
                self.fanouts[owner] = q.name
            else:
                self._reply_counter += 1
                q = self._queue(f"reply_{host}:{process}:{self._reply_counter}", t, expires=True, qtype="quorum",
                                durable=True)
                self.replies[owner] = q.name
            return q
        if kind == "fanout":
            topic = "scheduler" if owner.endswith("/scheduler") else "compute"
            q = self._queue(f"{topic}_fanout_{hex32(self.rng)}", t, expires=True)
            q.auto_delete = True
            self.fanouts[owner] = q.name
        else:
            q = self._queue(f"reply_{hex32(self.rng)}", t, expires=True)
            self.replies[owner] = q.name
        return q

    # ---------------------------------------------------------------- lookups
    def order_desc(self) -> list[str]:
        """Live server ids, newest first (nova's default sort: created_at desc, id desc)."""
        return [i for _, i in reversed(self._order)]

    def server(self, sid: str) -> Instance | None:
        return self.instances.get(sid) or self.deleted.get(sid)

    def service_up(self, svc: Service, t: float, down_time: float | None = None) -> bool:
        if svc.forced_down:
            return False
        return abs(t - svc.updated_at(t)) <= (self.service_down_time if down_time is None else down_time)

    def agent_alive(self, agent: Agent, t: float) -> bool:
        controller = self.ovn_controller_of.get(agent.id)
        if controller is not None and not self.agent_alive(controller, t):
            return False  # neutron's OVN driver: a chassis' other agents die with its ovn-controller
        return abs(t - agent.heartbeat(t)) <= self.agent_down_time

    def compute_services(self) -> list[Service]:
        return self.controller_services + [h.service for h in self.hosts]

    # ---------------------------------------------------------------- instance lifecycle
    def boot(self, name: str, project: str, flavor: str, *, host: str | None = None,
             fail: str | None = None, durations: tuple[float, float, float, float] | None = None,
             volume: bool = False) -> Instance:
        t = self.t
        inst = self._new_instance(name, project, flavor, t)
        inst.status, inst.vm_state, inst.task_state, inst.power_state = "BUILD", "building", "scheduling", 0
        inst.az = ""
        inst.launched_at = None
        inst.pending = "build_request"
        req = f"req-{self.new_uuid()}"
        inst.actions = [Action("create", req, t, t)]
        d = durations or (self.rng.uniform(0.5, 3), self.rng.uniform(1, 4), self.rng.uniform(0.5, 2),
                          self.rng.uniform(3, 10))
        self.at(t + d[0], self._scheduled, inst.id, host, fail, d, volume)
        return inst

    def _event(self, inst: Instance, event: str, start: float, result: str, host: str,
               traceback: str | None = None, details: str | None = None) -> None:
        assert inst.actions is not None
        action = inst.actions[-1]
        action.events.append({"event": event, "start_time": start, "finish_time": self.t, "result": result,
                              "traceback": traceback, "host": host, "details": details,
                              "project_id": inst.project_id})
        action.updated = self.t
        if result == "Error":
            action.message = "Error"

    def _live(self, sid: str) -> Instance | None:
        return self.instances.get(sid)

    def _scheduled(self, sid: str, host_name: str | None, fail: str | None,
                   d: tuple[float, float, float, float], volume: bool) -> None:
        inst = self._live(sid)
        if inst is None or inst.task_state != "scheduling":
            return
        t = self.t
        start = inst.actions[-1].start if inst.actions else t
        if fail == "novalidhost" or not self.hosts:  # buried in cell0, then saved: updated_at is set
            inst.pending = None
            inst.status, inst.vm_state, inst.task_state = "ERROR", "error", None
            message = hostile_names.FAULT if self.hostile else "No valid host was found. "
            inst.fault = {"code": 500, "created": t, "message": message,
                          "details": NOVALIDHOST_TRACE}
            self._event(inst, "conductor_schedule_and_build_instances", start, "Error", CONTROLLERS[0],
                        traceback=NOVALIDHOST_TRACE, details="No valid host was found. ")
            inst.touch(t)
            return
        if host_name is None:
            candidates = [h for h in self.hosts if h.service.status == "enabled"
                          and self.service_up(h.service, t)] or self.hosts
            host = self.rng.choice(candidates)
        else:
            host = self.host_by_name[host_name]
        self._claim(inst, host)  # the scheduler's placement claim
        self._event(inst, "conductor_schedule_and_build_instances", start, "Success", CONTROLLERS[0])
        # the conductor creates the instance in the cell DB (updated_at NULL, task_state still scheduling, no
        # host), drops the build request and casts the build to compute.<host>; that nova-compute claims it
        # (host set, task_state None, saved). A dead one never does: changes-since never lists the build
        # (nova 34, measured on the test bed); its queue holds the cast until it starts again.
        if not self._compute_alive(host.name):
            inst.pending, inst.cache = "cast", None
            self.casts[sid] = (host.name, d, volume)
            return
        self._compute_claims(inst, host.name, d, volume)

    def _compute_claims(self, inst: Instance, host: str, d: tuple[float, float, float, float],
                        volume: bool) -> None:
        inst.host, inst.task_state, inst.az, inst.pending = host, None, "nova", None
        inst.touch(self.t)
        self.at(self.t + 0.5, self._networking, inst.id, d, volume)

    def _compute_alive(self, host: str | None) -> bool:
        return host is not None and self.host_by_name[host].service.dead_since is None

    def _networking(self, sid: str, d: tuple[float, float, float, float], volume: bool) -> None:
        inst = self._live(sid)
        if inst is None or inst.status != "BUILD" or not self._compute_alive(inst.host):
            return
        inst.task_state = "networking"
        assert inst.host is not None
        self._make_port(inst, inst.host, self.t, status="DOWN")
        inst.touch(self.t)
        self.at(self.t + d[1], self._bdm, sid, d, volume)

    def _bdm(self, sid: str, d: tuple[float, float, float, float], volume: bool) -> None:
        inst = self._live(sid)
        if inst is None or inst.status != "BUILD" or not self._compute_alive(inst.host):
            return
        inst.task_state = "block_device_mapping"
        if volume:
            self._make_volume(inst, self.t, boot=True)
        inst.touch(self.t)
        self.at(self.t + d[2], self._spawning, sid, d)

    def _spawning(self, sid: str, d: tuple[float, float, float, float]) -> None:
        inst = self._live(sid)
        if inst is None or inst.status != "BUILD" or not self._compute_alive(inst.host):
            return
        inst.task_state = "spawning"
        inst.touch(self.t)
        self.at(self.t + d[3], self._active, sid)

    def _active(self, sid: str) -> None:
        inst = self._live(sid)
        if inst is None or inst.task_state != "spawning" or not self._compute_alive(inst.host):
            return  # a dead compute leaves it spawning: that is the stuck case
        t = self.t
        inst.status, inst.vm_state, inst.task_state, inst.power_state = "ACTIVE", "active", None, 1
        inst.launched_at = t
        if inst.port_id and inst.port_id in self.ports:
            port = self.ports[inst.port_id]
            port.status, port.updated, port.revision = "ACTIVE", t, port.revision + 2
        assert inst.actions is not None and inst.host is not None
        self._event(inst, "compute__do_build_and_run_instance", inst.actions[-1].events[-1]["finish_time"],
                    "Success", inst.host)
        inst.touch(t)

    def delete(self, sid: str) -> None:
        inst = self._live(sid)
        if inst is None or inst.task_state == "deleting":
            return
        t = self.t
        if inst.actions is None:
            inst.actions = []
        inst.actions.append(Action("delete", f"req-{self.new_uuid()}", t, t))
        if inst.host is None or not self._compute_alive(inst.host):
            self._deleted(sid)  # nova-api deletes locally when the compute is down or there is no host
            return
        inst.task_state = "deleting"
        inst.touch(t)
        self.at(t + self.rng.uniform(1, 4), self._deleted, sid)

    def _deleted(self, sid: str) -> None:
        inst = self.instances.pop(sid, None)
        if inst is None:
            return
        t = self.t
        self.casts.pop(sid, None)
        if inst.pending is not None:  # a build request, or a build no compute claimed: soft-deleted with
            self.unclaim(sid)        # updated_at still NULL, so changes-since never lists it as DELETED
            self._forget(inst)
            return
        if inst.host and inst.actions and inst.actions[-1].action == "delete" and inst.task_state:
            self._event(inst, "compute_terminate_instance", inst.actions[-1].start, "Success", inst.host)
        inst.status, inst.vm_state, inst.task_state, inst.power_state = "DELETED", "deleted", None, 0
        inst.terminated_at = t
        self.unclaim(sid)
        if inst.port_id:
            self.ports.pop(inst.port_id, None)
        for vid, delete_on_termination in inst.volumes:
            vol = self.volumes.get(vid)
            if vol is None:
                continue
            if delete_on_termination:
                del self.volumes[vid]
            else:
                vol.status, vol.attachments, vol.updated = "available", [], t
        inst.touch(t)
        self.deleted[sid] = inst
        self._forget(inst)
        self.at(t + DELETED_KEEP, self.deleted.pop, sid, None)

    def _forget(self, inst: Instance) -> None:
        """A server gone from the listings: out of the list order and the storyline's specials."""
        idx = bisect.bisect_left(self._order, (inst.created, inst.id))
        if idx < len(self._order) and self._order[idx][1] == inst.id:
            del self._order[idx]
        self.specials.discard(inst.id)

    # ---------------------------------------------------------------- churn
    def _churn_tick(self) -> None:
        rng = self.rng
        project = rng.choice(self.projects)
        prefix = rng.choice(_NAME_PREFIXES)
        self.boot(f"{prefix}-{self._next_seq:05d}", project, rng.choice(_COMMON_FLAVORS),
                  volume=rng.random() < 0.2)
        if self._order:
            for _ in range(5):
                sid = self._order[rng.randrange(len(self._order))][1]
                inst = self.instances[sid]
                deletable = inst.task_state != "deleting" if self.steady else \
                    inst.status in ("ACTIVE", "SHUTOFF") and inst.task_state is None
                if sid not in self.specials and deletable:
                    self.delete(sid)
                    break
        self.at(self.t + 60.0 / self.churn * rng.uniform(0.5, 1.5), self._churn_tick)

    # ---------------------------------------------------------------- compute / agent life
    def kill_compute(self, name: str) -> None:
        host = self.host_by_name[name]
        t = self.t
        if host.service.dead_since is not None:
            return
        host.service.dead_since = t
        q = self.queues.get(("/", f"compute.{name}"))
        if q is not None:
            q.set(t, consumers=0, growth=0.2)
        topic = self.queues.get(("/", "compute"))
        if topic is not None:
            topic.set(t, consumers=max(0, topic.consumers - 1))
        fan = self.fanouts.pop(name, None)
        if fan:
            self.queues.pop(("/", fan), None)
        reply = self.replies.get(name)
        if reply and ("/", reply) in self.queues:
            self.queues[("/", reply)].set(t, consumers=0)
            self.at(t + 1800.0, self.queues.pop, ("/", reply), None)

    def start_compute(self, name: str) -> None:
        host = self.host_by_name[name]
        t = self.t
        if host.service.dead_since is None:
            return
        host.service.dead_since = None
        host.service.phase = t
        q = self.queues.get(("/", f"compute.{name}"))
        if q is not None:
            q.set(t, consumers=1, ready=0, growth=0.0)
        topic = self.queues.get(("/", "compute"))
        if topic is not None:
            topic.set(t, consumers=topic.consumers + 1)
        if name in self.replies:
            self._owned_queue("reply", name, t)
            self._owned_queue("fanout", name, t)
        # nova-compute _init_instance: builds interrupted by the restart go to ERROR
        for sid in self.order_desc():
            inst = self.instances[sid]
            if inst.host == name and inst.task_state in BUILD_STATES:
                inst.status, inst.vm_state, inst.task_state = "ERROR", "error", None
                inst.touch(t)
            elif inst.host == name and inst.task_state == "deleting":
                self._deleted(sid)
        # then it consumes the builds cast to it while it was down (its queue kept them)
        for sid, (host_name, d, volume) in list(self.casts.items()):
            cast = self.instances.get(sid)
            if host_name == name and cast is not None:
                del self.casts[sid]
                self._compute_claims(cast, name, d, volume)

    def kill_agent(self, agent: Agent) -> None:
        if agent.dead_since is None:
            agent.dead_since = self.t

    def start_agent(self, agent: Agent) -> None:
        if agent.dead_since is not None:
            agent.dead_since = None
            agent.started = agent.phase = self.t

    # ---------------------------------------------------------------- fault injection (tests, demo keys)
    def inject(self, what: str, **kw: Any) -> None:
        """Apply a named fault now: kill_compute/start_compute(host=), kill_agent/start_agent(host=),
        conductor_down/conductor_up (every compute's heartbeat stops: the fleet flip),
        stale_allocations(count=) (that many small allocations of consumers that are no server, spread over
        the hosts: a placement audit's flood of stale-allocation findings),
        rabbit_node_down/rabbit_node_up(node=rabbit@ctl-N) (a broker node's app stopped / started)."""
        with self.lock:
            self.advance_to(self.clock.time())
            if what == "kill_compute":
                self.kill_compute(kw["host"])
            elif what == "start_compute":
                self.start_compute(kw["host"])
            elif what == "kill_agent":
                self.kill_agent(self.host_by_name[kw["host"]].agent)
            elif what == "start_agent":
                self.start_agent(self.host_by_name[kw["host"]].agent)
            elif what in ("rabbit_node_down", "rabbit_node_up"):  # stop_app / start_app on a cluster node
                node = next(n for n in self.rabbit_nodes if n.name == kw["node"])
                node.running = what == "rabbit_node_up"
            elif what == "conductor_down":
                for h in self.hosts:
                    if h.service.dead_since is None:
                        h.service.dead_since = self.t  # processes live on; heartbeats stop arriving
                self.story_state["conductor_down"] = True
            elif what == "stale_allocations":  # a placement audit's flood: allocations whose consumer is gone
                count = int(kw.get("count", 1000))
                hosts = [h for h in self.hosts if h.hypervisor_id in self.providers]
                project = self.projects[-1]
                for i in range(count):
                    consumer = self.new_uuid()
                    self.consumers[consumer] = Consumer(consumer, project, self.users[project])
                    self.providers[hosts[i % len(hosts)].hypervisor_id].allocate(
                        consumer, {"VCPU": 1, "MEMORY_MB": 64, "DISK_GB": 1})
            elif what == "conductor_up":
                for h in self.hosts:
                    h.service.dead_since = None
                    h.service.phase = self.t
                self.story_state.pop("conductor_down", None)
            else:
                raise ValueError(f"unknown fault {what!r}")


def _inv(total: int, reserved: int, ratio: float) -> dict[str, Any]:
    return {"total": total, "reserved": reserved, "min_unit": 1, "max_unit": total, "step_size": 1,
            "allocation_ratio": ratio}
