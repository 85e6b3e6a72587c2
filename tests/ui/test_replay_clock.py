"""`stacktop replay` on the recorded clock: a session recorded on the simulated storyline (a compute dies and is
reported down, an agent dies, Galera loses quorum) is played back at 8x, paused, and past its END, and at
every frame the replay shows the same source times, findings, triage row and control-plane row states as the
live session showed at that time of the recording: no age keeps running on the replay's own clock, so no row
turns late or down, no count drops, that the live session never showed.

Deterministic: the live session runs on a manual sim clock with polls only when the test asks (tui.gallery);
the replay's clock is driven by a fake real-time source, so 8x means 8 recorded seconds per real second the
test hands it, not wall-clock sleeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.gallery import STEP, GalleryApp, Tour, make_demo
from tui.recorder import Journal, Recorder
from tui.replay import Player, Timeline
from tui.replay_app import ReplayApp
from tui.widgets.services_pane import ServicesPane

RECORDED_S = 150.0  # the compute dies at 15 s and is reported down at 65-75 s; the agent at ~95 s
SPEED = 8.0
REAL_STEP = 0.5  # real seconds handed to the replay's clock per step: 4 recorded seconds at 8x


def view(app: StacktopApp) -> dict[str, Any]:
    """What the dashboard shows that a clock could change: each source's time, its findings, the triage row,
    and the state of every control-plane row."""
    row = app._triage_row()
    assert row is not None and row.summary is not None
    pane = app.query_one(ServicesPane)
    assert pane.table is not None
    states = {key: str(pane.table.get_row(key)[2]) for key in pane.table.shown_keys
              if key.partition(":")[0] in ("compute", "network", "volume") and ":" in key}
    return {
        "frame": {s: o.ok_at for s, o in sorted(app.observations.items())},
        "findings": {s: sorted(f.key for f in o.findings) for s, o in sorted(app.observations.items())},
        "triage": [c.text for c in row.summary.cells],
        "services": states,
    }


async def record(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], Any]:
    """Walk the storyline live with a journal; returns it, the views the live session showed, its config."""
    demo = make_demo()
    views: list[dict[str, Any]] = []
    try:
        app = GalleryApp(demo, recorder=Recorder(Journal(tmp_path, name="live.jsonl")))
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.poll()
            while tour.elapsed < RECORDED_S:
                demo.advance(STEP)
                await tour.poll()
                app._tick()  # the app's 1 s tick: ages and the triage row judged at the app's clock
                await pilot.pause()
                views.append(view(app))
        config = app.config
    finally:
        demo.stop()
    return tmp_path / "live.jsonl", views, config


def live_at(views: list[dict[str, Any]], t: float) -> dict[str, Any]:
    """The live session's view at time t: the last one whose every source was read by t."""
    return [v for v in views if max(v["frame"].values()) <= t][-1]


def same_as_live(replayed: dict[str, Any], live: dict[str, Any], when: str) -> None:
    assert replayed["frame"] == live["frame"], f"{when}: the replay shows other source times than recorded"
    assert replayed["findings"] == live["findings"], f"{when}: findings"
    assert replayed["triage"] == live["triage"], f"{when}: the triage row"
    for key, state in replayed["services"].items():
        # a row late at the poll counts down between polls and may go down before the next: live did so too
        assert state == live["services"].get(key) or (state == "DOWN" and live["services"].get(key) == "LATE"), \
            f"{when}: {key} {state}, live showed {live['services'].get(key)}"
    assert replayed["services"].keys() == live["services"].keys(), f"{when}: the control-plane rows"


async def test_a_replay_at_8x_paused_and_past_its_end_shows_only_what_the_live_session_showed(
        tmp_path: Path) -> None:
    path, views, config = await record(tmp_path)
    assert any("DOWN" in v["services"].values() for v in views), "the recording has a compute reported down"
    real = [0.0]
    player = Player(Timeline.from_journal(path), speed=SPEED, real=lambda: real[0])
    app = ReplayApp(config, player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        async def frame_at_clock() -> dict[str, Any]:
            """Every replayed source read at the replay clock's present time, then the app's tick."""
            before = {name: runner.observation for name, runner in app.runners.items()}
            now = player.clock.now()
            app.action_refresh_now()
            await until_pilot(pilot, lambda: len(app.runners) == len(player.collectors) and all(
                r.observation is not before.get(n) and r.observation.tried_at == now
                for n, r in app.runners.items()), f"a replayed poll at {now}", 60, interval=0.02)
            app._tick()
            await pilot.pause()
            return view(app)

        await until_pilot(pilot, lambda: len(app.runners) == len(player.collectors), "the replay's sources", 60)
        start = player.timeline.start
        steps = 0
        while player.clock.now() < player.timeline.end:
            real[0] += REAL_STEP
            t = player.clock.now()
            if t < min(max(v["frame"].values()) for v in views):
                continue  # before the first frame every source had
            same_as_live(await frame_at_clock(), live_at(views, t), f"at {SPEED:g}x, +{t - start:.0f} s")
            steps += 1
            if steps == 10:  # paused half-way: the replay's clock and every age stand still
                await pilot.press("p")
                assert player.clock.paused
                paused_at = player.clock.now()
                real[0] += 300.0
                same_as_live(await frame_at_clock(), live_at(views, paused_at),
                             f"paused at +{paused_at - start:.0f} s, 300 s later")
                assert player.clock.now() == paused_at
                await pilot.press("p")
        assert steps > 20, "the replay went through the recording frame by frame"

        # END: the clock stops at the recording's last event, however long the replay stays open
        for later in (60.0, 3600.0):
            real[0] += later
            assert player.finished and player.clock.now() == player.timeline.end
            same_as_live(await frame_at_clock(), views[-1], f"{later:g} s past END")
            assert "END" in app._topbar_text()
