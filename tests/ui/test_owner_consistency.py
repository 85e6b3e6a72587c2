"""One owner for an instance, whichever view names it: the simulated storyline's build that the scheduler
placed on the dead compute (task_state `scheduling`, no host recorded, placement's allocation on the victim)
has the same owner in the instances pane's row, the instance screen's five questions, the instance.stuck
finding and the snapshot's JSON report, all from the same poll (tui.gallery: manual sim clock, polls only when
the tour asks); and at every poll on the way there, every stuck server's row names the owner its finding
names."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text

from tui.gallery import STEP, GalleryApp, Tour, make_demo
from tui.models.instances import InstancesSnapshot
from tui.screens.instance import InstanceScreen
from tui.snapshot import to_report
from tui.widgets.instances_pane import COLUMNS, InstancesPane


def plain(widget: Any) -> str:
    """What a Static holds (its markup rendered), on one line."""
    return " ".join(Text.from_markup(str(widget.content)).plain.split())


async def test_a_placed_build_has_one_owner_in_pane_screen_finding_and_snapshot(utc: None) -> None:
    demo = make_demo()
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=(160, 48)) as pilot:
            tour = Tour(app, pilot)
            await tour.command("instances")
            pane = app.query_one(InstancesPane)
            await tour.poll()
            while tour.elapsed < 90:  # the victim's compute died at 15 s; churn builds cast to it wait there
                demo.advance(STEP)
                await tour.poll()
                # at every poll, every stuck server: its row names the owner its finding names
                assert pane.table is not None
                for f in app.observations["instances"].findings:
                    if f.kind == "instance.stuck" and f.subject in pane.table.shown_keys:
                        cell = str(pane.table.get_row(f.subject)[COLUMNS.index("owner")])
                        assert cell == f.evidence["owner_label"].replace(" on ", "@"), (tour.elapsed, f.summary)
            obs = app.observations["instances"]
            snap = obs.snapshot
            assert isinstance(snap, InstancesSnapshot)
            placed = [f for f in obs.findings if f.kind == "instance.stuck" and f.evidence.get("cast_host")]
            assert placed, "the storyline has a build stuck in scheduling with its host chosen at 90 s"
            finding = placed[0]
            sid, host = finding.subject, finding.evidence["cast_host"]
            server = snap.server(sid)
            assert server is not None and server.task_state == "scheduling" and server.host is None
            owner = f"nova-compute on {host}"

            # the finding
            assert finding.evidence["owner"] == "nova-compute" and finding.evidence["host"] == host
            assert f"owner {owner}" in finding.summary

            # the snapshot's JSON report of the same observations
            report = json.loads(json.dumps(to_report(list(app.observations.values()), demo.now().timestamp()),
                                           default=str))
            reported = next(f for f in report["findings"] if f["kind"] == "instance.stuck" and f["subject"] == sid)
            assert (reported["evidence"]["owner"], reported["evidence"]["host"]) == ("nova-compute", host)
            assert f"owner {owner}" in reported["summary"]

            # the instances pane's row
            assert pane.table is not None and sid in pane.table.shown_keys
            cells = [str(c) for c in pane.table.get_row(sid)]
            assert cells[COLUMNS.index("owner")] == f"nova-compute@{host}", cells

            # the instance screen's five questions
            await tour.command(f"server {sid}")
            await tour.until(lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                             "the instance screen's read")
            body = plain(app.screen.query_one("#instance-body"))
            assert "nova-scheduler" not in body.split("Actions and events")[0], body
            assert f"the scheduler chose {host}" in body, body
            assert f"owner {owner};" in body, body
            assert "the scheduler never succeeded" not in body, body
            assert f"the chosen host {host}: nova-compute on {host} is down" in body, body
            assert finding.next_step.split(" (grep ")[0] in body, body
    finally:
        demo.stop()
