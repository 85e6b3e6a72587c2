"""The triage row's brief form (a narrow terminal): ok answers in a word, reassurances left out, the rest kept;
the row picks it only when the whole row would take more than 3 lines."""

from __future__ import annotations

from tui.models.triage import TriageCell, TriageSummary
from tui.rules.triage import brief_text
from tui.widgets.source_pane import lines_needed
from tui.widgets.triage_row import FULL_LINES, render_summary

CELLS = (
    TriageCell("catalog", "catalog", "ok (6 endpoints)"),
    TriageCell("compute", "compute", "6/7 up, 1 late (1 disabled)", "warning"),
    TriageCell("agents", "agents", "17/17 alive"),
    TriageCell("volume", "volume", "5/5 up"),
    TriageCell("rabbitmq", "RabbitMQ", "3/3 running, ALARM memory@rabbit@ctl-1, no partitions, 1 service queue "
               "without consumers: compute.compute-01", "critical"),
    TriageCell("galera", "Galera", "NO QUORUM: size 1/3, 0 Primary, 0 Synced (reads 1047, writes fail)", "critical"),
    TriageCell("placement", "placement", "1 stale allocation (compute-02)", "warning"),
)


def test_brief_text() -> None:
    assert brief_text(CELLS[0]) == "ok"
    assert brief_text(TriageCell("rabbitmq", "RabbitMQ", "3/3 running, no alarms, no partitions, service queues "
                                 "consumed")) == "3/3 running"
    assert brief_text(CELLS[4]) == ("3/3 running, ALARM memory@rabbit@ctl-1, 1 service queue without consumers: "
                                    "compute.compute-01")
    assert brief_text(CELLS[5]) == CELLS[5].text, "a critical answer is kept whole (its parenthesis too)"
    assert brief_text(CELLS[6]) == CELLS[6].text


def test_brief_row_fits_where_the_full_one_does_not() -> None:
    summary = TriageSummary(CELLS)
    full, brief = render_summary(summary), render_summary(summary, brief=True)
    assert lines_needed(full, 158) <= FULL_LINES, "160 columns: the whole row"
    assert lines_needed(full, 78) > FULL_LINES and lines_needed(brief, 78) <= 5, "80 columns: the brief row"
    assert lines_needed(brief, 118) <= FULL_LINES
    assert brief.plain.endswith("placement 1 stale allocation (compute-02)")
