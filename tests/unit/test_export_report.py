"""`stacktop export --markdown`: links that open from where the report is, names without unit separators,
times to the second, table cells of a readable length, the timeline in time order."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tui.export import CELL_MAX, to_markdown

T0 = "2026-12-04T12:00:00.123456+00:00"
T1 = "2026-12-04T12:00:05.654321+00:00"
T2 = "2026-12-04T12:00:09.000001+00:00"


def journal(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], Path]:
    folder = tmp_path / "rec"
    folder.mkdir()
    shot = folder / "stacktop-1.svg"
    shot.write_text("<svg/>")
    long = "queue " + "x" * 700
    events = [
        {"type": "finding_raised", "ts": T1, "source": "rabbitmq", "schema_version": 2,
         "finding": {"severity": "warning", "kind": "rabbitmq.queue_no_consumer", "subject": "q",
                     "summary": long, "next_step": "look"}},
        {"type": "note", "ts": T0, "subject": "rabbitmq:/\x1fnotifications.info", "text": "known",
         "source": "rabbitmq"},
        {"type": "note", "ts": T2, "subject": "rabbitmq:tenant\x1fq2", "text": "other vhost", "source": "rabbitmq"},
        {"type": "screenshot", "ts": T2, "path": str(shot)},
    ]
    return folder / "j.jsonl", events, shot


def test_screenshot_links_resolve_from_the_reports_folder_or_are_absolute(tmp_path: Path) -> None:
    path, events, shot = journal(tmp_path)
    out = tmp_path / "elsewhere" / "deeper" / "report.md"
    out.parent.mkdir(parents=True)
    report = to_markdown(path, events, output=out)
    links = re.findall(r"\]\(([^)]+\.svg)\)", report)
    assert links and all((out.parent / link).resolve() == shot.resolve() for link in links), links
    on_stdout = to_markdown(path, events)
    links = re.findall(r"\]\(([^)]+\.svg)\)", on_stdout)
    assert links == [str(shot)] and os.path.isabs(links[0])


def test_rabbitmq_note_subjects_read_as_queue_names(tmp_path: Path) -> None:
    path, events, _ = journal(tmp_path)
    report = to_markdown(path, events)
    assert "\x1f" not in report and "x1f" not in report
    assert "(rabbitmq:notifications.info): known" in report
    assert "rabbitmq:tenant q2" in report


def test_times_to_the_second_cells_capped_timeline_in_order(tmp_path: Path) -> None:
    path, events, _ = journal(tmp_path)
    report = to_markdown(path, events)
    assert ".123456" not in report and "654321" not in report
    assert "2026-12-04 12:00:00 UTC" in report
    for line in report.splitlines():
        if line.startswith("|"):
            cells = line.strip("|").split(" | ")
            assert all(len(c) <= CELL_MAX + 10 for c in cells), max(map(len, cells))
    assert "…" in report
    timeline = report[report.index("## Timeline"):report.index("## Screenshots")]
    times = re.findall(r"^\| (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC) \|", timeline, re.MULTILINE)
    assert times == sorted(times) and len(times) == 4
    assert report.index("From 2026-12-04 12:00:00 UTC to 2026-12-04 12:00:09 UTC") > 0
