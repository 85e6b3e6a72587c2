"""Instances source: every server's status and task_state, kept current with `changes-since`.

Polls (compute API, admin view, plain JSON):
- the first poll, and a full resync every `resync_s` (600 s) as a safety net, list every server page by page
  and replace the index; the polls between ask only `changes-since=<start of the previous good poll -
  overlap_s>` (the overlap covers clock skew and rows committed late) and merge the answer by id; DELETED
  servers leave the index. A quiet cloud costs one request returning [].
- changes-since cannot see a build no nova-compute has claimed (nova filters on the cell DB's `updated_at`,
  NULL until then; nova/db/main/api.py, nova/objects/build_request.py): such a build would sit in `scheduling`
  unseen until the next resync. So every `build_list_s` (30 s) a poll also lists `status=BUILD`; a server the
  index holds in BUILD that neither answer lists has left BUILD unseen and leaves the index. The services
  source leaves its endpoint check out of that cycle (services_reads.plan_build_list).
- for a server (nearly) stuck in scheduling, its placement allocations are read once to name the host it was
  cast to (Server.cast_host), so the finding names that nova-compute rather than the scheduler.
- host health (nova-compute services, and L2 agents when a server with a host is in a task_state) so the rules
  can say "and nova-compute on compute-02 is down"; taken from the services source's recent listings through
  the same client when there are some (services_reads.recent_listing). A failure there only makes the host
  health unknown (hosts_error).

History: per server, the task_state, the poll that first saw it and its `updated_at` then, from which
Server.task_since / task_since_basis are derived (models/instances.py). The instance screen's detail is read
on demand by instance_detail(), never per poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from tui.collectors.base import BaseCollector, BuildContext, Collector
from tui.config import Config, OpenStackConfig
from tui.errors import SourceError
from tui.models.finding import Finding
from tui.models.instances import (
    ActionEvent,
    AgentHealth,
    AllocationInfo,
    Fault,
    HostHealth,
    InstanceAction,
    InstanceDetail,
    InstancesSnapshot,
    PollInfo,
    PortInfo,
    Server,
    VolumeInfo,
    in_attention,
)
from tui.openstack.paging import segment
from tui.rules.stuck import instance_findings, threshold_for
from tui.rules.task_states import BUILD_STATES, DEFAULT_STUCK_SECONDS, KNOWN_TASK_STATES
from tui.safetext import clean

if TYPE_CHECKING:
    from tui.openstack.session import OpenStackSession

RESYNC_S = 600.0
BUILD_LIST_S = 30.0  # how often a changes-since poll also lists status=BUILD (module docstring)
OVERLAP_S = 30.0
PAGE_SIZE = 1000  # nova's default max_limit
REQUEST_IDS_PER_POLL = 10  # stuck/ERROR servers whose latest request id is read per poll (cached after)
ACTIONS_WITH_EVENTS = 10  # the latest actions whose events the instance screen reads (one request each)
# The dashboard's first poll (attention_first): the servers its default view shows, by server-side filters,
# before the full list: ERROR, BUILD (with or without a task_state) and every other task_state nova knows
# (`task_state` is an admin filter taking one value). All are asked at once over async HTTP.
ATTENTION_FILTERS: tuple[dict[str, str], ...] = (
    {"status": "ERROR"}, {"status": "BUILD"},
    *({"task_state": t} for t in sorted(KNOWN_TASK_STATES - set(BUILD_STATES))),
)
DOWN_HOSTS_LISTED = 20  # `stacktop snapshot` lists down computes one by one up to this many, else every server
L2_AGENT_TYPES = frozenset({"Open vSwitch agent", "Linux bridge agent", "OVN Controller agent",
                            "OVN Controller Gateway agent", "NIC Switch agent", "Macvtap agent"})


# ---- parsing (pure) -----------------------------------------------------------------------------------------
def parse_time(value: Any) -> datetime | None:
    """The timestamp spellings OpenStack uses ('...Z', '....000000' without zone, 'YYYY-MM-DD HH:MM:SS'), UTC."""
    if not value or not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def parse_fault(raw: Any) -> Fault | None:
    if not isinstance(raw, dict) or not (raw.get("message") or raw.get("code")):
        return None
    code = raw.get("code")
    return Fault(code=int(code) if isinstance(code, int) else None, message=str(raw.get("message") or ""),
                 created=parse_time(raw.get("created")), details=raw.get("details") or None)


def _flavor_name(raw: Any) -> str | None:
    if not isinstance(raw, dict):
        return None
    return _opt_str(raw.get("original_name")) or _opt_str(raw.get("id"))


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    """The objects of a JSON list (anything else in a hostile answer is skipped)."""
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def malformed(what: str, exc: Exception) -> SourceError:
    """A payload of the wrong shape met by the parsing (a field of the wrong type, missing, not an object),
    as a source error an on-call engineer can read instead of Python's own words."""
    if isinstance(exc, KeyError):
        detail = f"field {clean(exc.args[0] if exc.args else '?')!r} missing"
    elif isinstance(exc, AttributeError):
        detail = "an entry that is not an object"
    else:
        detail = "a field of the wrong type or value"
    return SourceError(f"nova: {what}: unexpected answer ({detail}) - a malformed answer from nova-api or a "
                       "proxy in front of it")


