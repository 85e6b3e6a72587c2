"""A steady cycle of the OpenStack panes (services + instances) is at most 6 requests, every cycle (issue #12).

The services source's steady poll is 5 requests (Keystone probe, three listings, one endpoint check in turn),
the instances source's 1 (changes-since) and, every build_list_s, 1 more (status=BUILD: builds changes-since
cannot see). The services source leaves its endpoint check's turn to the cycle without that listing, and its
turn skips the types whose listing answered (compute, network, block-storage). Against the simulated cloud on a
manual clock, both collectors sharing one session as in the app, in the benchmark's order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tui.collectors.instances import InstancesCollector
from tui.collectors.services import ServicesCollector
from tui.openstack import OpenStackSession, connect
from tui.sim import start_demo
from tui.sim.demo import Demo
from tui.sim.faults import Faults


@pytest.fixture
def demo() -> Iterator[Demo]:
    d = start_demo(instances=40, hosts=3, queues=5, churn=0, storyline=False, manual=True)
    try:
        yield d
    finally:
        d.stop()


def collectors(demo: Demo) -> tuple[ServicesCollector, InstancesCollector]:
    cfg = demo.config()
    client = connect(cfg.openstack)
    session = OpenStackSession(cfg.openstack, client_factory=lambda: client)  # one per cloud, as in the app
    services = ServicesCollector(cfg.openstack, cfg.thresholds, session=session, clock=demo.now)
    instances = InstancesCollector(cfg.openstack, session=session, clock=demo.now)
    return services, instances


def served(demo: Demo) -> list[tuple[str, str]]:
    return [(service, target) for service, _, target, _, _ in demo.stats.log]


def endpoint_checks(log: list[tuple[str, str]]) -> list[str]:
    """The services source's version GETs in a cycle's requests: neither a listing nor the Keystone probe (the
    cycle's first GET of identity's auth URL)."""
    rest = [(service, target) for service, target in log
            if not any(part in target for part in ("/os-services", "/agents", "/servers"))]
    probe = next(i for i, (service, _) in enumerate(rest) if service == "identity")
    return [service for i, (service, _) in enumerate(rest) if i != probe]


async def cycle(demo: Demo, services: ServicesCollector, instances: InstancesCollector) -> tuple[Any, Any, list]:
    demo.stats.reset()
    s_snap = await services.collect()
    i_snap = await instances.collect()
    return s_snap, i_snap, served(demo)


async def test_every_steady_cycle_is_at_most_six_requests_and_every_endpoint_still_gets_checked(demo: Demo) -> None:
    services, instances = collectors(demo)
    try:
        await cycle(demo, services, instances)  # the first: token, discovery, every endpoint, every server
        per_cycle, builds, checked = [], [], Counter()
        for _ in range(12):
            demo.advance(10)
            s_snap, i_snap, log = await cycle(demo, services, instances)
            assert s_snap.keystone.ok and not [c for c in s_snap.catalog if not c.ok]
            per_cycle.append(len(log))
            builds.append(i_snap.poll.build_listed)
            checks = endpoint_checks(log)
            assert len(checks) == (0 if i_snap.poll.build_listed else 1), (log, i_snap.poll)
            checked.update(checks)
        assert max(per_cycle) <= 6, per_cycle
        assert builds.count(True) == 4, builds  # every 30 s: the hidden-build listing is not given up
        # the turn passes over the types whose listing answered; the others are each checked in turn
        catalog = {c.service_type for c in s_snap.catalog}
        unproven = catalog - {"compute", "network", "block-storage"}
        assert {"identity", "image", "placement"} <= unproven, catalog
        assert set(checked) == unproven, checked
        assert min(checked.values()) >= 2, checked
    finally:
        services.session.close()


async def test_a_failing_endpoint_is_rechecked_on_every_poll_even_the_build_cycle(demo: Demo) -> None:
    services, instances = collectors(demo)
    try:
        await cycle(demo, services, instances)
        faults = Faults(demo)
        faults.set("placement", "500")
        try:
            seen = []
            for _ in range(6):
                demo.advance(10)
                s_snap, i_snap, log = await cycle(demo, services, instances)
                placement = {c.service_type: c for c in s_snap.catalog}["placement"]
                seen.append((i_snap.poll.build_listed, "placement" in endpoint_checks(log), placement.ok))
            failing_from = next(i for i, (_, _, ok) in enumerate(seen) if not ok)
            # once it failed, placement is checked on every poll, BUILD cycle or not
            assert all(asked and not ok for _, asked, ok in seen[failing_from:]), seen
            assert any(build for build, _, _ in seen[failing_from + 1:]), seen
        finally:
            faults.clear()
        demo.advance(10)
        s_snap, _, _ = await cycle(demo, services, instances)
        assert {c.service_type: c for c in s_snap.catalog}["placement"].ok  # the recovery is seen at once
    finally:
        services.session.close()


async def services_alone(demo: Demo, polls: int, before_each: Any = None) -> list[int]:
    """After one cycle of both sources, `polls` services polls 10 s apart with no instances poll: the endpoint
    checks each made. before_each(services) runs before each poll."""
    services, instances = collectors(demo)
    try:
        await cycle(demo, services, instances)
        checks = []
        for _ in range(polls):
            demo.advance(10)
            if before_each is not None:
                before_each(services)
            demo.stats.reset()
            snap = await services.collect()
            assert snap.keystone.ok
            checks.append(len(endpoint_checks(served(demo))))
        return checks
    finally:
        services.session.close()


async def test_the_turn_does_not_wait_for_an_instances_source_that_stopped_polling(demo: Demo) -> None:
    """The BUILD listing is planned but its source stops (failing, backing off, a cloud not on screen): the
    services source leaves its turn at most once, then checks an endpoint on every poll again."""
    checks = await services_alone(demo, 6)
    # planned for 30 s after the first poll: that poll leaves its turn, none after it (overdue)
    assert checks == [1, 1, 0, 1, 1, 1], checks


async def test_the_turn_is_never_left_two_polls_in_a_row(demo: Demo) -> None:
    """Whatever the timing of the two sources (here: the BUILD listing planned at the services poll's time every
    poll), the services source checks an endpoint at least every other poll."""
    checks = await services_alone(demo, 6, lambda services: services.session.plan_build_list(demo.now()))
    assert checks == [0, 1, 0, 1, 0, 1], checks
