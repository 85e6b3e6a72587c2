"""Drivers: poll the cloud (read-only, through tui.openstack) and the configured logs, feed the pure exercises.

Each driver is a coroutine that runs until its exercise is done, `stop` is set or its deadline passes, calls
`on_update(exercise)` after every poll (the trace screen redraws from it) and returns the exercise. Blocking
reads run in worker threads. Polls are spaced `interval` apart from start to start; a slow answer delays the
next poll instead of stacking them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from tui.config import LogSource
from tui.errors import SourceError
from tui.exercises.boot_trace import BootTrace
from tui.exercises.down_lag import DownLag, ServiceSample
from tui.exercises.hostlogs import LogTarget, all_targets, read_all
from tui.exercises.request_trace import RequestTrace, instance_ids
from tui.models.instances import Server

Clock = Callable[[], float]
MAX_NOTES = 5


async def _pause(stop: asyncio.Event | None, delay: float) -> bool:
    """Sleep `delay` s, or less when `stop` is set. True when stopped."""
    if stop is None:
        await asyncio.sleep(max(0.0, delay))
        return False
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=max(0.0, delay))
    return stop.is_set()


def _parse(raw: dict[str, Any]) -> Server:
    from tui.collectors.instances import parse_server

    return parse_server(raw)


def _note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES and text not in notes:
        notes.append(text)


# ------------------------------------------------------------------------------------------- boot trace
def find_new_server(client: Any, since: float, known: set[str], name: str | None = None) -> Server | None:
    """The oldest server created at/after `since` (nova's created has 1 s resolution) not in `known`, named
    `name` when given. Servers still being scheduled are listed too (nova lists build requests); between the
    scheduler's pick and the compute's claim a new server's updated_at is NULL and changes-since misses it,
    so the BUILD listing is read as well."""
    rows = client.servers(changes_since=datetime.fromtimestamp(since - 2, UTC))
    rows = rows + client.servers(status="BUILD")
    fresh = []
    seen: set[str] = set()
    for row in rows:
        server = _parse(row)
        if server.id in seen:
            continue
        seen.add(server.id)
        if server.id in known or server.status == "DELETED" or server.created is None:
            continue
        if name and server.name != name:
            continue
        if server.created.timestamp() >= int(since) - 1:
            fresh.append(server)
    return min(fresh, key=lambda s: (s.created, s.id)) if fresh else None


def create_events(client: Any, server_id: str) -> tuple[str | None, tuple[Any, ...]]:
    """(request id, events) of the server's `create` action."""
    from tui.collectors.instances import parse_actions

    actions = client.instance_actions(server_id)
    create = next((a for a in actions if a.get("action") == "create"), None)
    if create is None or not create.get("request_id"):
        return None, ()
    detail = client.instance_action(server_id, create["request_id"])
    parsed = parse_actions([detail])
    return create["request_id"], parsed[0].events if parsed else ()


async def run_boot_trace(client: Any, trace: BootTrace, *, timeout_s: float = 900.0,
                         on_update: Callable[[BootTrace], None] | None = None, stop: asyncio.Event | None = None,
                         clock: Clock = time.time) -> BootTrace:
    """Follow trace.server_id (or, when None, the next server created after the start, named trace.name when
    set) until ACTIVE/ERROR. In that watch mode the listing row that reveals the server is its first poll."""
    start = clock()
    trace.started_at = trace.started_at or start
    deadline = start + timeout_s
    update = on_update or (lambda t: None)
    if trace.server_id is None:
        recent = await asyncio.to_thread(client.servers, changes_since=datetime.fromtimestamp(start - 2, UTC))
        known = {str(r.get("id")) for r in recent}
        while trace.server_id is None:
            t0 = clock()
            try:
                found = await asyncio.to_thread(find_new_server, client, start, known, trace.name or None)
            except SourceError as exc:
                _note(trace.notes, f"listing servers failed: {exc}")
                found = None
            if found is not None:
                trace.server_id = found.id
                trace.observe(found, clock(), clock() - t0)
                break
            update(trace)
            if clock() > deadline:
                trace.finish("timed out (no new server)", clock())
                return trace
            if await _pause(stop, trace.interval - (clock() - t0)):
                trace.finish("stopped", clock())
                return trace
    from tui.openstack.errors import NotFound

    while not trace.done:
        t0 = clock()
        try:
            raw = await asyncio.to_thread(client.server, trace.server_id)
            trace.observe(_parse(raw), clock(), clock() - t0)
        except NotFound:
            trace.gone(clock())
        except SourceError as exc:
            _note(trace.notes, f"a poll failed: {exc}")
        update(trace)
        if trace.done:
            break
        if clock() > deadline:
            trace.finish("timed out", clock())
            break
        if await _pause(stop, trace.interval - (clock() - t0)):
            trace.finish("stopped", clock())
            break
    if trace.server_id and trace.outcome != "DELETED":
        try:
            rid, events = await asyncio.to_thread(create_events, client, trace.server_id)
            trace.add_events(rid, events)
        except SourceError as exc:
            _note(trace.notes, f"nova's events could not be read: {exc}")
    update(trace)
    return trace


# ------------------------------------------------------------------------------------- compute-down lag
def service_sample(client: Any, host: str, binary: str, clock: Clock) -> ServiceSample:
    from tui.collectors.instances import parse_time
    from tui.openstack.paging import query
    from tui.openstack.services_reads import dated_get

    body, date = dated_get(client, "compute", query("/os-services", {"host": host, "binary": binary}),
                           microversion=client.compute_microversion(), action=f"showing {binary} on {host}")
    at = clock()
    rows = [r for r in body.get("services", []) if r.get("host") == host and r.get("binary") == binary]
    if not rows:
        return ServiceSample(at=at, state="?", found=False, api_date=date.timestamp() if date else None)
    row = rows[0]
    updated = parse_time(row.get("updated_at"))
    return ServiceSample(at=at, state=str(row.get("state")), status=str(row.get("status")),
                         updated_at=updated.timestamp() if updated else None,
                         forced_down=bool(row.get("forced_down")),
                         api_date=date.timestamp() if date else None)


def host_servers(client: Any, host: str | None, since: float | None) -> list[Server]:
    params: dict[str, Any] = {"host": host} if host else {}
    if since is not None:
        params["changes_since"] = datetime.fromtimestamp(since, UTC)
    return [_parse(r) for r in client.servers(**params)]


def changed_or_building(client: Any, since: float) -> list[Server]:
    """Servers changed since `since`, plus every server in BUILD. changes-since alone misses a build cast to a
    dead compute: nova filters on updated_at, which stays NULL until a nova-compute claims the build (its
    build request, listed whatever changes-since says, is gone once the conductor has picked the host)."""
    rows = host_servers(client, None, since)
    listed = {r.id for r in rows}
    return rows + [r for r in (_parse(x) for x in client.servers(status="BUILD")) if r.id not in listed]


def _follow(server: Server, start: float) -> bool:
    """Servers worth following: building, mid-task, or created during the trace."""
    created = server.created.timestamp() if server.created else 0.0
    return server.status == "BUILD" or bool(server.task_state) or created >= int(start) - 1


def _queued(server: Server, start: float) -> bool:
    """Created during the trace, BUILD and no host yet: nova shows the host only once a nova-compute claimed
    the build, so a build cast to the dead compute waits here, hostless."""
    created = server.created.timestamp() if server.created else 0.0
    return server.status == "BUILD" and not server.host and created >= int(start) - 1


def lag_done(lag: DownLag) -> bool:
    """Default end: the service was seen down and back up, and every followed server settled."""
    return lag.down_seen and lag.back_up_poll is not None and all(t.done for t in lag.servers.values())


async def run_down_lag(client: Any, lag: DownLag, *, timeout_s: float = 1800.0,
                       stop_when: Callable[[DownLag], bool] = lag_done,
                       on_update: Callable[[DownLag], None] | None = None, stop: asyncio.Event | None = None,
                       clock: Clock = time.time, servers_every_s: float = 2.0) -> DownLag:
    """Poll the service row every lag.interval and the host's servers every servers_every_s."""
    start = clock()
    lag.started_at = lag.started_at or start
    deadline = start + timeout_s
    update = on_update or (lambda x: None)
    last: dict[str, Server] = {}
    next_servers = start
    first_listing = True
    while True:
        t0 = clock()
        try:
            lag.observe(await asyncio.to_thread(service_sample, client, lag.host, lag.binary, clock))
        except SourceError as exc:
            _note(lag.notes, f"a poll of the service failed: {exc}")
        if t0 >= next_servers:
            next_servers = t0 + servers_every_s
            try:
                if first_listing:  # what already runs or builds on the host
                    rows = await asyncio.to_thread(host_servers, client, lag.host, None)
                    first_listing = False
                else:  # every change since the start and every build: the host's servers, hostless new builds
                    rows = await asyncio.to_thread(changed_or_building, client, start - 5)
                now = clock()
                seen = set()
                for server in rows:
                    seen.add(server.id)
                    followed = server.id in lag.servers
                    if server.status == "DELETED":
                        lag.server_gone(server.id, now)
                    elif server.host and server.host != lag.host:
                        if followed and not lag.servers[server.id].done:  # it was built elsewhere
                            lag.servers.pop(server.id)
                            last.pop(server.id, None)
                    elif (server.host == lag.host and (followed or _follow(server, start))) or followed \
                            or _queued(server, start):
                        last[server.id] = server
                        lag.observe_server(server, now)
                for sid, server in last.items():  # unchanged since: still in the same state
                    if sid not in seen and not lag.servers[sid].done:
                        lag.observe_server(server, now)
            except SourceError as exc:
                _note(lag.notes, f"listing the servers on {lag.host} failed: {exc}")
        update(lag)
        if stop_when(lag):
            lag.stop(clock(), "done")
            break
        if clock() > deadline:
            lag.stop(clock(), f"timed out after {timeout_s:g} s")
            break
        if await _pause(stop, lag.interval - (clock() - t0)):
            lag.stop(clock(), "stopped by the operator")
            break
    update(lag)
    return lag


# -------------------------------------------------------------------------------------------- logs
def grep_all(sources: Iterable[LogSource], needles: list[str]) -> list[tuple[LogTarget, list[str], str | None]]:
    """Every source on every host it runs on (tui.exercises.hostlogs): the lines naming any needle."""
    wanted = [n for n in needles if n]
    return read_all(all_targets(sources), lambda line: any(n in line for n in wanted))


def find_action(client: Any, request_id: str, instance_id: str | None, candidates: Iterable[str] = (),
                recent_s: float = 3600.0, limit: int = 30) -> tuple[str | None, Any]:
    """(instance id, InstanceAction with events) of the request: the given instance, else candidates, else
    the servers changed in the last `recent_s` (newest first, at most `limit`). (None, None) if not found."""
    from tui.collectors.instances import parse_actions
    from tui.openstack.errors import NotFound

    order = [i for i in [instance_id, *candidates] if i]
    if not order:
        since = datetime.now(UTC) - timedelta(seconds=recent_s)
        rows = sorted(client.servers(changes_since=since), key=lambda r: r.get("updated") or "", reverse=True)
        order = [str(r["id"]) for r in rows[:limit]]
    for sid in dict.fromkeys(order):
        try:
            detail = client.instance_action(sid, request_id)
        except NotFound:
            continue
        if detail:
            parsed = parse_actions([detail])
            return sid, parsed[0] if parsed else None
    return None, None


async def run_request_trace(client: Any | None, request_id: str, sources: Iterable[LogSource], *,
                            candidates: Iterable[str] = (), instance_id: str | None = None,
                            on_update: Callable[[RequestTrace], None] | None = None) -> RequestTrace:
    """Grep every source for the request id, learn the instance id (logs, else nova), read nova's action
    and events for it, then grep again for the instance id (nova-compute logs by instance id)."""
    trace = RequestTrace(request_id=request_id, instance_id=instance_id)
    update = on_update or (lambda t: None)
    srcs = list(sources)
    if not srcs:
        _note(trace.notes, "No [[recorder.log_sources]] configured: only nova's own action and events are shown.")
    first = await asyncio.to_thread(grep_all, srcs, [request_id])
    for src, lines, err in first:
        trace.add_lines(src.service, src.label, lines)
        if err:
            trace.source_failed(src.service, src.label, err)
    if trace.instance_id is None:
        found = instance_ids(h.line for h in trace.hits)
        trace.instance_id = found[0] if found else None
    update(trace)
    if client is not None:
        try:
            sid, action = await asyncio.to_thread(find_action, client, request_id, trace.instance_id,
                                                  list(candidates))
            trace.action = action
            trace.instance_id = trace.instance_id or sid
            if action is None:
                _note(trace.notes, "Nova has no action with this request id for the servers looked at "
                      "(not a server request, or the server is older than an hour: give its id).")
        except SourceError as exc:
            _note(trace.notes, f"nova's actions could not be read: {exc}")
    if trace.instance_id:
        again = await asyncio.to_thread(grep_all, srcs, [trace.instance_id])
        for src, lines, _err in again:
            trace.add_lines(src.service, src.label, [ln for ln in lines if request_id not in ln])
    update(trace)
    return trace
