"""The RabbitMQ pane fed by the real collector on the real broker."""

from __future__ import annotations

import pytest

from tests.unit.fakes import ScriptedCollector
from tui.app import StacktopApp
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import Config
from tui.widgets.rabbitmq_pane import RabbitMQPane
from tui.widgets.source_pane import SourcePane

pytestmark = pytest.mark.integration


async def _until(pilot, check, what: str, tries: int = 250) -> None:
    for _ in range(tries):
        if check():
            return
        await pilot.pause(0.04)
    pytest.fail(f"{what} not seen within {tries * 0.04:.0f}s")


async def test_wrong_password_shows_the_401_line_other_panes_unaffected(vb):
    bad = RabbitMQCollector(vb.mgmt_url, vb.user, "wrong-password", vhosts=[vb.vhost], interval=30,
                            password_key="[rabbitmq] password_env ($RABBIT_PW)")
    galera = ScriptedCollector("galera", [1], interval=0.05)
    app = StacktopApp(Config(), collectors=[bad, galera])
    async with app.run_test(size=(200, 60)) as pilot:
        pane = app.query_one(RabbitMQPane)
        other = next(p for p in app.query(SourcePane) if p.SOURCE == "galera")
        await _until(pilot, lambda: "ERROR" in str(pane.border_subtitle), "the rabbitmq error border")
        border = str(pane.border_subtitle)
        assert "401 Unauthorized" in border and vb.mgmt_url in border
        assert "[rabbitmq] password_env ($RABBIT_PW)" in border and "wrong-password" not in border
        assert pane.has_class("-error")
        await _until(pilot, lambda: str(other.border_subtitle).startswith("ok"), "the galera pane ok")
        assert not other.has_class("-error")


async def test_stopped_compute_row_first(vb, amqp):
    amqp.declare("conductor", "compute.compute-02")
    amqp.consume("conductor")
    amqp.publish("compute.compute-02", 2)
    c = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost], interval=1)
    app = StacktopApp(Config(), collectors=[c])
    async with app.run_test(size=(200, 60)) as pilot:
        pane = app.query_one(RabbitMQPane)

        def stuck_first() -> bool:
            t = pane.table
            if t is None or t.row_count != 2 or t.shown_keys[0] != f"{vb.vhost}\x1fcompute.compute-02":
                return False
            return str(t.get_row(t.shown_keys[0])[2]) == "0" and t.get_row(t.shown_keys[0])[3] != ""  # consumers, since

        await _until(pilot, stuck_first, "compute-02 first with 0 consumers", tries=750)

        def said() -> bool:  # the status line follows once the broker's statistics count its messages
            msg = str(pane.query_one(".pane-message").render())
            return "running" in msg and "1 with messages and no consumer" in msg

        await _until(pilot, said, "the status line counts the queue with messages and no consumer", tries=750)
