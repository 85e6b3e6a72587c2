"""`stacktop snapshot --demo` as a user runs it (a subprocess, stdout piped): the same verdict and findings on
every run, whatever the timing, and every --format on the simulated cloud (the hostile one too)."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tui.safetext import clean
from tui.sim import hostile

ROOT = Path(__file__).resolve().parents[2]
EXIT_CRITICAL = 2


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=180)


def run_all(*commands: tuple[str, ...]) -> list[subprocess.CompletedProcess[str]]:
    """The snapshot commands, two at a time (each its own process), with a deadline no loaded machine reaches:
    the verdict is what is judged, not the speed (`stacktop snapshot` answers within 30 s by default)."""
    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(lambda args: run(*args, "--deadline", "600"), commands))


def findings_of(report: dict) -> list[tuple[str, str, str]]:
    return [(f["severity"], f["kind"], f["subject"]) for f in report["findings"]]


@pytest.mark.slow
def test_every_run_gives_the_same_verdict_and_findings() -> None:
    procs = run_all(*[("snapshot", "--demo", "--json")] * 3)  # the third one starts later, on a busier clock
    reports = [json.loads(p.stdout) for p in procs]
    assert [p.returncode for p in procs] == [EXIT_CRITICAL] * 3, [p.stderr for p in procs]
    assert findings_of(reports[0]) == findings_of(reports[1]) == findings_of(reports[2])
    kinds = {kind for _, kind, _ in findings_of(reports[0])}
    # the storyline point it reads: the dead compute (and its queue's backlog), the dead agent, the stuck build
    assert {"triage.compute_down", "nova.service_enabled_but_down", "neutron.agent_down", "instance.stuck",
            "rabbitmq.queue_no_consumer", "instance.error", "nova.service_disabled"} <= kinds
    queues = [{(q["vhost"], q["name"]): q["messages"] for q in r["data"]["rabbitmq"]["queues"]} for r in reports]
    assert queues[0] == queues[1] == queues[2], "queue counts do not depend on when the read came"


@pytest.mark.slow
def test_formats_on_the_demo() -> None:
    text, nagios, prometheus, hostile_prom = run_all(
        ("snapshot", "--demo"), ("snapshot", "--demo", "--format", "nagios"),
        ("snapshot", "--demo", "--format", "prometheus"),
        ("snapshot", "--demo", "--hostile", "--format", "prometheus"))
    for proc in (text, nagios, prometheus, hostile_prom):
        assert proc.returncode == EXIT_CRITICAL, proc.stderr
        assert "Traceback" not in proc.stderr

    # text, piped: one item a line, whatever its length (no 80-column wrap)
    lines = text.stdout.rstrip("\n").split("\n")
    assert lines[0].startswith("triage  catalog ")
    assert all(line.startswith(("triage  ", "source ", "CRITICAL ", "WARNING ", "INFO ")) for line in lines), lines
    assert any(len(line) > 200 for line in lines if line.startswith("CRITICAL triage.compute_down "))

    first, *details = nagios.stdout.rstrip("\n").split("\n")
    assert first.startswith("STACKTOP CRITICAL - ") and "triage.compute_down" in first
    assert " | findings_critical=" in first and "galera_cluster_size=3;3:;2:;0;3" in first
    assert [d.split(":")[0] for d in details[-5:]] == [
        "source services", "source instances", "source rabbitmq", "source galera", "source placement"]
    assert details[:-5] == [line for line in lines if line.startswith(("CRITICAL ", "WARNING ", "INFO "))]

    got = {f.name: f.samples for f in text_string_to_metric_families(prometheus.stdout)}
    assert got["stacktop_status"][0].value == EXIT_CRITICAL
    assert {s.labels["source"] for s in got["stacktop_source_up"]} == {"services", "instances", "rabbitmq", "galera",
                                                                      "placement"}
    assert all(s.value == 1 for s in got["stacktop_source_up"])
    assert got["stacktop_galera_cluster_size"][0].value == got["stacktop_galera_cluster_expected_size"][0].value == 3
    queues = {s.labels["queue"] for s in got["stacktop_queue_messages"]}
    assert {"notifications.info", "versioned_notifications.info"} <= queues
    assert any(q.startswith("compute.compute-") for q in queues), "the dead compute's queue backlog"

    assert "\x1b" not in hostile_prom.stdout and "\x07" not in hostile_prom.stdout
    got = {f.name: f.samples for f in text_string_to_metric_families(hostile_prom.stdout)}
    queues = {s.labels["queue"] for s in got["stacktop_queue_messages"]}
    assert {f"notifications.{clean(name)}" for name in hostile.NAMES} <= queues


def test_json_and_another_format_disagree() -> None:
    proc = run("snapshot", "--json", "--format", "prometheus")
    assert proc.returncode == 3
    assert proc.stderr == "stacktop: --json and --format prometheus disagree - give one of them\n"
    assert proc.stdout == ""
    nagios = run("snapshot", "--json", "--format", "nagios")  # a check's console shows stdout only
    assert nagios.returncode == 3
    assert nagios.stdout == "STACKTOP UNKNOWN - stacktop: --json and --format nagios disagree - give one of them\n"


def test_unknown_format_is_a_usage_error() -> None:
    proc = run("snapshot", "--format", "xml")
    assert proc.returncode == 3
    assert proc.stderr.count("\n") == 1 and "--format" in proc.stderr and "xml" in proc.stderr
