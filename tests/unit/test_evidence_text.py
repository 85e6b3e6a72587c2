"""The finding screen writes evidence as text: a triage hint's `derived_from` as one `kind  subject` a line,
lists and mappings a line an item, yes/no; never raw JSON (brackets and quotes) for what reads as text."""

from __future__ import annotations

from datetime import UTC, datetime

from tui.screens.finding import evidence_value


def test_derived_from_is_one_finding_a_line() -> None:
    derived = [("nova.service_enabled_but_down", "compute-01"), ("rabbitmq.queue_no_consumer", "compute.compute-01")]
    assert evidence_value(derived) == ("nova.service_enabled_but_down  compute-01\n"
                                       "rabbitmq.queue_no_consumer  compute.compute-01")


def test_plain_values_read_as_text() -> None:
    assert evidence_value(["ctl-1", "ctl-2"]) == "ctl-1\nctl-2"
    assert evidence_value({"cpu": 4, "ram": 2048}) == "cpu: 4\nram: 2048"
    assert evidence_value(False) == "no" and evidence_value(None) == "-" and evidence_value(75.0) == "75.0"
    assert evidence_value("as typed") == "as typed"
    assert evidence_value(datetime(2026, 9, 21, 14, 13, 20, tzinfo=UTC)).startswith("2026-09-21")
    assert evidence_value([]) == "none"


def test_what_nests_deeper_stays_json() -> None:
    assert evidence_value({"a": {"b": 1}}) == '{"a": {"b": 1}}'
