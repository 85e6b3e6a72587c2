"""The triage row and the findings pane, driven by Pilot.

Scripted snapshots (the real per-source rules on them, frozen clock): the row's cells and colours, the hint
on top of the findings pane, dedupe by (kind, subject), age since first seen, one toast per new critical,
enter -> host screen / server screen / the source's pane with the cursor on the row. Then the simulated cloud
with the real collectors: a compute killed -> the row turns red, the hint comes first, enter opens its host.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from tests.testbed.wait import until_pilot
from tests.unit.test_triage_rules import NOW, STUCK, TH, instances, rabbit, server, services
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config
from tui.models.finding import Finding
from tui.rules.liveness import services_findings
from tui.rules.queues import rabbitmq_findings
from tui.rules.stuck import instance_findings
from tui.screens.finding import FindingScreen
from tui.screens.host import HostScreen
from tui.screens.instance import InstanceScreen
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.source_pane import SourcePane
from tui.widgets.triage_row import TriageRow

RULES: dict[str, Callable[[Any, datetime], list[Finding]]] = {
    "services": lambda s, now: services_findings(s, now, TH),
    "rabbitmq": rabbitmq_findings,
    "instances": lambda s, now: instance_findings(s, now, STUCK),
}


class Scripted(BaseCollector):
    """Returns whatever snapshot the test put in `current`; rules evaluated at the frozen NOW."""

    def __init__(self, name: str, current: dict[str, Any], extra: list[Finding] | None = None) -> None:
        self.name, self.current, self.extra = name, current, extra or []
        self.interval, self.timeout = 3600.0, 5.0

    async def collect(self) -> Any:
        return self.current[self.name]

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return RULES[self.name](snapshot, NOW) + list(self.extra)


async def until(pilot: Any, probe: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    return await until_pilot(pilot, probe, what, timeout, interval=0.05)


def cell_text(pane: FindingsPane, key: str, column: str) -> str:
    assert pane.table is not None
    value = pane.table.get_cell(key, column)
    return getattr(value, "plain", str(value))


async def test_row_hint_first_dedupe_age_toast_and_enter() -> None:
    clock = [NOW.timestamp()]
    current: dict[str, Any] = {"services": services(), "rabbitmq": rabbit(), "instances": instances()}
    dup = Finding("critical", "nova.service_enabled_but_down", "compute-02", "the same finding, from elsewhere",
                  {"host": "compute-02"}, source="instances")
    collectors = [Scripted("services", current), Scripted("rabbitmq", current),
                  Scripted("instances", current, extra=[])]
    app = StacktopApp(Config(thresholds=TH), collectors=collectors, clock=lambda: clock[0])  # type: ignore[arg-type]
    async with app.run_test(size=(160, 48)) as pilot:
        row = app.query_one(TriageRow)
        pane = app.query_one(FindingsPane)
        await until(pilot, lambda: len(app.observations) == 3, "three sources")
        await until(pilot, lambda: row.summary and row.summary.cell("compute").text == "3/3 up", "the row")
        assert row.summary is not None and row.summary.cell("galera").text == "not configured"
        assert "compute 3/3 up" in str(row.render())
        assert pane.hints == [] and pane.toasts == []

        # compute-02 dies; its queue has no consumer; a build is stuck there
        current["services"] = services(compute_ages={"compute-02": 90})
        current["rabbitmq"] = rabbit(empty_queues=["compute.compute-02"])
        current["instances"] = instances(server("web-1", task="spawning", host="compute-02", status="BUILD",
                                                for_s=100), down=["compute-02"])
        collectors[2].extra = [dup]
        app.action_refresh_now()
        await until(pilot, lambda: pane.hints, "the hint")
        assert pane.table is not None
        keys = pane.table.shown_keys
        assert keys[0] == "triage.compute_down|compute-02", keys
        assert keys.count("nova.service_enabled_but_down|compute-02") == 1, "deduplicated"
        compute = row.summary.cell("compute")  # type: ignore[union-attr]
        assert compute is not None and (compute.text, compute.level) == ("2/3 up", "critical")
        first_seen = datetime.fromtimestamp(clock[0], UTC).strftime("%H:%M:%S")  # UTC, as every time shown
        assert cell_text(pane, "triage.compute_down|compute-02", "since") == first_seen
        await until(pilot, lambda: pane.toasts, "a toast")
        await pilot.pause(1.2)  # the three sources' criticals arrive one by one: still one toast
        assert len(pane.toasts) == 1 and pane.toasts[0].startswith("4 new critical findings - triage.compute_down")

        # time passes, the same findings are polled again: still seen since the same time, no new toast
        clock[0] += 75
        app.action_refresh_now()
        await pilot.pause(0.3)
        assert cell_text(pane, "triage.compute_down|compute-02", "since") == first_seen
        assert len(pane.toasts) == 1

        # a new critical appears: one more toast, about it alone
        current["rabbitmq"] = rabbit(empty_queues=["compute.compute-02", "conductor"])
        app.action_refresh_now()
        await until(pilot, lambda: len(pane.toasts) == 2, "a second toast")
        assert pane.toasts[1].startswith("rabbitmq.queue_no_consumer conductor:")
        assert cell_text(pane, "rabbitmq.queue_no_consumer|conductor", "since") == \
            datetime.fromtimestamp(clock[0], UTC).strftime("%H:%M:%S")

        # enter on the hint: its finding screen; enter there: the host screen
        app._activate(app.panes.index(pane))
        pane.table.move_cursor(row=pane.table.get_row_index("triage.compute_down|compute-02"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, FindingScreen), "the finding screen")
        assert app.screen.key == "triage.compute_down|compute-02"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HostScreen), "the host screen")
        assert app.screen.host == "compute-02"  # type: ignore[attr-defined]
        await pilot.press("escape", "escape")
        await until(pilot, lambda: not isinstance(app.screen, (HostScreen, FindingScreen)), "back")

        # enter on a queue, then enter on its finding: the RabbitMQ pane, cursor on that queue
        app._activate(app.panes.index(pane))
        pane.table.move_cursor(row=pane.table.get_row_index("rabbitmq.queue_no_consumer|conductor"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, FindingScreen), "the queue's finding screen")
        await pilot.press("enter")
        rabbit_pane = next(p for p in app.panes if p.SOURCE == "rabbitmq")
        await until(pilot, lambda: app.active_pane() is rabbit_pane, "the RabbitMQ pane")
        assert rabbit_pane.table is not None and rabbit_pane.table.cursor_key() == "/\x1fconductor"

        # enter on a stuck build, then on its finding: the instance screen
        app._activate(app.panes.index(pane))
        pane.table.move_cursor(row=pane.table.get_row_index("instance.stuck|web-1"))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, FindingScreen), "the build's finding screen")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, InstanceScreen), "the instance screen")
        assert app.screen.server_id == "web-1"  # type: ignore[attr-defined]


async def test_row_says_stale_when_a_source_fails() -> None:
    clock = [NOW.timestamp()]
    current: dict[str, Any] = {"services": services(), "rabbitmq": rabbit()}

    class Failing(Scripted):
        fail = False

        async def collect(self) -> Any:
            if self.fail:
                from tui.errors import SourceError

                raise SourceError("RabbitMQ management API at http://rmq:15672: connection refused")
            return await super().collect()

    rmq = Failing("rabbitmq", current)
    app = StacktopApp(Config(thresholds=TH), collectors=[Scripted("services", current), rmq],  # type: ignore[list-item]
                      clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        row = app.query_one(TriageRow)
        await until(pilot, lambda: row.summary and row.summary.cell("rabbitmq").level == "ok", "rabbit ok")
        rmq.fail = True
        clock[0] += 30
        app.action_refresh_now()
        await until(pilot, lambda: row.summary.cell("rabbitmq").level == "unknown", "rabbit unknown")  # type: ignore[union-attr]
        text = row.summary.cell("rabbitmq").text  # type: ignore[union-attr]
        assert text.startswith("3/3 running") and "STALE" in text, text


async def test_sim_compute_killed_row_red_hint_first_enter_opens_host() -> None:
    from tui.collectors import rabbitmq
    from tui.collectors.instances import InstancesCollector
    from tui.collectors.services import ServicesCollector
    from tui.openstack import connect
    from tui.sim import start_demo

    demo = start_demo(instances=24, hosts=4, queues=30, churn=0, storyline=False, manual=True,
                      service_down_time=20)
    demo.advance(6)  # past RabbitMQ's first statistics tick
    try:
        cfg = demo.config()
        os_cfg = cfg.openstack
        collectors = [ServicesCollector(os_cfg, cfg.thresholds, client_factory=lambda: connect(os_cfg),
                                        interval=1.0, timeout=10),
                      InstancesCollector(os_cfg, client_factory=lambda: connect(os_cfg), interval=1.0, timeout=10),
                      *rabbitmq.build(cfg)]
        app = StacktopApp(cfg, collectors=collectors)
        async with app.run_test(size=(160, 48)) as pilot:
            row = app.query_one(TriageRow)
            pane = app.query_one(FindingsPane)

            def compute() -> Any:
                return row.summary.cell("compute") if row.summary else None

            await until(pilot, lambda: compute() and compute().text == "3/3 up (1 disabled)", "3/3 up", 30)
            assert not pane.hints
            demo.inject("kill_compute", host="compute-02")
            demo.advance(25)  # past service_down_time on the sim's clock (the API's Date header)
            await until(pilot, lambda: pane.hints, "the hint", 30)
            assert [(h.kind, h.subject) for h in pane.hints] == [("triage.compute_down", "compute-02")]
            # (another may read "late": the frozen sim clock does not beat while the wall clock runs)
            assert compute().text.startswith("2/3 up") and compute().level == "critical", compute()
            assert pane.table is not None and pane.table.shown_keys[0] == "triage.compute_down|compute-02"
            app._activate(app.panes.index(pane))
            pane.table.move_cursor(row=0)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, FindingScreen), "the hint's finding screen")
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, HostScreen), "the host screen")
            assert app.screen.host == "compute-02"  # type: ignore[attr-defined]
            assert any(isinstance(p, SourcePane) for p in app.panes)
    finally:
        demo.stop()


async def test_the_toasts_remembered_are_bounded() -> None:
    """A dashboard runs all day: the pane keeps the last TOASTS_KEPT toasts, not every one since the start."""
    from tui.widgets.findings_pane import BURST_S, TOASTS_KEPT

    clock = [NOW.timestamp()]
    app = StacktopApp(Config(thresholds=TH), collectors=[], clock=lambda: clock[0])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(FindingsPane)
        for i in range(TOASTS_KEPT + 30):
            clock[0] += BURST_S + 1  # each its own notice, not one burst's summary
            finding = Finding("critical", "rabbitmq.queue_no_consumer", f"q{i}", f"queue q{i} has no consumer")
            pane.findings = [finding]
            pane._pending_toast = {finding.key: finding}
            pane._flush_toast()
        await pilot.pause()
        assert len(pane.toasts) == TOASTS_KEPT
        assert pane.toasts[0].startswith("rabbitmq.queue_no_consumer q30:"), "the oldest ones went first"
        assert pane.toasts[-1].startswith(f"rabbitmq.queue_no_consumer q{TOASTS_KEPT + 29}:")


async def test_findings_pane_keeps_its_top_rows_in_view_as_findings_arrive_above() -> None:
    """The storyline's criticals and its triage hint arrive after the first warnings: with the cursor left on
    the first row, the first row shown is still the most important one (the hint), not the row the cursor
    sat on before they came; a cursor put lower on purpose follows its row. Home/End and g/G: first/last row."""
    from tui.gallery import GalleryApp, Tour, make_demo

    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            pane = app.query_one(FindingsPane)
            await tour.walk(10)
            await until(pilot, lambda: pane.table is not None and pane.table.row_count > 0, "a first finding")
            table = pane.table
            assert table is not None
            before = table.cursor_key()
            await tour.walk(75)
            await until(pilot, lambda: pane.hints, "the storyline's triage hint")
            await pilot.pause()
            assert table.shown_keys[0] != before, "rows came above the first one"
            assert table.cursor_row == 0 and table.cursor_key() == table.shown_keys[0] and table.scroll_y == 0
            assert table.shown_keys[0].startswith("triage."), table.shown_keys[:3]
            # a row picked on purpose is followed across polls
            await tour.command("findings")
            await pilot.press("end")
            assert table.cursor_row == table.row_count - 1
            await pilot.press("g")
            assert table.cursor_row == 0
            await pilot.press("G")
            assert table.cursor_row == table.row_count - 1
            await pilot.press("home")
            await pilot.press("down")
            picked = table.cursor_key()
            await tour.walk(90)
            assert table.cursor_key() == picked or picked not in table.shown_keys
    finally:
        demo.stop()