def _server_row(row: Any) -> Mapping[str, Any]:
    if not isinstance(row, Mapping) or not isinstance(row.get("id"), str) or not row.get("id"):
        raise SourceError("nova's server list holds an entry without a server id: a malformed answer from "
                          "nova-api (or a proxy in front of it)")
    return row


def parse_server(d: Mapping[str, Any]) -> Server:
    """One /servers/detail row -> Server (task_since left empty: the index fills it)."""
    d = _server_row(d)
    volumes = tuple(str(v["id"]) for v in _dicts(d.get("os-extended-volumes:volumes_attached")) if v.get("id"))
    power = d.get("OS-EXT-STS:power_state")
    return Server(
        id=str(d["id"]),
        name=str(d.get("name") or ""),
        project_id=str(d.get("tenant_id") or d.get("project_id") or ""),
        user_id=str(d.get("user_id") or ""),
        status=str(d.get("status") or ""),
        vm_state=_opt_str(d.get("OS-EXT-STS:vm_state")),
        task_state=_opt_str(d.get("OS-EXT-STS:task_state")),
        power_state=power if isinstance(power, int) and not isinstance(power, bool) else None,
        host=_opt_str(d.get("OS-EXT-SRV-ATTR:host")),
        hypervisor_hostname=_opt_str(d.get("OS-EXT-SRV-ATTR:hypervisor_hostname")),
        availability_zone=_opt_str(d.get("OS-EXT-AZ:availability_zone")),
        flavor=_flavor_name(d.get("flavor")),
        created=parse_time(d.get("created")),
        updated_at=parse_time(d.get("updated")),
        launched_at=parse_time(d.get("OS-SRV-USG:launched_at")),
        fault=parse_fault(d.get("fault")),
        volumes=volumes,
    )


def parse_host_health(services: Iterable[Mapping[str, Any]], agents: Iterable[Mapping[str, Any]] | None
                      ) -> dict[str, HostHealth]:
    """nova-compute services (+ L2 agents, when read) -> host -> HostHealth."""
    by_host: dict[str, list[AgentHealth]] = {}
    for a in _dicts(list(agents)) if agents is not None else ():
        host = a.get("host")
        if not host or not isinstance(host, str):
            continue
        by_host.setdefault(host, []).append(AgentHealth(
            binary=str(a.get("binary") or ""), agent_type=str(a.get("agent_type") or ""),
            alive=a.get("alive") if isinstance(a.get("alive"), bool) else None,
            admin_state_up=a.get("admin_state_up") if isinstance(a.get("admin_state_up"), bool) else None,
            heartbeat=parse_time(a.get("heartbeat_timestamp"))))
    out: dict[str, HostHealth] = {}
    for s in _dicts(list(services)):
        if s.get("binary") != "nova-compute" or not isinstance(s.get("host"), str) or not s.get("host"):
            continue
        host = str(s["host"])
        out[host] = HostHealth(
            host=host, compute_state=s.get("state"), compute_status=s.get("status"),
            forced_down=bool(s.get("forced_down")), disabled_reason=s.get("disabled_reason") or None,
            compute_updated_at=parse_time(s.get("updated_at")), agents=tuple(by_host.pop(host, ())),
            agents_read=agents is not None)
    for host, host_agents in by_host.items():  # agents on hosts without a compute service
        out[host] = HostHealth(host=host, agents=tuple(host_agents), agents_read=True)
    return out


def parse_actions(raw: Iterable[Mapping[str, Any]]) -> tuple[InstanceAction, ...]:
    out = []
    for a in _dicts(list(raw)):
        events = tuple(
            ActionEvent(event=str(e.get("event") or ""), start_time=parse_time(e.get("start_time")),
                        finish_time=parse_time(e.get("finish_time")), result=e.get("result"),
                        host=e.get("host"), traceback=e.get("traceback"))
            for e in _dicts(a.get("events"))
        )
        events = tuple(sorted(events, key=lambda e: e.start_time or datetime.min.replace(tzinfo=UTC),
                              reverse=True))
        out.append(InstanceAction(action=str(a.get("action") or ""), request_id=str(a.get("request_id") or ""),
                                  start_time=parse_time(a.get("start_time")), message=a.get("message"),
                                  user_id=a.get("user_id"), events=events))
    out.sort(key=lambda a: a.start_time or datetime.min.replace(tzinfo=UTC), reverse=True)
    return tuple(out)


