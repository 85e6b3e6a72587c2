"""Hostile names in what stacktop writes outside the dashboard: `snapshot` text (piped and on a terminal), the
Markdown export of a recorded session (findings, notes, an exercise section), and `replay` of that journal.
Each is readable (the names as typed, controls written out) and inert (no ESC byte from a name, no raw HTML, no
Markdown link, image or emphasis made of a name)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from tests.testbed.render import rendered
from tui.config import Config
from tui.exercises.boot_trace import BootTrace
from tui.export import to_markdown
from tui.gallery import GalleryApp, Tour, make_demo
from tui.recorder import Journal, Recorder
from tui.replay import Player
from tui.replay_app import ReplayApp
from tui.sim import hostile

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"(?<!\\)\]\((?!<?[\w./%-]*\.svg)")  # `](` not escaped: a Markdown link made of a name


def test_snapshot_text_piped_has_no_control_bytes() -> None:
    env = {**os.environ, "COLUMNS": "250"}  # one finding a line: the names are not wrapped apart
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--demo", "--hostile"], capture_output=True,
                          cwd=ROOT, timeout=180, env=env)
    assert proc.returncode in (0, 1, 2), proc.stderr.decode(errors="replace")
    out = proc.stdout
    assert b"\x1b" not in out and b"\xc2\x9b" not in out and b"\x07" not in out, "a control byte in the output"
    assert b"Traceback" not in proc.stderr
    assert b"\\x1b[2J" in out, "the hostile host is shown with its controls written out"


def test_snapshot_text_on_a_terminal_keeps_only_its_own_styles() -> None:
    import asyncio

    from tui.collectors.registry import build_collectors
    from tui.sim import start_demo
    from tui.snapshot import collect_once
    from tui.snapshot_terminal import TerminalReport

    demo = start_demo(instances=30, hosts=8, queues=10, churn=0, storyline=False, manual=True, hostile=True)
    try:
        collectors = build_collectors(demo.config(), galera_connector=demo.galera_connector)
        observations = asyncio.run(collect_once(collectors))
        buffer = io.StringIO()
        Console(file=buffer, force_terminal=True, color_system="256", width=200).print(TerminalReport(observations))
    finally:
        demo.stop()
    out = buffer.getvalue()
    assert "compute-04\\x1b[2J" in out
    assert "\x1b[2J" not in out and "\x1b]" not in out and "\x07" not in out and "\x9b" not in out


async def test_recorded_session_exports_and_replays_inert(tmp_path: Path) -> None:
    demo = make_demo(hostile=True)
    recorder = Recorder(Journal(tmp_path, name="j.jsonl"))
    try:
        app = GalleryApp(demo, recorder=recorder)
        async with app.run_test(size=(160, 48)) as pilot:
            await Tour(app, pilot).walk(80)
            recorder.note(hostile.FAULT, subject=hostile.CLEAR_AND_TITLE)
            trace = BootTrace(interval=0.5)
            trace.server_id, trace.name = "id`` `x`", hostile.NAMES[10]
            recorder.exercise(trace.result())
            await pilot.pause(0.2)
    finally:
        recorder.close()
        demo.stop()
    report = to_markdown(tmp_path / "j.jsonl")
    assert "\x1b" not in report and "\x07" not in report and "\x9b" not in report
    assert "<img" not in report and "<script" not in report, "raw HTML from a name"
    assert not LINK.search(report), f"a Markdown link made of a name: {LINK.search(report)}"
    assert "compute\\-04" in report or "compute-04\\\\x1b\\[2J" in report or "compute-04\\x1b" in report
    assert "&lt;img src=x onerror=alert(1)>" in report

    proc = subprocess.run([sys.executable, "-m", "tui", "export", str(tmp_path / "j.jsonl"), "--markdown"],
                          capture_output=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout, proc.stderr.decode(errors="replace")

    player = Player.from_journal(tmp_path / "j.jsonl", speed=50)
    replay = ReplayApp(Config(), player, name="j.jsonl")
    async with replay.run_test(size=(160, 48)) as pilot:
        for _ in range(100):
            if "\\x1b[2J" in rendered(replay):
                break
            await pilot.pause(0.1)
        assert "\\x1b[2J" in rendered(replay), "the replayed panes show the hostile host as typed"
        assert replay.is_running


def test_the_log_file_writes_controls_out(tmp_path: Path) -> None:
    import logging

    from tui.recorder import RedactingFormatter

    handler = logging.FileHandler(tmp_path / "stacktop.log")
    handler.setFormatter(RedactingFormatter("%(levelname)s %(message)s", secrets=("canary-pw",)))
    log = logging.getLogger("stacktop.test-hostile")
    log.addHandler(handler)
    try:
        log.warning("source failed on %s: %s", hostile.CLEAR_AND_TITLE, "canary-pw\nsecond line")
    finally:
        log.removeHandler(handler)
        handler.close()
    text = (tmp_path / "stacktop.log").read_text()
    assert "\x1b" not in text and "\x07" not in text and "canary-pw" not in text
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07x" in text, text
    assert text.count("\n") == 1 and text.endswith("***\\x0asecond line\n"), "the record stays one line"
