"""Builds that changes-since cannot see, on the real test cloud (nova 34).

nova filters changes-since on the cell DB's updated_at, NULL until a nova-compute claims the build; build
requests (from the POST until the conductor has scheduled the build) are listed whatever changes-since says
(nova/objects/build_request.py). So a build the conductor cast to a nova-compute that is gone (not yet reported
down, or forced there) sits in `scheduling` with no host and no changes-since answer ever lists it; with
nova-conductor or nova-scheduler stopped the build request stays and is listed (measured: see the collector's
docstring). stacktop's instances collector, already on changes-since polls, must still see it (its status=BUILD
list, every build_list_s) and raise instance.stuck in scheduling after the threshold, naming the nova-compute
placement holds the build's allocation on (the scheduler's choice) as its owner."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.integration.instances.conftest import POLL_S, make_collector
from tests.testbed.openstack import OpenStackCloud, server_on, service_killed
from tests.testbed.poller import Poller
from tests.testbed.wait import wait_for
from tui.openstack.paging import iso_param
from tui.rules.task_states import DEFAULT_STUCK_SECONDS

pytestmark = pytest.mark.integration

SCHEDULING_S = 15.0  # the test's stuck threshold for scheduling (default 120 s)


def listed_ids(conn: Any, params: str) -> set[str]:
    body = conn.compute.get(f"/servers/detail?all_tenants=1&{params}", microversion="2.96").json()
    return {s["id"] for s in body["servers"]}


async def test_build_cast_to_a_stopped_compute_is_seen_by_changes_since_polls_and_stuck_in_scheduling(
        healthy: Any, openstack_cloud: OpenStackCloud) -> None:
    collector = make_collector(openstack_cloud, stuck={**DEFAULT_STUCK_SECONDS, "scheduling": SCHEDULING_S})
    poller = Poller(collector, POLL_S)
    try:
        assert (await poller.once()).snapshot.poll.mode == "full"
        steady = await poller.once()
        assert steady.snapshot.poll.mode == "changes-since", "the steady state: changes-since polls"
        since = iso_param(steady.snapshot.taken_at - timedelta(seconds=5))
        with service_killed(healthy, "nova-compute-01", wait_down=False), \
                server_on(healthy, "compute-01", wait=False) as srv:
            # nova's side first: once the conductor has cast the build to the stopped compute, changes-since
            # (from before the POST) omits it and status=BUILD lists it. No stacktop poll saw its build request.
            wait_for(lambda: srv.id not in listed_ids(healthy, f"changes-since={since}")
                     and srv.id in listed_ids(healthy, "status=BUILD"),
                     timeout=60, what=f"nova to list {srv.id} under status=BUILD only (cast to compute-01)")
            hidden_at = datetime.now(UTC)
            before = len(poller.polls)
            seen = await poller.until(lambda p: p.snapshot.server(srv.id) is not None,
                                      timeout=collector.build_list_s + 10 * POLL_S,
                                      what=f"stacktop's instances collector to list {srv.id}")
            polls = len(poller.polls) - before
            assert polls <= math.ceil(collector.build_list_s / POLL_S) + 2, f"seen after {polls} polls"
            assert seen.snapshot.poll.mode == "changes-since" and seen.snapshot.poll.build_listed
            s = seen.snapshot.server(srv.id)
            assert s is not None and (s.status, s.task_state, s.host) == ("BUILD", "scheduling", None)
            stuck = await poller.until(lambda p: p.about(srv.id, "instance.stuck"),
                                       timeout=SCHEDULING_S + 20 * POLL_S,
                                       what=f"instance.stuck for {srv.id} in scheduling")
            f = stuck.about(srv.id, "instance.stuck")
            assert f is not None and f.evidence["phase"] == "scheduling"
            assert f.evidence["since_basis"] == "created", "counted from nova's created, not from first sight"
            # the scheduler chose compute-01 (placement holds the allocation there) and the conductor cast the
            # build to it: the owner is that nova-compute, not the scheduler
            assert f.evidence["cast_host"] == "compute-01" and f.evidence["host"] == "compute-01"
            assert f.evidence["owner"] == "nova-compute" and "owner nova-compute on compute-01" in f.summary
            assert all(p.snapshot.poll.mode == "changes-since" for p in poller.polls[1:]), "no resync helped"
            assert (datetime.now(UTC) - hidden_at).total_seconds() < collector.resync_s
    finally:
        await collector.aclose()


async def test_build_request_with_the_conductor_stopped_is_listed_by_changes_since(
        healthy: Any, openstack_cloud: OpenStackCloud) -> None:
    """The other half of nova's rule, which the simulator copies: while nova-conductor is stopped the build
    stays a build request, listed by changes-since whatever its time (no status=BUILD list needed), and it is
    stuck in scheduling counted from its created."""
    collector = make_collector(openstack_cloud, stuck={**DEFAULT_STUCK_SECONDS, "scheduling": SCHEDULING_S},
                               build_list_s=3600.0)  # changes-since alone
    poller = Poller(collector, POLL_S)
    try:
        assert (await poller.once()).snapshot.poll.mode == "full"
        with service_killed(healthy, "nova-conductor", wait_down=False), \
                server_on(healthy, None, wait=False) as srv:
            since = iso_param(datetime.now(UTC) + timedelta(seconds=30))  # later than any updated_at now
            assert srv.id in listed_ids(healthy, f"changes-since={since}"), "a build request ignores changes-since"
            stuck = await poller.until(lambda p: p.about(srv.id, "instance.stuck"),
                                       timeout=SCHEDULING_S + 20 * POLL_S,
                                       what=f"instance.stuck for {srv.id} in scheduling")
            assert not any(p.snapshot.poll.build_listed for p in poller.polls)
            f = stuck.about(srv.id, "instance.stuck")
            assert f is not None and f.evidence["phase"] == "scheduling" and f.evidence["host"] is None
            assert f.evidence["owner"] == "nova-scheduler" and f.evidence["since_basis"] == "created"
    finally:
        await collector.aclose()
