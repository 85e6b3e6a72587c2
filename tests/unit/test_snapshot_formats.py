"""`stacktop snapshot --format nagios|prometheus|text` on hand-made observations: the Nagios first line and
performance data, Prometheus exposition parsed back by prometheus_client's own parser (hostile label values
included), and the piped text's one line per finding."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tui.models.finding import Finding
from tui.models.galera import GaleraNode, GaleraSnapshot
from tui.models.observation import Observation
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.safetext import clean
from tui.sim import hostile
from tui.snapshot_nagios import perf, perf_label, render_nagios
from tui.snapshot_plain import render_plain
from tui.snapshot_prometheus import label_value, render_prometheus

NOW = 1_800_000_000.0
QUOTE_NEWLINE = 'say "hi"\nthen\\leave'
QUEUE_NAMES = (*(f"notifications.{n}" for n in hostile.NAMES), QUOTE_NEWLINE)
PERF = re.compile(r"^('([^']|'')+'|[^ '=]+)=-?[0-9.]+[a-zA-Z%]*(;[0-9.:@~-]*){0,4}$")


def finding(severity: str, kind: str, subject: str, summary: str = "it broke") -> Finding:
    return Finding(severity, kind, subject, summary, next_step="look", source="services")  # type: ignore[arg-type]


def observations(findings: tuple[Finding, ...] = (), *, galera_ok: bool = True) -> list[Observation]:
    queues = tuple(QueueInfo(vhost="/", name=name, messages=10 + i, consumers=0) for i, name in enumerate(QUEUE_NAMES))
    queues += (QueueInfo(vhost="/", name="conductor", messages=5, consumers=3),  # consumed: not a backlog
               QueueInfo(vhost="/", name="scheduler", messages=0, consumers=0))  # empty: not a backlog
    rabbit = RabbitSnapshot(endpoint="http://mq:15672", taken_at=datetime.fromtimestamp(NOW, UTC), queues=queues)
    nodes = (GaleraNode("db1:3306", True, cluster_size=2, cluster_status="Primary"),
             GaleraNode("db2:3306", True, cluster_size=2, cluster_status="Primary"),
             GaleraNode("db3:3306", False, error="refused"))
    galera = GaleraSnapshot(nodes=nodes, expected_size=3, taken_at=NOW)
    return [
        Observation("services", snapshot=None, ok_at=NOW, tried_at=NOW - 0.5, duration_s=0.5, findings=findings),
        Observation("rabbitmq", snapshot=rabbit, ok_at=NOW, tried_at=NOW - 1.25, duration_s=1.25),
        Observation("galera", snapshot=galera, ok_at=NOW if galera_ok else None, tried_at=NOW - 2, duration_s=2.0,
                    error=None if galera_ok else "db1:3306: Access denied | try again"),
    ]


def families(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


# -- prometheus ----------------------------------------------------------------------------------------------

def test_prometheus_parses_with_every_family_and_backlogged_queues_only() -> None:
    found = (finding("critical", "nova.service_down", "compute-01"), finding("critical", "nova.service_down", "c2"),
             finding("warning", "rabbitmq.queue_no_consumer", "q"))
    text = render_prometheus(observations(found), NOW)
    assert text.endswith("\n")
    got = families(text)
    assert got["stacktop_status"][0].value == 2
    assert {(s.labels["severity"], s.value) for s in got["stacktop_findings_by_severity"]} == {
        ("critical", 2), ("warning", 1), ("info", 0)}
    assert {(s.labels["severity"], s.labels["kind"], s.value) for s in got["stacktop_findings"]} == {
        ("critical", "nova.service_down", 2), ("warning", "rabbitmq.queue_no_consumer", 1)}
    assert {s.labels["source"]: s.value for s in got["stacktop_source_up"]} == {
        "services": 1, "rabbitmq": 1, "galera": 1}
    assert {s.labels["source"]: s.value for s in got["stacktop_source_duration_seconds"]} == {
        "services": 0.5, "rabbitmq": 1.25, "galera": 2.0}
    queues = {s.labels["queue"]: s.value for s in got["stacktop_queue_messages"]}
    assert "conductor" not in queues and "scheduler" not in queues
    assert len(queues) == len(QUEUE_NAMES) == got["stacktop_queues_backlogged"][0].value
    assert got["stacktop_galera_cluster_size"][0].value == 2
    assert got["stacktop_galera_cluster_expected_size"][0].value == 3
    assert got["stacktop_galera_nodes_reachable"][0].value == 2
    for name in got:  # every family has its HELP and TYPE lines
        assert f"# HELP {name} " in text and f"# TYPE {name} gauge" in text


def test_prometheus_label_values_read_back_as_the_names_with_controls_written_out() -> None:
    text = render_prometheus(observations(), NOW)
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text
    queues = {s.labels["queue"]: s.value for s in families(text)["stacktop_queue_messages"]}
    for i, name in enumerate(QUEUE_NAMES):
        expected = "\n".join(clean(part) for part in name.split("\n"))
        assert queues[expected] == 10 + i, name
    assert 'say "hi"\nthen\\leave' in queues, "quote, newline and backslash round-trip exactly"


@pytest.mark.parametrize(("raw", "written"), [('a"b', 'a\\"b'), ("a\\b", "a\\\\b"), ("a\nb", "a\\nb"),
                                              ("back\\", "back\\\\"), ("evil\x1b[2J", "evil\\\\x1b[2J")])
def test_label_value_escapes(raw: str, written: str) -> None:
    assert label_value(raw) == written


def test_prometheus_failed_source_is_down_and_its_data_left_out() -> None:
    got = families(render_prometheus(observations(galera_ok=False), NOW))
    assert {s.labels["source"]: s.value for s in got["stacktop_source_up"]}["galera"] == 0
    assert got["stacktop_status"][0].value == 3
    assert "stacktop_galera_cluster_size" not in got


# -- nagios --------------------------------------------------------------------------------------------------

def test_nagios_first_line_state_worst_findings_and_perfdata() -> None:
    found = (finding("critical", "nova.service_down", "compute-01", "down | really"),
             finding("critical", "instance.stuck", "a"), finding("critical", "instance.stuck", "b"),
             finding("critical", "galera.size", "db"), finding("critical", "neutron.agent_down", "x"),
             finding("warning", "instance.error", "e"), finding("info", "nova.service_disabled", "c4"))
    out = render_nagios(observations(found))
    first, *rest = out.rstrip("\n").split("\n")
    status, perfdata = first.split(" | ")
    # in the order of the findings list (most severe first, then by kind)
    assert status == ("STACKTOP CRITICAL - 5 critical, 1 warning, 1 info: galera.size db, instance.stuck (2), "
                      "neutron.agent_down x and 1 more")
    labels = {}
    for item in perfdata.split(" "):
        assert PERF.match(item), item
        label, value = item.split("=", 1)
        labels[label] = value
    assert labels["findings_critical"] == "5;;0;0"
    assert labels["findings_warning"] == "1;0;;0"
    assert labels["sources_ok"] == "3;;;0;3"
    assert labels["rabbitmq_duration"] == "1.25s;;;0"
    assert labels["queues_backlogged"] == f"{len(QUEUE_NAMES)};;;0"
    assert labels["galera_cluster_size"] == "2;3:;2:;0;3"
    assert "CRITICAL nova.service_down compute-01: down / really - next: look" in rest, \
        "a | in the long output would start performance data"
    assert len(rest) == len(found) + 3
    assert rest[-3:] == ["source services: ok in 0.50s", "source rabbitmq: ok in 1.25s", "source galera: ok in 2.00s"]
    assert out.count("|") == 1


@pytest.mark.parametrize(("found", "galera_ok", "state"), [
    ((), True, "STACKTOP OK - no findings, 3 sources read"),
    ((finding("info", "nova.service_disabled", "c4"),), True, "STACKTOP OK - 1 info, 3 sources read"),
    ((finding("warning", "instance.error", "e"),), True, "STACKTOP WARNING - 1 warning: instance.error e"),
    ((finding("warning", "instance.error", "e"),), False,
     "STACKTOP UNKNOWN - not read: galera; 1 warning: instance.error e"),
])
def test_nagios_states(found: tuple[Finding, ...], galera_ok: bool, state: str) -> None:
    first = render_nagios(observations(found, galera_ok=galera_ok)).split("\n")[0]
    assert first.split(" | ")[0] == state
    if not galera_ok:
        assert "source galera: ERROR db1:3306: Access denied / try again in 2.00s" in render_nagios(
            observations(found, galera_ok=False))


def test_nagios_hostile_subject_stays_on_its_line_without_controls() -> None:
    found = tuple(finding("critical", "nova.service_down", name) for name in (*hostile.NAMES, "two\nlines"))
    out = render_nagios(observations(found))
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert out.count("\n") == 1 + len(found) + 3
    assert "two\\x0alines" in out


@pytest.mark.parametrize(("label", "written"), [("plain", "plain"), ("with space", "'with space'"),
                                                ("it's", "'it''s'"), ("a=b", "a_b")])
def test_perf_label_quoting(label: str, written: str) -> None:
    assert perf_label(label) == written
    assert perf(label, 1.5, "s", minimum=0) == f"{written}=1.5s;;;0"


def test_perf_values_in_plain_decimals() -> None:
    assert perf("t", 1234567.891234, "s") == "t=1234567.891s"
    assert perf("t", 0.0004, "s") == "t=0s"
    assert perf("n", 7, warn="0", minimum=0, maximum=12) == "n=7;0;;0;12"


# -- text, piped ---------------------------------------------------------------------------------------------

def test_plain_text_is_one_line_per_finding_however_long() -> None:
    long = "word " * 120
    found = (finding("critical", "nova.service_down", "compute-01", long.strip()),
             finding("warning", "instance.error", hostile.CLEAR_AND_TITLE))
    lines = render_plain(observations(found), now=NOW).rstrip("\n").split("\n")
    assert lines[0].startswith("triage  catalog ") and "| Galera size 2/3, 2 Primary" in lines[0]
    assert lines[1:4] == ["source services: ok in 0.50s", "source rabbitmq: ok in 1.25s",
                          "source galera: ok in 2.00s"]
    assert lines[4] == f"CRITICAL nova.service_down compute-01: {long.strip()} - next: look"
    assert lines[5] == "WARNING instance.error evil\\x1b[2J\\x1b]0;pwned\\x07x: it broke - next: look"
    assert len(lines) == 6


def test_no_source_configured_is_unknown_in_every_format() -> None:
    assert render_nagios([]).split(" | ")[0] == "STACKTOP UNKNOWN - no source is configured"
    got = families(render_prometheus([], NOW))
    assert got["stacktop_status"][0].value == 3
    assert got["stacktop_source_up"] == [] and "stacktop_queue_messages" not in got
    assert render_plain([]) == "No source is configured: see config.example.toml, or try --demo.\n"
