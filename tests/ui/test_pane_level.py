"""A pane's level class (-ok, -loading, -stale, ...) restyles the pane, and its table only when the table's
dimming depends on the change (set_class restyled the whole subtree at every source's first observation)."""

from __future__ import annotations

from typing import Any

from tests.unit.fakes import ScriptedCollector
from tui.app import StacktopApp
from tui.config import Config


async def test_level_change_restyles_the_table_only_when_dimming_changes() -> None:
    app = StacktopApp(Config(), collectors=[ScriptedCollector("rabbitmq", [1], interval=60.0)])
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        pane = next(p for p in app.panes if p.SOURCE == "rabbitmq")
        assert pane.has_class("-ok") and pane.table is not None
        restyled: list[list[object]] = []
        update_nodes = app.stylesheet.update_nodes

        def spy(nodes, animate=False):  # type: ignore[no-untyped-def]
            nodes = list(nodes)
            restyled.append(nodes)
            return update_nodes(nodes, animate=animate)

        app.stylesheet.update_nodes = spy  # type: ignore[method-assign]
        try:
            await _levels(pilot, pane, restyled)
        finally:
            del app.stylesheet.update_nodes  # the class's method again; no list holding the panes
            restyled.clear()


async def _levels(pilot: Any, pane: Any, restyled: list[list[object]]) -> None:
    """loading <-> ok restyles the pane alone; stale (dimming) and back restyle its table too."""
    pane.set_level("loading")
    pane.set_level("ok")
    assert restyled == [[pane], [pane]], "loading <-> ok: the pane alone, not its table"
    assert pane.has_class("-ok") and not pane.has_class("-loading")
    pane.set_level("ok")
    assert len(restyled) == 2, "no change, no restyle"
    pane.set_level("stale")
    assert pane.table in restyled[-1], "stale dims the table: it is restyled"
    await pilot.pause()
    assert pane.table.styles.opacity < 1.0
    pane.set_level("ok")
    assert pane.table in restyled[-1]
    await pilot.pause()
    assert pane.table.styles.opacity == 1.0
    assert pane.has_class("-ok") and not pane.has_class("-stale")
