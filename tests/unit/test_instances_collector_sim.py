"""The instances collector against the simulated cloud (tui.sim, manual clock): what each poll asks and
gets, counted at the simulator: a quiet poll is one request returning no servers (plus, one poll in
three at 10 s polls, the status=BUILD list: test_instances_builds_sim.py); pagination; DELETED servers leave
the index; the full resync."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tui.collectors.instances import ATTENTION_FILTERS, InstancesCollector
from tui.models.instances import attention_of
from tui.openstack import connect
from tui.sim import start_demo
from tui.sim.demo import Demo


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=200, hosts=4, queues=5, churn=0, storyline=False, manual=True)
    try:
        yield d
    finally:
        d.stop()


def collector(demo: Demo, **kw: object) -> InstancesCollector:
    cfg = demo.config().openstack
    return InstancesCollector(cfg, client_factory=lambda: connect(cfg), clock=demo.now, **kw)  # type: ignore[arg-type]


def server_requests(demo: Demo) -> list[str]:
    return [target for _, _, target, _, _ in demo.stats.matching("compute", "/v2.1/servers")]


async def test_quiet_poll_is_one_request_returning_no_servers(demo: Demo) -> None:
    c = collector(demo)
    first = await c.collect()
    assert first.poll.mode == "full" and first.poll.rows == 200 and len(first.servers) == 200
    demo.advance(60)  # past the overlap: nothing changed in the last 60 s
    demo.stats.reset()
    due = await c.collect()  # the BUILD list is due (30 s since the full list): two requests, both empty
    assert due.poll.build_listed and len(server_requests(demo)) == 2 and due.poll.rows == 0
    demo.advance(10)
    demo.stats.reset()
    quiet = await c.collect()
    lists = server_requests(demo)
    assert len(lists) == 1 and "changes-since=" in lists[0], lists
    body_sizes = [size for _, _, target, _, size in demo.stats.matching("compute", "/v2.1/servers")]
    assert body_sizes == [len(b'{"servers": []}')], "the answer carried no server"
    assert quiet.poll.mode == "changes-since" and quiet.poll.rows == 0
    assert quiet.poll.requests == 2, "servers + os-services; no agents without a server in a task_state"
    assert len(quiet.servers) == 200, "the index keeps what the first list gave"
    await c.aclose()


async def test_changes_merge_and_deleted_leave(demo: Demo) -> None:
    c = collector(demo, build_list_s=3600)  # changes-since alone here (the BUILD list: test_instances_builds_sim)
    await c.collect()
    demo.advance(60)
    with demo.engine.lock:
        new = demo.engine.boot("fresh", demo.engine.projects[0], "m1.small", durations=(5.0, 5.0, 5.0, 5.0)).id
        victim = next(iter(demo.engine.instances))
        demo.engine.delete(victim)
    demo.advance(10)  # victim's delete completes in 1-4 s; fresh leaves scheduling at 5 s
    demo.stats.reset()
    snap = await c.collect()
    assert len(server_requests(demo)) == 1
    assert snap.poll.mode == "changes-since" and snap.poll.rows == 2 and snap.poll.deleted == 1
    assert victim not in c.index.servers and new in c.index.servers
    assert snap.server(new) is not None and snap.server(new).status == "BUILD"  # type: ignore[union-attr]
    assert snap.poll.requests == 3, "a server with a host in a task_state: the L2 agents are read too"
    assert snap.hosts and all(h.agents_read for h in snap.hosts.values() if h.compute_state)
    await c.aclose()


async def test_pagination_and_full_resync(demo: Demo) -> None:
    c = collector(demo, page_size=64, resync_s=300)
    demo.stats.reset()
    snap = await c.collect()
    lists = server_requests(demo)
    assert len(lists) == 4 and snap.poll.requests == 5, lists  # 64+64+64+8 servers, + os-services
    assert "marker=" in lists[1] and len(snap.servers) == 200
    assert len({s.id for s in snap.servers}) == 200
    demo.advance(301)
    demo.stats.reset()
    again = await c.collect()
    assert again.poll.mode == "full" and len(server_requests(demo)) == 4
    assert "changes-since" not in " ".join(server_requests(demo))
    await c.aclose()


async def test_request_id_read_once_for_a_stuck_server(demo: Demo) -> None:
    c = collector(demo, stuck={"spawning": 20.0, "default": 1800.0})
    await c.collect()
    with demo.engine.lock:
        sid = demo.engine.boot("slow", demo.engine.projects[0], "m1.small",
                               durations=(1.0, 1.0, 1.0, 600.0)).id
        create = demo.engine.instances[sid].actions[-1].request_id  # type: ignore[index]
    demo.advance(30)  # spawning since ~3.5 s: > 20 s
    demo.stats.reset()
    snap = await c.collect()
    s = snap.server(sid)
    assert s is not None and s.task_state == "spawning" and s.request_id == create
    # the collector hands its own scan to the snapshot: the same servers (with their request ids) as a new scan
    assert snap.attention == attention_of(snap.servers) and s in snap.attention
    assert all(a is b for a, b in zip(snap.attention, attention_of(snap.servers), strict=True))
    assert len(demo.stats.matching("compute", f"/v2.1/servers/{sid}/os-instance-actions")) == 1
    f = next(f for f in c.findings(snap, demo.now()) if f.kind == "instance.stuck")
    assert f.next_step.endswith(f"(grep {create})")
    demo.advance(2)
    demo.stats.reset()
    again = await c.collect()
    assert again.server(sid).request_id == create  # type: ignore[union-attr]
    assert demo.stats.matching("compute", f"/v2.1/servers/{sid}/os-instance-actions") == [], "cached"
    await c.aclose()


async def test_attention_first_reads_what_the_default_view_shows_then_every_server(demo: Demo) -> None:
    """The dashboard's first poll: only ERROR, BUILD and servers in a task_state (server-side filters, all
    at once), marked partial; the next poll lists every server and keeps what the first one tracked."""
    with demo.engine.lock:
        ids = list(demo.engine.instances)
        err, busy = demo.engine.instances[ids[0]], demo.engine.instances[ids[1]]
        err.status, err.vm_state = "ERROR", "error"
        err.touch(demo.engine.t)
        busy.task_state = "rebooting"
        busy.touch(demo.engine.t)
        built = demo.engine.boot("fresh", demo.engine.projects[0], "m1.small", durations=(30.0, 5.0, 5.0, 5.0)).id
    c = collector(demo, attention_first=True)
    demo.stats.reset()
    first = await c.collect()
    assert first.partial and first.poll.mode == "attention"
    assert {s.id for s in first.servers} == {err.id, busy.id, built}
    lists = [t for t in server_requests(demo) if t.startswith("/v2.1/servers/detail")]
    assert len(lists) == len(ATTENTION_FILTERS), lists
    assert any("task_state=rebooting" in t for t in lists) and any("status=ERROR" in t for t in lists)
    second = await c.collect()
    assert not second.partial and second.poll.mode == "full" and len(second.servers) == 201
    tracked, again = first.server(built), second.server(built)
    assert tracked is not None and again is not None and again.task_since == tracked.task_since
    demo.advance(60)
    third = await c.collect()
    assert third.poll.mode == "changes-since", "attention first happens once"
    await c.aclose()


async def test_without_attention_first_the_first_poll_lists_every_server(demo: Demo) -> None:
    first = await collector(demo).collect()
    assert not first.partial and first.poll.mode == "full" and len(first.servers) == 200
