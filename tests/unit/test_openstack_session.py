"""OpenStackSession: a cloud's client and the coordination state of its services and instances sources, held
by the object the registry hands to both (no module-level state: two clouds never see each other's)."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from tui.collectors.registry import build_collectors
from tui.config import Config, OpenStackConfig
from tui.openstack.session import OpenStackSession

T0 = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


def test_one_client_built_once_even_when_asked_from_several_threads() -> None:
    built = []

    def factory() -> object:
        time.sleep(0.05)
        built.append(object())
        return built[-1]

    session = OpenStackSession(OpenStackConfig(cloud="x"), client_factory=factory)
    assert session.current is None
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(session.client())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and all(c is built[0] for c in got) and session.current is built[0]


def test_recent_listing_is_kept_for_max_age_and_per_session() -> None:
    a, b = OpenStackSession(OpenStackConfig(cloud="a")), OpenStackSession(OpenStackConfig(cloud="b"))
    rows = [{"binary": "nova-compute", "host": "c1"}]
    a.remember("compute", rows)
    assert a.recent_listing("compute", 60) == rows
    assert a.recent_listing("network", 60) is None
    assert b.recent_listing("compute", 60) is None, "another cloud's session sees nothing of it"
    assert a.recent_listing("compute", 0.0) is None, "older than max_age: read it yourself"


def test_build_list_due_near_within_the_window_not_when_overdue() -> None:
    session = OpenStackSession(OpenStackConfig(cloud="x"))
    assert not session.build_list_due_near(T0, 5), "nothing planned"
    session.plan_build_list(T0 + timedelta(seconds=4))
    assert session.build_list_due_near(T0, 5)
    assert session.build_list_due_near(T0 + timedelta(seconds=8), 5), "just after it was due"
    assert not session.build_list_due_near(T0 + timedelta(seconds=10), 5), "overdue: that source is not polling"
    assert not session.build_list_due_near(T0 - timedelta(seconds=2), 5), "not yet near"


def test_the_registry_hands_one_session_per_cloud_to_both_openstack_sources() -> None:
    config = Config(openstack=OpenStackConfig(cloud="c"))
    first = {c.name: c for c in build_collectors(config, dashboard=True)}
    second = {c.name: c for c in build_collectors(config)}
    assert first["services"].session is first["instances"].session  # type: ignore[attr-defined]
    assert first["services"].session is not second["services"].session  # type: ignore[attr-defined]
    assert first["services"].session.light_first == float("inf")  # type: ignore[attr-defined]
    assert second["services"].session.light_first == float("inf")  # type: ignore[attr-defined]
