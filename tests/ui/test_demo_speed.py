"""`stacktop --demo --speed 3`: sim time runs three times as fast as the wall clock, and every age the dashboard
shows is sim time throughout (the collectors stamp their reads with it as the app judges with it), so the
storyline's one dead compute and one dead agent stay the only outage: no fleet of services goes down because
heartbeats were read on one clock and judged on another.

Driven on sim time: the simulator's clock is manual (sim time moves only when the test advances it, 120 s in
steps of 5 s, each followed by a poll of every source), the dashboard built as `stacktop --demo` builds it
(tui.cli._LateDemo: its set-up, its clock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.testbed.wait import until_pilot
from tui import cli
from tui.app import StacktopApp
from tui.widgets.services_pane import ServicesPane

STEP = 5.0
SIM_SECONDS = 120.0
SOURCES = ("services", "instances", "rabbitmq", "galera")


def pane_states(app: StacktopApp) -> dict[str, list[str]]:
    """The services pane's rows by state (DOWN, LATE, up), per section: what the engineer sees."""
    pane = app.query_one(ServicesPane)
    assert pane.table is not None
    out: dict[str, list[str]] = {}
    for key in pane.table.shown_keys:
        section, _, _ = key.partition(":")
        if section in ("compute", "network", "volume") and _:
            state = str(pane.table.get_row(key)[2])
            out.setdefault(f"{section} {state}", []).append(key)
    return out


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


async def test_the_demo_at_speed_3_shows_no_fleet_outage_for_120_sim_seconds() -> None:
    demo = cli._LateDemo({"instances": 60, "hosts": 6, "queues": 20, "speed": 3.0, "manual": True})
    app = StacktopApp(demo.config(), recorder=None, clock=demo.now_ts, setup=demo.start)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: demo.demo is not None and all(
                s in app.runners and app.observations.get(s) is not None and app.observations[s].ok
                for s in SOURCES), "every source of the cloud on screen read")
            worst_down: dict[str, int] = {}
            while demo.now_ts() - demo.demo.first.clock.start < SIM_SECONDS:
                for one in demo.demo.demos.values():
                    one.advance(STEP)
                now = demo.now_ts()
                app.action_refresh_now()
                await until(pilot, lambda now=now: all(  # type: ignore[misc]
                    (app.observations[s].ok_at or 0) >= now for s in SOURCES), f"a poll at sim {now:.0f}")
                app._tick()  # what the app's 1 s tick does between polls: ages judged at the app's clock
                await pilot.pause()
                at = f"sim +{now - demo.demo.first.clock.start:.0f} s"
                obs = app.observations["services"]
                fleet = [f.kind for f in obs.findings if f.kind.endswith("fleet_down")]
                assert not fleet, f"a fleet outage at {at}: {fleet}"
                states = pane_states(app)
                for section in ("compute", "network", "volume"):
                    for state in ("DOWN", "LATE"):
                        shown = states.get(f"{section} {state}", [])
                        assert len(shown) <= 1, f"{at}: {section} {state} {shown}"
                        worst_down[f"{section} {state}"] = max(worst_down.get(f"{section} {state}", 0), len(shown))
                row = app._triage_row()
                assert row is not None and row.summary is not None
                text = " | ".join(c.text for c in row.summary.cells)
                assert "nova-conductor" not in text and "nova-scheduler" not in text, text
            assert worst_down.get("compute DOWN") == 1, "the storyline's victim went down: the test saw it"
    finally:
        demo.stop()