def parse_ports(raw: Iterable[Mapping[str, Any]]) -> tuple[PortInfo, ...]:
    return tuple(
        PortInfo(id=str(p.get("id")), network_id=str(p.get("network_id") or ""), status=str(p.get("status") or ""),
                 fixed_ips=tuple(str(ip.get("ip_address")) for ip in _dicts(p.get("fixed_ips"))),
                 binding_host=p.get("binding:host_id") or None, vif_type=p.get("binding:vif_type"),
                 vnic_type=p.get("binding:vnic_type"), mac_address=str(p.get("mac_address") or ""))
        for p in _dicts(list(raw))
    )


def parse_volume(raw: Mapping[str, Any], server_id: str, delete_on_termination: bool | None) -> VolumeInfo:
    mine = [a for a in _dicts(raw.get("attachments")) if a.get("server_id") == server_id]
    att = mine[0] if mine else {}
    return VolumeInfo(id=str(raw.get("id")), name=str(raw.get("name") or ""), status=str(raw.get("status") or ""),
                      size=raw.get("size"), device=att.get("device"),
                      attach_status=(f"attached to this server on {att.get('host_name') or '?'}" if mine
                                     else "not attached to this server (per cinder)"),
                      delete_on_termination=delete_on_termination,
                      backend_host=raw.get("os-vol-host-attr:host"))


# ---- the index (pure: no I/O) -------------------------------------------------------------------------------
class ServerIndex:
    """Servers by id, plus since when each has been in its current task_state."""

    def __init__(self) -> None:
        self.servers: dict[str, Server] = {}
        # the servers in_attention by id, kept with every change: a poll reads them without scanning 10,000
        # servers (an attribute read per server, cache misses: milliseconds a scan)
        self.attention: dict[str, Server] = {}
        self._pos: dict[str, int] = {}  # each server's place in `servers` (insertion order), to order attention
        self._next_pos = 0
        self._track: dict[str, tuple[str, datetime, datetime | None]] = {}
        self._raw_updated: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.servers)

    def replace_all(self, rows: Iterable[Mapping[str, Any]], now: datetime) -> int:
        """A full listing: the index becomes exactly these servers. Returns how many left it.

        A row whose `updated`, status and task_state equal what the index holds is not parsed again (nova
        bumps `updated` on every save): a resync of 10,000 quiet servers costs dict lookups, not parsing."""
        before = set(self.servers)
        fresh: dict[str, Server] = {}
        raw_updated: dict[str, Any] = {}
        for row in rows:  # may be a generator of pages: if it raises, the index is left as it was
            row = _server_row(row)
            if row.get("status") == "DELETED":
                continue
            sid = str(row.get("id"))
            known = self.servers.get(sid)
            if known is not None and self._raw_updated.get(sid) == row.get("updated") \
                    and known.status == row.get("status") \
                    and known.task_state == (row.get("OS-EXT-STS:task_state") or None):
                fresh[sid] = known
                continue
            server = self._tracked(parse_server(row), now)
            raw_updated[sid] = row.get("updated")
            fresh[server.id] = server
        self.servers = fresh
        self.attention = {sid: s for sid, s in fresh.items() if in_attention(s)}
        self._pos = {sid: i for i, sid in enumerate(fresh)}
        self._next_pos = len(fresh)
        self._raw_updated.update(raw_updated)
        for gone in before - set(fresh):
            self._track.pop(gone, None)
            self._raw_updated.pop(gone, None)
        return len(before - set(fresh))

    def merge(self, rows: Iterable[Mapping[str, Any]], now: datetime, seen: set[str] | None = None) -> int:
        """A changes-since answer: upsert by id, DELETED servers leave. Returns how many left. seen: gets the ids
        of every row."""
        left = 0
        for row in rows:
            sid = str(_server_row(row).get("id"))
            if seen is not None:
                seen.add(sid)
            if row.get("status") == "DELETED":
                if self.servers.pop(sid, None) is not None:
                    left += 1
                self._forget(sid)
                continue
            server = self._tracked(parse_server(row), now)
            self._raw_updated[sid] = row.get("updated")
            self._put(server)
        return left

    def _put(self, server: Server) -> None:
        sid = server.id
        if sid not in self.servers:  # a new key goes last in the dict: so does its place
            self._pos[sid] = self._next_pos
            self._next_pos += 1
        self.servers[sid] = server
        if in_attention(server):
            self.attention[sid] = server
        else:
            self.attention.pop(sid, None)

    def _forget(self, sid: str) -> None:
        self.attention.pop(sid, None)
        self._pos.pop(sid, None)
        self._track.pop(sid, None)
        self._raw_updated.pop(sid, None)

    def attention_in_order(self) -> tuple[Server, ...]:
        """attention_of(tuple(servers.values())), from the kept subset: the same servers in the same order."""
        pos = self._pos
        return tuple(sorted(self.attention.values(), key=lambda s: pos[s.id]))

    def drop_unlisted_builds(self, listed: set[str]) -> int:
        """After a status=BUILD list and a changes-since answer (ids in `listed`): servers held in BUILD that
        neither listed left BUILD without an `updated_at` change, i.e. were deleted before any compute claimed
        them (collector docstring). They leave the index; returns how many."""
        gone = [sid for sid, s in self.attention.items() if s.status == "BUILD" and sid not in listed]
        for sid in gone:
            del self.servers[sid]
            self._forget(sid)
        return len(gone)

    def _tracked(self, server: Server, now: datetime) -> Server:
        state = server.phase
        if state is None:
            self._track.pop(server.id, None)
            return server
        track = self._track.get(server.id)
        if track is None or track[0] != state:
            track = (state, now, server.updated_at)
            self._track[server.id] = track
        _, seen, updated = track
        if state == "scheduling" and server.created is not None and server.created < seen:
            # a build is in scheduling from its POST on (no other operation uses that task_state): it began at
            # or before nova's `created`, even for a build first seen late (one changes-since never lists)
            since, basis = server.created, "created"
        elif updated is not None and updated < seen:
            since, basis = updated, "updated_at"
        else:
            since, basis = seen, "observed"
        return dataclasses.replace(server, task_since=since, task_since_basis=basis)


