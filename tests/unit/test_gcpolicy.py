"""The GC policy freezes what is alive after a poll, releases it on exit, and collects everything now and then."""

from __future__ import annotations

import gc
import platform

import pytest

from tests.fresh_python import fresh_python
from tui import gcpolicy


def test_freeze_after_poll_release_on_exit() -> None:
    gcpolicy.release()
    before = gc.get_freeze_count()
    try:
        gcpolicy.after_poll()
        assert gc.get_freeze_count() > before
    finally:
        gcpolicy.release()
    assert gc.get_freeze_count() == 0


def test_full_collection_every_so_often() -> None:
    class Cycle:
        pass

    a, b = Cycle(), Cycle()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    gcpolicy.after_poll()
    ids = {id(a), id(b)}
    del a, b
    try:
        gcpolicy.after_poll(now=gcpolicy._last_full[0] + gcpolicy.FULL_EVERY_S)  # due: unfreeze + collect
        assert not any(id(o) in ids and isinstance(o, Cycle) for o in gc.get_objects()), "the cycle was freed"
    finally:
        gcpolicy.release()


def test_full_collection_frees_frozen_cycles_and_says_how_many() -> None:
    class Cycle:
        pass

    a, b = Cycle(), Cycle()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    gcpolicy.after_poll()
    ids = {id(a), id(b)}
    del a, b
    try:
        assert gc.get_freeze_count() > 0
        found = gcpolicy.full_collection()
        assert found >= 2, "the two frozen objects of the cycle were found unreachable"
        assert gc.get_freeze_count() == 0
        assert not any(id(o) in ids and isinstance(o, Cycle) for o in gc.get_objects())
    finally:
        gcpolicy.release()


def test_a_garbage_cycle_is_not_frozen_with_the_live_objects() -> None:
    """A poll's cyclic garbage (an httpx response and its stream, an exception's traceback) is collected at
    the next after_poll instead of being frozen until the periodic full collection."""

    class Cycle:
        pass

    gcpolicy.release()
    a, b = Cycle(), Cycle()
    a.other, b.other = b, a  # type: ignore[attr-defined]
    ids = {id(a), id(b)}
    del a, b
    try:
        gcpolicy.after_poll()
        assert gc.get_freeze_count() > 0
        gc.unfreeze()  # frozen objects are not listed by get_objects: bring them back
        assert not any(id(o) in ids and isinstance(o, Cycle) for o in gc.get_objects()), \
            "the cycle was collected before the freeze"
    finally:
        gcpolicy.release()


def test_start_up_holds_collections_until_the_first_frame_then_freezes_it() -> None:
    assert gc.isenabled()
    try:
        gcpolicy.hold_until_first_frame()
        assert not gc.isenabled(), "no automatic collection while start-up builds long-lived objects"
        gcpolicy.first_frame()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0, "what start-up built is frozen"
        gcpolicy.first_frame()  # again (the collectors built): still enabled, nothing else changes
        assert gc.isenabled()
    finally:
        gcpolicy.end_hold()
        gcpolicy.release()
        gc.enable()


def test_end_hold_gives_collections_back_when_no_frame_came() -> None:
    try:
        gcpolicy.hold_until_first_frame()
        gcpolicy.end_hold()
        assert gc.isenabled()
        gcpolicy.end_hold()  # idempotent
        assert gc.isenabled()
    finally:
        gc.enable()


def test_hold_leaves_collections_off_that_were_off_already() -> None:
    gc.disable()
    try:
        gcpolicy.hold_until_first_frame()
        gcpolicy.first_frame()
        assert not gc.isenabled(), "only what the hold took is given back"
    finally:
        gcpolicy.release()
        gc.enable()


def test_malloc_trim_is_looked_up_at_the_first_full_collection_not_at_import() -> None:
    """ctypes + find_library cost ~5 ms before the first paint; the first full collection needs them."""
    code = (
        "import sys\n"
        "from tui import gcpolicy\n"
        "before = 'ctypes' in sys.modules\n"
        "gcpolicy.full_collection()\n"
        "print(repr((before, gcpolicy._malloc_trim() is not None)))\n"
    )
    stdout = fresh_python(code)
    imported_before, found = eval(stdout.strip())
    assert imported_before is False
    assert found is (platform.libc_ver()[0] == "glibc")


def test_the_command_holds_collections_from_its_first_import() -> None:
    """`stacktop` (tui.launch) holds the automatic collections before tui.cli and what it imports load, and
    a command other than the dashboard gets them back before it runs."""
    code = (
        "import gc, sys\n"
        "seen = {}\n"
        "class Watch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name in ('tui.cli', 'tui.config'):\n"
        "            seen[name] = gc.isenabled()\n"
        "        return None\n"
        "sys.meta_path.insert(0, Watch())\n"
        "from tui import launch\n"
        "sys.argv = ['stacktop', 'export', 'no-such-journal.jsonl']\n"
        "code = launch.main()\n"
        "print(repr((seen, code, gc.isenabled())))\n"
    )
    seen, code, enabled_after = eval(fresh_python(code).strip().splitlines()[-1])
    assert seen == {"tui.cli": False, "tui.config": False}, "no automatic collection while the command imports"
    assert code == 3  # no such journal
    assert enabled_after is True


def test_a_command_other_than_the_dashboard_runs_with_collections_on(monkeypatch: pytest.MonkeyPatch) -> None:
    from tui import cli

    during: list[bool] = []
    monkeypatch.setattr(cli, "_export", lambda args: during.append(gc.isenabled()) or 0)
    try:
        gcpolicy.hold_until_first_frame()
        assert cli.main(["export", "journal.jsonl"]) == 0
        assert during == [True], "the start-up hold ends once the command line says it is not the dashboard"
    finally:
        gcpolicy.end_hold()
        gc.enable()
