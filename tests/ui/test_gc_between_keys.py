"""The collection after a poll (tui/gcpolicy.py) runs where no key waits for it: put off while keys come, once
for every poll meanwhile, and at most GC_PUT_OFF_MAX_S late."""

from __future__ import annotations

import time
from typing import Any

from tests.testbed.wait import until_pilot
from tui import gcpolicy
from tui.app import ObservationMessage, StacktopApp
from tui.appparts import keys as app_module
from tui.config import Config
from tui.models.observation import Observation


def poll(app: StacktopApp) -> None:
    """An observation as a runner hands it over (a source no pane shows)."""
    app.on_observation_message(ObservationMessage(Observation("elsewhere", ok_at=time.time())))


async def test_no_key_lately_collects_at_once(monkeypatch: Any) -> None:
    calls: list[Any] = []
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test():
        monkeypatch.setattr(gcpolicy, "after_poll", lambda now=None: calls.append(now))
        poll(app)
        assert len(calls) == 1


async def test_a_poll_during_keys_collects_once_after_them(monkeypatch: Any) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(app_module, "GC_KEY_QUIET_S", 0.5)
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test() as pilot:
        monkeypatch.setattr(gcpolicy, "after_poll", lambda now=None: calls.append(now))
        app._key_at = time.monotonic()  # a key just came
        poll(app)
        poll(app)  # another poll while the first one's collection waits
        assert calls == [], "no collection in front of the next key"
        await until_pilot(pilot, lambda: calls, "the collection once the keys stopped")
        await pilot.pause(1.0)
        assert len(calls) == 1, "one collection for both polls"


async def test_keys_that_never_stop_put_it_off_at_most_so_long(monkeypatch: Any) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(app_module, "GC_PUT_OFF_MAX_S", 0.0)
    app = StacktopApp(Config(), collectors=[])
    async with app.run_test() as pilot:
        monkeypatch.setattr(gcpolicy, "after_poll", lambda now=None: calls.append(now))
        def key() -> None:
            app._key_at = time.monotonic()

        key()
        keys = app.set_interval(0.02, key)  # keys keep coming
        try:
            poll(app)
            assert calls == []
            await until_pilot(pilot, lambda: calls, "the collection, put off no longer than GC_PUT_OFF_MAX_S")
        finally:
            keys.stop()


async def test_the_journal_holds_its_snapshots_while_keys_come(tmp_path: Any) -> None:
    from tui.recorder import Journal, Recorder

    recorder = Recorder(Journal(tmp_path))
    app = StacktopApp(Config(), collectors=[], recorder=recorder)
    async with app.run_test():
        hold = recorder.journal.hold
        assert hold is not None
        app._key_at = time.monotonic()
        assert hold(), "a key just came"
        app._key_at = app._key_done_at = app._frame_at = time.monotonic() - 10
        assert not hold(), "no key for 10 s"