# ---- the collector ------------------------------------------------------------------------------------------
class InstancesCollector(BaseCollector):
    """session: the cloud's OpenStackSession (shared with the services source; the registry builds it); else
    one of its own, whose client comes from client_factory (a tui.openstack OpenStackClient) or the config."""

    name = "instances"

    def __init__(
        self,
        openstack: OpenStackConfig | None = None,
        *,
        client_factory: Callable[[], Any] | None = None,
        session: OpenStackSession | None = None,
        interval: float | None = None,
        timeout: float | None = None,
        stuck: Mapping[str, float] | None = None,
        resync_s: float = RESYNC_S,
        build_list_s: float = BUILD_LIST_S,
        overlap_s: float = OVERLAP_S,
        page_size: int = PAGE_SIZE,
        clock: Callable[[], datetime] | None = None,
        attention_first: bool = False,
    ) -> None:
        self.openstack = openstack or OpenStackConfig()
        # the dashboard's first poll reads only what its default view shows (PollInfo mode "attention",
        # snapshot.partial) and the runner polls again at once for the full list; `snapshot` never does this
        self.attention_first = attention_first
        self.down_hosts_listed = False  # prepare_oneshot
        self.interval = interval if interval is not None else self.openstack.interval
        self.timeout = timeout if timeout is not None else self.openstack.timeout
        self.stuck = dict(stuck or DEFAULT_STUCK_SECONDS)
        self.resync_s = resync_s
        self.build_list_s = build_list_s
        self.overlap_s = overlap_s
        self.page_size = page_size
        self._clock = clock or (lambda: datetime.now(UTC))
        from tui.openstack.session import given_or_own  # here: tui.openstack is not imported at start-up

        self.session, self._own_session = given_or_own(session, self.openstack, client_factory)
        self.index = ServerIndex()
        self._cursor: datetime | None = None  # start of the last good poll (our clock)
        self._last_full: datetime | None = None
        self._last_build: datetime | None = None  # the last poll that listed every BUILD server (full or not)
        self._skew_s = 0.0  # how far ahead of our clock nova's updated_at has been seen
        self._lock = threading.Lock()  # a timed-out poll's thread may still run: never two at once
        self._request_ids: dict[tuple[str, str], str | None] = {}  # (server id, phase or ERROR) -> request id
        self._cast_hosts: dict[str, tuple[str | None, datetime]] = {}  # scheduling server -> (host, read at)
        self._provider_names: dict[str, str | None] = {}  # resource provider uuid -> name
        self.cpu_s = 0.0

    @classmethod
    def from_config(cls, config: Config, *, attention_first: bool = False, session: OpenStackSession | None = None,
                    clock: Callable[[], datetime] | None = None) -> InstancesCollector:
        return cls(config.openstack, stuck=config.thresholds.stuck, attention_first=attention_first, session=session,
                   clock=clock)

    @property
    def timeout_hint(self) -> str:
        """For the runner's timeout line: what hung and the key to raise."""
        where = getattr(getattr(self.session.current, "where", None), "cloud_ref", None) or "the cloud"
        return f"nova did not answer the server list of {where} (is nova-api up? raise [openstack] timeout if " \
               "it is just slow)"

    def client(self) -> Any:
        return self.session.client()

    # -- one poll
    async def collect(self) -> InstancesSnapshot:
        try:
            return await self._collect()
        except (TypeError, KeyError, AttributeError, IndexError, ValueError) as exc:
            raise malformed("servers", exc) from None

    async def _collect(self) -> InstancesSnapshot:
        if self.attention_first and self._cursor is None and not len(self.index):
            self.attention_first = False  # once: the next poll lists every server
            try:
                return await self._collect_attention()
            except SourceError:
                pass  # the full listing below says what is wrong, if anything is
        return await asyncio.to_thread(self._collect_blocking)

    async def _collect_attention(self) -> InstancesSnapshot:
        """The servers worth attention only (ATTENTION_FILTERS, all at once): at 10,000 servers the full list
        is ~20 MB of JSON in 11 pages read one after another (a second or more on a real nova), the filtered
        reads a few KB each. The index is not marked as listed: the next poll lists every server."""
        from tui.openstack.paging import query

        client = await asyncio.to_thread(self.client)
        mv = await asyncio.to_thread(client.compute_microversion)
        params = [{"all_tenants": 1, "limit": self.page_size, **f} for f in ATTENTION_FILTERS]
        answers = await client.aget_json_many("compute", [query("/servers/detail", p) for p in params],
                                              microversion=mv)
        return await asyncio.to_thread(self._attention_snapshot, client, mv, params, answers)

    def _attention_snapshot(self, client: Any, mv: str, params: list[dict[str, Any]], answers: list[Any]
                            ) -> InstancesSnapshot:
        with self._lock:
            cpu0 = time.thread_time()
            now = self._clock()
            rows: dict[str, Mapping[str, Any]] = {}
            requests = len(answers)
            for p, body in zip(params, answers, strict=True):
                requests += self._rest_of_pages(client, mv, p, body, rows)
            self.index.merge(rows.values(), now)
            hosts, hosts_error, extra = self._host_health(self.index.attention_in_order())
            listed: tuple[str, ...] = ()
            read = len(rows)
            if self.down_hosts_listed:
                listed, more_requests, more_rows = self._list_down_hosts(client, mv, hosts, now)
                extra += more_requests
                read += more_rows
            servers = tuple(self.index.servers.values())
            attention = self.index.attention_in_order()
            servers, attention, more = self._with_request_ids(servers, attention, now)
            self.cpu_s = time.thread_time() - cpu0
            poll = PollInfo(mode="attention", requests=requests + extra + more, rows=read)
            return InstancesSnapshot(taken_at=now, servers=servers, hosts=hosts, hosts_error=hosts_error,
                                     poll=poll, poll_interval_s=self.interval,
                                     listed_hosts=listed).with_attention(attention)

    def _rest_of_pages(self, client: Any, mv: str, params: dict[str, Any], body: Any,
                       rows: dict[str, Mapping[str, Any]]) -> int:
        """The servers of one filtered listing's first answer `body` and of its next pages into `rows`; the
        requests made for the next pages."""
        from tui.openstack.paging import next_marker, query

        seen: set[str] = set()
        requests = 0
        while True:
            if isinstance(body, SourceError):
                raise body
            page = body.get("servers")
            if not isinstance(page, list):
                raise SourceError("GET compute /servers/detail: the answer has no 'servers' list")
            for row in page:
                rows[str(_server_row(row).get("id"))] = row
            marker = next_marker(body, "servers_links")  # more than a page in one state: rare
            if not marker or not page or marker in seen:
                return requests
            seen.add(marker)
            body = client.get_json("compute", query("/servers/detail", {**params, "marker": marker}),
                                   microversion=mv, action="listing servers", expect="servers")
            requests += 1

    def _list_down_hosts(self, client: Any, mv: str, hosts: Mapping[str, HostHealth], now: datetime
                         ) -> tuple[tuple[str, ...], int, int]:
        """Every server on each compute whose nova-compute is down (`host` filter), into the index: what the
        triage says about a down compute counts them all. A host whose listing fails is left out (its
        instances unknown). Returns (the hosts listed, requests, servers read)."""
        from tui.openstack.paging import query

        down = sorted(h for h, health in hosts.items() if health.compute_down)
        if len(down) > DOWN_HOSTS_LISTED:  # a rack or a region down: one listing of every server costs less
            try:
                every, requests = self.list_servers()
            except SourceError:
                return (), 0, 0
            self.index.merge(every, now)
            return tuple(down), requests, len(every)
        listed: list[str] = []
        requests = read = 0
        for host in down:
            params = {"all_tenants": 1, "limit": self.page_size, "host": host}
            found: dict[str, Mapping[str, Any]] = {}
            try:
                requests += 1
                first = client.get_json("compute", query("/servers/detail", params), microversion=mv,
                                        action=f"listing the servers on {host}", expect="servers")
                requests += self._rest_of_pages(client, mv, params, first, found)
            except SourceError:
                continue
            self.index.merge(found.values(), now)
            read += len(found)
            listed.append(host)
        return tuple(listed), requests, read

    def prepare_oneshot(self) -> None:
        """`stacktop snapshot`: read the servers worth attention (server-side filters, as the dashboard's first
        poll) plus every server on a compute whose nova-compute is down, not every server: the findings come
        from the first, the triage's count of a down compute's instances from the second."""
        self.attention_first = True
        self.down_hosts_listed = True

    def list_servers(self, changes_since: datetime | None = None) -> tuple[list[dict[str, Any]], int]:
        """Every page of /servers/detail?all_tenants=1 (limit/marker), plain dicts; (rows, requests)."""
        count = [0, 0, ""]
        rows = list(self._server_rows(changes_since, count))
        return rows, int(count[0])

    def _server_rows(self, changes_since: datetime | None, count: list[Any], status: str | None = None
                     ) -> Iterator[dict[str, Any]]:
        """The rows of every page, one page held at a time (a 10,000-server list is ~20 MB of JSON: holding
        every decoded row at once set the process's peak, and so its RSS). count: [requests, rows, newest
        `updated`] as they go. status: only servers in that status (nova's `status` filter)."""
        from tui.openstack.paging import iso_param, next_marker, query

        client = self.client()
        mv = client.compute_microversion()
        params: dict[str, Any] = {"all_tenants": 1, "limit": self.page_size}
        if changes_since is not None:
            params["changes-since"] = iso_param(changes_since)
        if status is not None:
            params["status"] = status
        seen: set[str] = set()
        while True:
            body = client.get_json("compute", query("/servers/detail", params), microversion=mv,
                                   action="listing servers", expect="servers")
            count[0] += 1
            page = body.pop("servers", None)
            if not isinstance(page, list):
                raise SourceError("GET compute /servers/detail: the answer has no 'servers' list")
            size = len(page)
            count[1] += size
            count[2] = max([count[2], *(u for r in page if isinstance(r, Mapping)
                                        and isinstance(u := r.get("updated"), str))])
            marker = next_marker(body, "servers_links")
            del body
            page.reverse()
            while page:  # hand rows out in order and drop them: only one page is alive at a time
                yield page.pop()
            if not marker or not size or marker in seen:
                return
            seen.add(marker)
            params["marker"] = marker

    def _collect_blocking(self) -> InstancesSnapshot:
        with self._lock:
            cpu0 = time.thread_time()
            now = self._clock()
            full = (self._cursor is None or self._last_full is None
                    or (now - self._last_full).total_seconds() >= self.resync_s)
            since: datetime | None = None
            count: list[Any] = [0, 0, ""]  # requests, rows, newest updated
            build_count: list[Any] = [0, 0, ""]  # the same for the status=BUILD list
            build_listed = full or self._last_build is None \
                or (now - self._last_build).total_seconds() >= self.build_list_s
            if full:
                left = self.index.replace_all(self._server_rows(None, count), now)
                self._last_full = now
            else:
                assert self._cursor is not None
                since = self._cursor - timedelta(seconds=self.overlap_s + self._skew_s)
                building: list[dict[str, Any]] = []
                if build_listed:  # asked first: whatever leaves BUILD after it is in the changes-since answer
                    building = list(self._server_rows(None, build_count, status="BUILD"))
                    self.index.merge(building, now)
                listed: set[str] = {str(r.get("id")) for r in building}
                left = self.index.merge(self._server_rows(since, count), now, seen=listed)
                if build_listed:
                    left += self.index.drop_unlisted_builds(listed)
            if build_listed:
                self._last_build = now
                # the services source leaves its endpoint check's turn to that cycle (6 requests a cycle)
                self.session.plan_build_list(now + timedelta(seconds=self.build_list_s))
            requests, nrows = int(count[0]) + int(build_count[0]), int(count[1]) + int(build_count[1])
            self._note_skew([{"updated": count[2]}], now)
            self._cursor = now
            servers = tuple(self.index.servers.values())
            attention = self.index.attention_in_order()  # no scan of 10,000 servers (ServerIndex)
            hosts, hosts_error, extra = self._host_health(attention)
            servers, attention, more = self._with_request_ids(servers, attention, now)
            extra += more
            self.cpu_s = time.thread_time() - cpu0
            poll = PollInfo(mode="full" if full else "changes-since", requests=requests + extra, rows=nrows,
                            changes_since=since, last_full_at=self._last_full, deleted=left,
                            build_listed=build_listed and not full)
            return InstancesSnapshot(taken_at=now, servers=servers, hosts=hosts, hosts_error=hosts_error,
                                     poll=poll, poll_interval_s=self.interval).with_attention(attention)

    def _note_skew(self, rows: list[dict[str, Any]], now: datetime) -> None:
        """Widen the overlap when nova stamps `updated` ahead of our clock (same-format strings sort as time)."""
        newest = max((r.get("updated") or "" for r in rows), default="")
        updated = parse_time(newest)
        if updated is not None:
            ahead = (updated - now).total_seconds()
            if ahead > 1.0:
                self._skew_s = max(self._skew_s, ahead)

    def _with_request_ids(self, servers: tuple[Server, ...], attention: tuple[Server, ...], now: datetime
                          ) -> tuple[tuple[Server, ...], tuple[Server, ...], int]:
        """Attach the latest action's request id to servers past their stuck threshold and ERROR servers, so
        a finding can say which request id to grep for. Read once per (server, phase), at most
        REQUEST_IDS_PER_POLL new ones a poll; a failed read (a busy API timing out) is tried again next poll."""
        wanted: dict[tuple[str, str], Server] = {}
        for s in attention:  # no phase and not ERROR: nothing wanted
            phase = s.phase
            age = s.in_state_for(now)
            # a margin: the rules judge a moment after this poll's `now`, so a server crossing its threshold
            # in between must already carry its request id when the finding is first raised
            margin = max(float(self.interval), 5.0)
            if phase and age is not None and age > threshold_for(self.stuck, phase) - margin:
                wanted[(s.id, phase)] = s
            elif s.status == "ERROR":
                wanted[(s.id, "ERROR")] = s
        self._request_ids = {k: v for k, v in self._request_ids.items() if k in wanted}
        cast, cast_requests = self._with_cast_hosts(attention, [s for (_, phase), s in wanted.items()
                                                                if phase == "scheduling" and not s.host], now)
        if cast:  # some carry their cast host now: the request ids go on those objects
            attention = tuple(cast.get(s.id, s) for s in attention)
        requests = 0
        for key in wanted:
            if key in self._request_ids:
                continue
            if requests >= REQUEST_IDS_PER_POLL:
                break
            requests += 1
            try:
                actions = self.client().instance_actions(key[0])
            except SourceError:
                continue
            latest = max(actions, key=lambda a: a.get("start_time") or "", default=None)
            self._request_ids[key] = (latest or {}).get("request_id") or None
        changed = dict(cast)
        for s in attention if self._request_ids else ():  # outside it: no (id, phase) or (id, "ERROR") key
            rid = self._request_ids.get((s.id, s.phase or ("ERROR" if s.status == "ERROR" else "")))
            if rid:
                changed[s.id] = dataclasses.replace(s, request_id=rid)
        if not changed:
            return servers, attention, requests + cast_requests
        # the changed ones in their places without reading every server: a dict copy and update in C
        by_id = dict(zip((s.id for s in attention), attention, strict=True))
        by_id.update(changed)
        everything = dict(self.index.servers)
        everything.update(changed)
        return tuple(everything.values()), tuple(by_id.values()), requests + cast_requests

    def _with_cast_hosts(self, attention: tuple[Server, ...], scheduling: list[Server], now: datetime
                         ) -> tuple[dict[str, Server], int]:
        """For servers (nearly) stuck in scheduling with no host: the host placement holds their allocation on.
        The scheduler claims it there before the conductor casts the build to that host, so a build that never
        leaves scheduling with an allocation is waiting for that nova-compute to claim it, not for the
        scheduler. One consumer allocations read per server (+ one per new provider's name), at most
        REQUEST_IDS_PER_POLL a poll; no allocation yet is read again after build_list_s."""
        wanted = {s.id for s in scheduling}
        self._cast_hosts = {k: v for k, v in self._cast_hosts.items() if k in wanted}
        requests = 0
        for s in scheduling:
            known = self._cast_hosts.get(s.id)
            if known is not None and (known[0] is not None
                                      or (now - known[1]).total_seconds() < self.build_list_s):
                continue
            if requests >= REQUEST_IDS_PER_POLL:
                break
            try:
                requests += 1
                allocs = self.client().consumer_allocations(s.id).get("allocations")
                host = None
                for rp in allocs if isinstance(allocs, dict) else {}:
                    if rp not in self._provider_names:
                        requests += 1
                        found = self.client().resource_providers(uuid=rp)
                        self._provider_names[rp] = _opt_str(found[0].get("name")) if found else None
                    host = host or self._provider_names[rp]
            except SourceError:
                continue
            self._cast_hosts[s.id] = (host, now)
        if not any(v[0] for v in self._cast_hosts.values()):
            return {}, requests
        # a server in scheduling is in the attention subset: the others cannot match
        return {s.id: dataclasses.replace(s, cast_host=self._cast_hosts[s.id][0]) for s in attention
                if s.id in self._cast_hosts and s.phase == "scheduling" and not s.host}, requests

    def _host_health(self, servers: tuple[Server, ...]) -> tuple[dict[str, HostHealth], str | None, int]:
        """nova-compute services (1 request) and, when a server with a host is mid-task, the L2 agents."""
        client = self.client()
        recent_listing = self.session.recent_listing
        requests = 0
        try:
            # the services source lists every compute service and agent each poll through the same client:
            # reuse a listing up to one interval old instead of asking again (2 requests a poll fewer)
            services = recent_listing("compute", self.interval)
            if services is None:
                services = client.compute_services(binary="nova-compute")
                requests += 1
            agents = None
            if any(s.phase and s.host for s in servers):
                raw_agents = recent_listing("network", self.interval)
                if raw_agents is None:
                    raw_agents = client.network_agents()
                    requests += 1
                agents = [a for a in raw_agents if a.get("agent_type") in L2_AGENT_TYPES]
        except SourceError as exc:
            return {}, str(exc), requests + 1
        return parse_host_health(services, agents), None, requests

    def findings(self, snapshot: InstancesSnapshot, now: datetime) -> list[Finding]:
        return instance_findings(snapshot, now, self.stuck)

    async def aclose(self) -> None:
        """A session handed in belongs to whoever built it (the registry: the cloud's); only our own is closed."""
        if self._own_session:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.session.close)

    # -- the instance screen -------------------------------------------------------------------------------
    async def instance_detail(self, server_id: str) -> InstanceDetail:
        """Everything the instance screen shows, read now (one worker thread). Parts that fail say why in
        InstanceDetail.errors; a server that cannot be read at all raises SourceError (NotFound if gone)."""
        try:
            return await asyncio.to_thread(self._detail_blocking, server_id)
        except (TypeError, KeyError, AttributeError, IndexError, ValueError) as exc:
            raise malformed(f"server {server_id}", exc) from None

    def _detail_blocking(self, server_id: str) -> InstanceDetail:
        client = self.client()
        raw = client.server(server_id)
        server = parse_server(raw)
        known = self.index.servers.get(server_id)
        if known is not None and known.task_state == server.task_state:
            server = dataclasses.replace(server, task_since=known.task_since,
                                         task_since_basis=known.task_since_basis)
        errors: dict[str, str] = {}
        actions: tuple[InstanceAction, ...] = ()
        ports: tuple[PortInfo, ...] = ()
        volumes: list[VolumeInfo] = []
        allocations: tuple[AllocationInfo, ...] | None = None
        health: HostHealth | None = None
        try:
            raw_actions = sorted(client.instance_actions(server_id), key=lambda a: a.get("start_time") or "",
                                 reverse=True)
            for action in raw_actions[:ACTIONS_WITH_EVENTS]:
                if action.get("request_id"):
                    try:
                        action["events"] = client.instance_action(server_id, action["request_id"]).get("events", [])
                    except SourceError as exc:
                        errors["events"] = str(exc)
            actions = parse_actions(raw_actions)
        except SourceError as exc:
            errors["actions"] = str(exc)
        try:
            ports = parse_ports(client.ports(device_id=server_id))
        except SourceError as exc:
            errors["ports"] = str(exc)
        for att in raw.get("os-extended-volumes:volumes_attached") or []:
            vid, delete = att.get("id"), att.get("delete_on_termination")
            if not vid:
                continue
            try:
                vol = client.get_json("volume", f"/volumes/{segment(vid)}",
                                      action=f"showing volume {vid}").get("volume", {})
                volumes.append(parse_volume(vol, server_id, delete))
            except SourceError as exc:
                volumes.append(VolumeInfo(id=vid, status=f"unreadable: {exc}", delete_on_termination=delete))
        try:
            allocs = client.consumer_allocations(server_id).get("allocations")
            if not isinstance(allocs, dict):
                raise SourceError(f"placement's allocations of {server_id} are not an object (a broken answer)")
            names = {}
            for rp in allocs:
                found = client.resource_providers(uuid=rp)
                names[rp] = found[0].get("name") if found else None
            allocations = tuple(AllocationInfo(provider_id=rp, provider_name=names.get(rp),
                                               resources=dict((body or {}).get("resources", {})))
                                for rp, body in allocs.items())
        except SourceError as exc:
            errors["allocations"] = str(exc)
        if server.host:
            try:
                services = client.compute_services(binary="nova-compute", host=server.host)
                agents = [a for a in client.network_agents(host=server.host)
                          if a.get("agent_type") in L2_AGENT_TYPES]
                health = parse_host_health(services, agents).get(server.host)
            except SourceError as exc:
                errors["host"] = str(exc)
        return InstanceDetail(server=server, actions=actions, ports=ports, volumes=tuple(volumes),
                              allocations=allocations, host_health=health, errors=errors)


def build(config: Config, context: BuildContext | None = None) -> list[Collector]:
    """In the dashboard the first poll reads only the servers worth attention (the full list follows at once)."""
    if not config.openstack.cloud:
        return []
    context = context or BuildContext()
    return [InstancesCollector.from_config(config, attention_first=context.dashboard, session=context.session,
                                           clock=context.clock)]
