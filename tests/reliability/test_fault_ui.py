"""The UI side of the fault matrix, driven by Pilot on the simulated cloud: while a source hangs, a keypress
is handled at once; only the faulted source's pane turns to ERROR (keeping its rows, dimmed, with the reason
and "last ok" in its border); the others stay ok; the pane recovers by itself when the fault ends."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.reliability.world import World
from tui.app import StacktopApp
from tui.screens.help import HelpScreen
from tui.widgets.source_pane import SourcePane

PANES = ("services", "instances", "rabbitmq", "galera")


async def _until(pilot: Any, what: str, check: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def _pane(app: StacktopApp, source: str) -> SourcePane:
    return app.query_one(f"#pane-{source}", SourcePane)


def _rows(app: StacktopApp, source: str) -> int:
    """Rows shown; for instances the servers held (its default view lists only servers that need a look)."""
    pane = _pane(app, source)
    if source == "instances":
        snap = pane.observation.snapshot if pane.observation is not None else None
        return len(snap.servers) if snap is not None else 0
    return pane.table.row_count if pane.table is not None else 0


# case -> (fault target, fault, pane whose source errors (None: the source stands, a part of it says why),
#          the runner whose poll is in flight while the source hangs)
CASES = {  # (the full fault x source matrix runs without a UI in test_fault_matrix.py)
    "nova-hang": ("nova", "hang", "instances", "instances"),
    "rabbitmq-500": ("rabbitmq", "500", "rabbitmq", None),
    "keystone-hang": ("keystone", "hang", None, "services"),
    "neutron-500": ("neutron", "500", None, None),
    "galera-node-hang": ("galera", "hang", None, "galera"),
    "nova-trickle": ("nova", "trickle", "instances", "instances"),  # one byte every 0.5 s: no read timeout fires
    "rabbitmq-trickle": ("rabbitmq", "trickle", "rabbitmq", "rabbitmq"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_pane_degrades_alone_ui_stays_responsive_and_recovers(sim: Any, case: str,
                                                                   capfd: pytest.CaptureFixture[str]) -> None:
    target, fault, errored, hanging = CASES[case]
    world: World = sim.world(slow=3.0)  # a loaded machine must not time a healthy source out
    world.build()
    app = StacktopApp(world.config, collectors=list(world.collectors.values()))
    node = world.config.galera.nodes[0]
    async with app.run_test(size=(160, 48)) as pilot:
        await _until(pilot, "every pane filled", lambda: all(_rows(app, s) for s in PANES)
                     and all(_pane(app, s).has_class("-ok") for s in PANES))
        rows = {s: _rows(app, s) for s in PANES}
        if target == "galera":
            world.galera_faults.set_node(node, fault)
        else:
            sim.faults.set(target, fault)
        try:
            app.action_refresh_now()
            if hanging:  # the poll is in flight, held by the hang
                runner = app.runners[hanging]
                await _until(pilot, f"{hanging} poll in flight", lambda: runner._lock.locked(), timeout=5.0)
            await pilot.press("question_mark")
            await _until(pilot, "the help screen", lambda: isinstance(app.screen, HelpScreen), timeout=3.0)
            if hanging:
                assert runner._lock.locked(), "the keypress was only handled once the hanging poll gave up"
            await pilot.press("escape")
            if errored:
                pane = _pane(app, errored)
                await _until(pilot, f"{errored} pane in ERROR", lambda: pane.has_class("-error"))
                subtitle = str(pane.border_subtitle)
                assert subtitle.startswith("ERROR ") and "last ok" in subtitle, subtitle
                assert "Traceback" not in subtitle and "\n" not in subtitle
                assert _rows(app, errored) == rows[errored], "the pane kept its last rows"
            elif target == "keystone":
                msg = app.query_one("#services-message")
                await _until(pilot, "Keystone unreachable line", lambda: "unreachable" in str(msg.render()))
            elif target == "neutron":
                table = _pane(app, "services").table
                assert table is not None
                await _until(pilot, "the network section's error",
                             lambda: "answered 500" in str(table.get_row("hdr:network")))
            else:  # one Galera node: its row says why, the pane stands
                table = _pane(app, "galera").table
                assert table is not None
                await _until(pilot, "the node's error in its row",
                             lambda: "Lost connection" in str(table.get_row(node)))
            others = [s for s in PANES if s != errored]
            assert all(not _pane(app, s).has_class("-error") for s in others), \
                {s: str(_pane(app, s).border_subtitle) for s in others}
        finally:
            sim.faults.clear()
            world.galera_faults.clear()
        # no refresh_now: each runner polls again on its own (interval 1 s, backoff after failures)
        await _until(pilot, "recovery", lambda: all(_pane(app, s).has_class("-ok") for s in PANES)
                     and "unreachable" not in str(app.query_one("#services-message").render()), timeout=30.0)
        assert {s: _rows(app, s) for s in PANES} == rows
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
