"""A crash of the dashboard or of `stacktop replay` (issue #22): a non-zero exit code and one line on stderr
saying where the log file (holding the traceback) is; the traceback is not printed to the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Runs stacktop's own main() headless, with a pane that raises once the dashboard is up.
CRASHER = """
import sys
import tui.app
from tui.cli import main

run = tui.app.StacktopApp.run
def headless(self, *args, **kwargs):
    return run(self, headless=True, size=(120, 40))
tui.app.StacktopApp.run = headless

mount = tui.app.StacktopApp.on_mount
def on_mount(self):
    mount(self)
    def boom():
        raise RuntimeError("forced crash for the test")
    self.set_timer(0.3, boom)
tui.app.StacktopApp.on_mount = on_mount
sys.exit(main(sys.argv[1:]))
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["HOME"] = str(tmp_path)
    return subprocess.run([sys.executable, "-c", CRASHER, *args], capture_output=True, text=True, env=env,
                          timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)


def _check(tmp_path: Path, proc: subprocess.CompletedProcess[str]) -> None:
    log = tmp_path / "state" / "stacktop" / "stacktop.log"
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == f"stacktop: stopped on an unexpected error (RuntimeError) - the traceback is in {log}", \
        proc.stderr[-2000:]
    text = log.read_text()
    assert "forced crash for the test" in text and "Traceback" in text


def test_dashboard_crash_exits_non_zero_naming_the_log(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[recorder]\ndir = "{tmp_path / "rec"}"\n')
    _check(tmp_path, _run(tmp_path, "--config", str(config)))


def test_replay_crash_exits_non_zero_naming_the_log(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("")
    journal = tmp_path / "j.jsonl"
    events = [{"schema_version": 2, "ts": "2026-12-02T11:00:00+00:00", "type": "snapshot", "source": "galera",
               "at": 1796209200.0, "class": None, "full": {"nodes": []}, "findings": []},
              {"schema_version": 2, "ts": "2026-12-02T11:05:00+00:00", "type": "note", "text": "end",
               "subject": "session"}]
    journal.write_text("".join(json.dumps(e) + "\n" for e in events))
    _check(tmp_path, _run(tmp_path, "replay", str(journal), "--config", str(config)))
