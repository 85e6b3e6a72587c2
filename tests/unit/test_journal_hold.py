"""The journal's writer thread puts off encoding a snapshot while keys are being typed (Journal.hold), never
for longer than HOLD_MAX_S, and close() does not wait for the keys to stop."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from tests.unit.test_recorder import Snap, obs
from tui import recorder as recorder_module
from tui.recorder import Journal, read_journal


def snapshots(path: Path) -> list[dict[str, Any]]:
    return [e for e in read_journal(path) if e["type"] == "snapshot"]


def until(what: str, test: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline, f"{what}: not within {timeout} s"
        time.sleep(0.02)


def test_a_snapshot_waits_while_keys_come_and_events_do_not(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(recorder_module, "HOLD_MAX_S", 600.0)
    typing = threading.Event()
    typing.set()
    asked = threading.Event()

    def hold() -> bool:
        asked.set()
        return typing.is_set()

    journal = Journal(tmp_path, name="j.jsonl")
    journal.hold = hold
    try:
        journal.write({"type": "note", "text": "before"})
        journal.write_snapshot(obs(100, Snap({"svc:a": {"state": "up"}})))
        until("the writer thread asking whether keys come", asked.is_set)
        until("the event queued before the snapshot", lambda: read_journal(tmp_path / "j.jsonl"))
        time.sleep(0.2)
        assert snapshots(tmp_path / "j.jsonl") == [], "no snapshot encoded while keys come"
        typing.clear()
        until("the snapshot once the keys stopped", lambda: snapshots(tmp_path / "j.jsonl"))
    finally:
        journal.close()


def typing_for_ever(tmp_path: Path, monkeypatch: Any, hold_max_s: float) -> Journal:
    """A journal whose keys never stop, a snapshot queued."""
    monkeypatch.setattr(recorder_module, "HOLD_MAX_S", hold_max_s)
    journal = Journal(tmp_path, name="j.jsonl")
    journal.hold = lambda: True
    journal.write_snapshot(obs(100, Snap({"svc:a": {"state": "up"}})))
    return journal


def test_keys_that_never_stop_put_it_off_at_most_hold_max_s(tmp_path: Path, monkeypatch: Any) -> None:
    journal = typing_for_ever(tmp_path, monkeypatch, 0.1)
    try:
        until("the snapshot after HOLD_MAX_S", lambda: snapshots(tmp_path / "j.jsonl"))
    finally:
        journal.close()


def test_close_writes_a_held_snapshot_without_waiting_for_the_keys(tmp_path: Path, monkeypatch: Any) -> None:
    journal = typing_for_ever(tmp_path, monkeypatch, 3600.0)
    journal.close()  # joins the writer thread for at most 10 s: the hold must give way at once
    assert not journal._thread.is_alive()
    assert len(snapshots(tmp_path / "j.jsonl")) == 1
