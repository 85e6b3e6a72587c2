"""One slow answer is not an outage: a Keystone probe or an endpoint check that times out after answering the
poll before is a warning (keystone.slow, catalog.endpoint_slow) and raises no triage hint; the next poll that
gets no answer either makes it unreachable (critical, and for Keystone the triage hint). Refusals are not
debounced: they are unreachable at once. (Seen in CI on a loaded machine: one 3.75 s Keystone timeout made a
critical 'Keystone does not answer' hint while nova-conductor was the thing stopped.)"""

from __future__ import annotations

from typing import Any

from tests.reliability.world import World
from tui.rules.triage import triage_hints


def _kinds(obs: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(f.kind, f.subject): f.severity for f in obs["services"].findings}


async def test_keystone_timeout_is_slow_once_then_unreachable(sim: Any) -> None:
    world: World = sim.shared_world()
    try:
        before = await world.poll()
        assert before["services"].snapshot.keystone.ok and not before["services"].snapshot.keystone.late
        url = before["services"].snapshot.keystone.auth_url
        sim.faults.set("keystone", "hang")
        try:
            first = await world.poll()
            ks = first["services"].snapshot.keystone
            assert ks.ok and ks.late and "timed out" in ks.late, ks
            assert _kinds(first).get(("keystone.slow", url)) == "warning", _kinds(first)
            assert ("keystone.unreachable", url) not in _kinds(first)
            assert ("catalog.endpoint_unreachable", "identity") not in _kinds(first)
            assert not [h for h in triage_hints(first) if h.kind == "triage.keystone"]
            second = await world.poll()
            ks = second["services"].snapshot.keystone
            assert not ks.ok and not ks.late and ks.error and "timed out" in ks.error, ks
            assert _kinds(second).get(("keystone.unreachable", url)) == "critical", _kinds(second)
            assert ("keystone.slow", url) not in _kinds(second)
            assert [h.kind for h in triage_hints(second) if h.kind == "triage.keystone"] == ["triage.keystone"]
        finally:
            sim.faults.clear()
        after = await world.poll()
        assert after["services"].snapshot.keystone.ok and not after["services"].snapshot.keystone.late
        assert not [k for k in _kinds(after) if k[0].startswith("keystone.")]
    finally:
        await world.end_test()


async def test_keystone_refused_after_a_good_poll_is_unreachable_at_once(sim: Any) -> None:
    world: World = sim.shared_world()
    try:
        before = await world.poll()
        assert before["services"].snapshot.keystone.ok
        sim.faults.set("keystone", "refused")
        try:
            during = await world.poll()
        finally:
            sim.faults.clear()
        ks = during["services"].snapshot.keystone
        assert not ks.ok and not ks.late, ks
        assert ("keystone.unreachable", ks.auth_url) in _kinds(during)
    finally:
        await world.end_test()


async def test_endpoint_timeout_is_slow_once_then_unreachable(sim: Any) -> None:
    world: World = sim.shared_world()
    try:
        await world.poll()  # the placement endpoint answered
        sim.faults.set("placement", "hang")
        try:
            first, second = await world.poll(), None
            # only the due endpoints are checked each poll: placement's turn may take a few polls
            for _ in range(8):
                checks = {c.service_type: c for c in first["services"].snapshot.catalog}
                if checks["placement"].late or not checks["placement"].ok:
                    break
                first = await world.poll()
            checks = {c.service_type: c for c in first["services"].snapshot.catalog}
            assert checks["placement"].late and checks["placement"].ok, checks["placement"]
            assert _kinds(first).get(("catalog.endpoint_slow", "placement")) == "warning", _kinds(first)
            assert ("catalog.endpoint_unreachable", "placement") not in _kinds(first)
            assert not [h for h in triage_hints(first) if h.kind.startswith("triage.placement")]
            second = await world.poll()  # a late endpoint is rechecked on the very next poll
            checks = {c.service_type: c for c in second["services"].snapshot.catalog}
            assert not checks["placement"].ok and not checks["placement"].late, checks["placement"]
            assert _kinds(second).get(("catalog.endpoint_unreachable", "placement")) == "critical"
        finally:
            sim.faults.clear()
    finally:
        await world.end_test()
