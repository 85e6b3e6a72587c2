"""Pilot: `stacktop replay` runs the real panes on replay collectors (pause, speed, the recorded findings);
the trace screen records its exercise, with a screenshot, in the journal; `:trace-*` commands parse."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.testbed.wait import until_pilot
from tui import command_handlers, commands
from tui.app import StacktopApp
from tui.collectors.registry import build_collectors
from tui.config import Config
from tui.exercises.boot_trace import BootTrace
from tui.journal_codec import HEARTBEAT_FIELDS, HEARTBEAT_S, Encoder
from tui.models.instances import Server
from tui.models.observation import Observation
from tui.recorder import Journal, Recorder, read_journal
from tui.replay import Player
from tui.replay_app import ReplayApp
from tui.runner import CollectorRunner
from tui.screens.trace import TraceScreen, render_boot
from tui.sim import start_demo


async def record_sim(tmp_path: Path) -> tuple[Path, list[Observation], str]:
    demo = start_demo(instances=20, hosts=3, queues=5, churn=0, storyline=False, manual=True,
                      service_down_time=20, agent_down_time=20)
    seen: list[Observation] = []
    try:
        collectors = [c for c in build_collectors(demo.config()) if c.name in ("services", "instances")]
        recorder = Recorder(Journal(tmp_path, name="j.jsonl"))

        def publish(obs: Observation) -> None:
            recorder.observe(obs)
            seen.append(obs)

        runners = [CollectorRunner(c, publish, clock=lambda: demo.now().timestamp()) for c in collectors]
        host = demo.engine.hosts[0].name
        for step in range(8):
            if step == 1:
                demo.inject("kill_compute", host=host)
            for r in runners:
                await r.run_once()
            demo.advance(5)
        recorder.note("killed on purpose", subject=f"host:{host}")
        for c in collectors:
            await c.aclose()
        recorder.close()
    finally:
        demo.stop()
    return tmp_path / "j.jsonl", seen, host


def same_but_heartbeats(replayed: Any, recorded: Any, path: str = "") -> list[str]:
    """Where a replayed snapshot's JSON differs from the recorded one's, other than a heartbeat field that
    moved by less than HEARTBEAT_S (what the journal leaves out by design)."""
    if isinstance(replayed, dict) and isinstance(recorded, dict):
        if replayed.keys() != recorded.keys():
            return [f"{path}: keys {sorted(replayed.keys() ^ recorded.keys())}"]
        out: list[str] = []
        for k in recorded:
            if k in HEARTBEAT_FIELDS and replayed[k] != recorded[k]:
                a, b = replayed[k], recorded[k]
                if isinstance(a, str) and a.startswith("@"):  # heartbeats are ages at the snapshot's time
                    a, b = float(a[1:]), float(b[1:])
                moved = abs(a - b) if isinstance(a, (int, float)) else abs(
                    (datetime.fromisoformat(a) - datetime.fromisoformat(b)).total_seconds())
                if moved >= HEARTBEAT_S:
                    out.append(f"{path}.{k}: {a} vs {b}")
            else:
                out.extend(same_but_heartbeats(replayed[k], recorded[k], f"{path}.{k}"))
        return out
    if isinstance(replayed, list) and isinstance(recorded, list) and len(replayed) == len(recorded):
        return [d for i, (a, b) in enumerate(zip(replayed, recorded, strict=True))
                for d in same_but_heartbeats(a, b, f"{path}[{i}]")]
    return [] if replayed == recorded else [f"{path}: {replayed!r} vs {recorded!r}"]


async def test_replay_app_shows_the_recorded_findings(tmp_path: Path) -> None:
    path, seen, host = await record_sim(tmp_path)
    last = [o for o in seen if o.source == "services"][-1]
    assert any(host in f.subject for f in last.findings), "the sim run raised the down finding"
    player = Player.from_journal(path, speed=1.0)
    app = ReplayApp(Config(), player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("p")
        assert player.clock.paused and app.paused
        await pilot.press("plus", "plus")
        assert player.clock.speed == 4.0
        player.clock.jump(player.timeline.end)
        app.action_refresh_now()
        await until_pilot(pilot, lambda: getattr(app.observations.get("services"), "ok_at", None) == last.ok_at,
                          "the last recorded services snapshot on screen", 120)
        obs = app.observations["services"]
        assert [f.key for f in obs.findings] == [f.key for f in last.findings]
        assert type(obs.snapshot) is type(last.snapshot)
        assert same_but_heartbeats(Encoder().encode(obs.snapshot), Encoder().encode(last.snapshot)) == [], \
            "the pane got the snapshot that was recorded (heartbeats within HEARTBEAT_S)"
        top = app._topbar_text()
        assert "replaying j.jsonl" in top and ("PAUSED" in top or "END" in top)
        app._tick()
        await pilot.pause()
        assert any("killed on purpose" in str(n.message) for n in app._notifications)


async def test_trace_screen_records_the_exercise_with_a_screenshot(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    app = StacktopApp(Config(), collectors=[], recorder=recorder)
    trace = BootTrace(interval=0.5)

    async def driver(update: Any, stop: asyncio.Event) -> BootTrace:
        for i, (status, task) in enumerate((("BUILD", "scheduling"), ("BUILD", "spawning"), ("ACTIVE", None))):
            trace.observe(Server(id="s-1", name="vm", status=status, task_state=task, host="compute-02"),
                          1000.0 + i)
            update(trace)
            await asyncio.sleep(0)
        return trace

    async with app.run_test(size=(160, 48)) as pilot:
        screen = TraceScreen("boot trace of vm", driver, render_boot, lambda t: t.result())
        await app.push_screen(screen)
        for _ in range(40):
            await pilot.pause(0.05)
            if screen.recorded:
                break
        assert screen.recorded and screen.result is not None
        await pilot.press("escape")
        await pilot.pause()
    recorder.close()
    events = [e for e in read_journal(tmp_path / "j.jsonl") if e["type"] == "exercise"]
    assert len(events) == 1 and events[0]["name"] == "boot-trace"
    assert "scheduling" in events[0]["markdown"] and events[0]["data"]["outcome"] == "ACTIVE"
    shot = Path(events[0]["screenshot"])
    assert shot.parent == tmp_path and shot.suffix == ".svg" and shot.stat().st_size > 1000


def test_trace_commands_parse() -> None:
    assert commands.parse(":trace-boot")[1] == []
    assert commands.parse(":trace-boot vm1")[1] == ["vm1"]
    assert commands.parse(":trace-down compute-02")[1] == ["compute-02"]
    with pytest.raises(commands.CommandError, match="missing HOST"):
        commands.parse(":trace-down")
    assert command_handlers.handler(commands.parse(":trace-request req-1")[0]) is command_handlers.trace_request


async def test_trace_commands_without_a_cloud(tmp_path: Path) -> None:
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    app = StacktopApp(Config(), collectors=[], recorder=recorder)
    async with app.run_test(size=(160, 48)) as pilot:
        app.run_command(":trace-boot")
        app.run_command(":trace-request 1234")
        await pilot.pause()
        messages = [str(n.message) for n in app._notifications]
        assert any("no OpenStack cloud configured" in m for m in messages)
        assert any("a request id looks like req-<uuid>" in m for m in messages)
        app.run_command(":trace-request req-00000000-0000-0000-0000-000000000000")  # logs only: none configured
        for _ in range(40):
            await pilot.pause(0.05)
            if isinstance(app.screen, TraceScreen) and app.screen.recorded:
                break
        assert isinstance(app.screen, TraceScreen) and app.screen.result is not None
        assert app.screen.result.data["missing"][0] == "keystone"
        await pilot.press("escape")
    recorder.close()
    names = [e["name"] for e in read_journal(tmp_path / "j.jsonl") if e["type"] == "exercise"]
    assert names == ["request-trace"]


def test_replay_cli_refuses_a_journal_without_snapshots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.cli import main

    path = tmp_path / "old.jsonl"
    path.write_text('{"schema_version": 1, "type": "note", "ts": "2026-12-02T10:00:00+00:00", "text": "x"}\n')
    assert main(["replay", str(path)]) == 3
    assert "no recorded snapshots to replay" in capsys.readouterr().err
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 3


async def test_replay_words_describe_a_replay(tmp_path: Path) -> None:
    """A replay says it replays: the top bar names the journal and the speed, the borders how often the source
    was recorded (not the replay's own polling), `n` and the host screen say what a replay cannot do."""
    from tui.screens.host import HostScreen
    from tui.widgets.source_pane import SourcePane

    path, _seen, host = await record_sim(tmp_path)
    player = Player.from_journal(path, speed=0.5)  # slow: still playing on a loaded machine
    app = ReplayApp(Config(), player, name=path.name)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = next(p for p in app.panes if isinstance(p, SourcePane) and p.SOURCE == "services")
        for _ in range(600):  # a loaded machine: up to 30 s
            await pilot.pause(0.05)
            if pane.observation is not None and pane.observation.error is None:
                break
        app._tick()
        assert "replaying j.jsonl at 0.5x" in app._topbar_text()
        assert str(pane.border_subtitle) == "replayed · recorded every 5s"
        await pilot.press("n")
        await pilot.pause()
        assert not any(b.binding.action in ("note", "refresh_now") for b in app.screen.active_bindings.values()
                       if b.enabled), "a replay offers no note and no refresh"
        assert not any(box.has_class("-shown") for box in app.query("Input")), "n opened no line"
        app.push_screen(HostScreen(host))
        for _ in range(600):
            await pilot.pause(0.05)
            body = str(app.screen.query_one("#host-detail").render())
            if "replay" in body:
                break
        assert "this is a replay of a recording" in body and "OpenStack" not in body, body
        app.pop_screen()
        await pilot.pause()
        for line in (f"trace-down {host}", "trace-request req-00000000-0000-0000-0000-000000000000", "trace-boot"):
            app.clear_notifications()
            app.run_command(line)
            await pilot.pause(0.1)
            messages = [str(n.message) for n in app._notifications]
            assert len(app.screen_stack) == 1, f":{line} opened a screen in a replay"
            assert any("reads the cloud itself: not in a replay" in m for m in messages), (line, messages)
