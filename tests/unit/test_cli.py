"""CLI: usage errors are one line with exit 3; snapshot --demo works end to end on the simulator."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize(("args", "message"), [
    (("snapshot", "--instances", "5"), "stacktop: --instances/--hosts/--queues/--churn/--speed/--seed/--hostile "
                                       "shape the simulated cloud - add --demo"),
    (("--demo", "--instances", "0"), "stacktop: argument --instances: must be at least 1, got 0 - see stacktop --help"),
    (("--bogus",), "stacktop: unrecognized arguments: --bogus - see stacktop --help"),
])
def test_usage_errors(args: tuple[str, ...], message: str) -> None:
    proc = run(*args)
    assert proc.returncode == 3
    assert proc.stderr.strip() == message
    assert "Traceback" not in proc.stderr


def test_snapshot_demo_json_reads_every_source() -> None:
    proc = run("snapshot", "--demo", "--json", "--instances", "50", "--queues", "40")
    assert proc.returncode in (0, 1, 2), proc.stderr
    report = json.loads(proc.stdout)
    assert set(report["sources"]) == {"services", "instances", "rabbitmq", "galera", "placement"}
    assert all(src["ok"] for src in report["sources"].values()), report["sources"]
    instances = report["data"]["instances"]
    names = {s["name"] for s in instances["servers"]}
    assert {"bigdata-000", "web-000-canary"} <= names, "the storyline's boots"
    # the servers worth attention and every server on a down compute, not the 50
    assert instances["poll"]["mode"] == "attention"
    listed = set(instances["listed_hosts"])
    assert all(s["task_state"] or s["status"] in ("BUILD", "ERROR") or s["host"] in listed
               for s in instances["servers"]), instances["servers"]
    assert len(names) < 50
    kinds = {f["kind"] for f in report["findings"]}
    assert "nova.service_disabled" in kinds, "the demo starts with compute-04 disabled for maintenance"
    assert "placement.stale_allocation" in kinds, "the placement audit ran once and found the storyline's orphan"
    assert set(report["findings"][0]) == {"severity", "kind", "subject", "summary", "evidence", "next_step",
                                          "source"}


def test_options_before_or_after_the_subcommand() -> None:
    from tui.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["--config", "a.toml", "snapshot"]).config == "a.toml"
    assert parser.parse_args(["snapshot", "--config", "b.toml"]).config == "b.toml"
    assert parser.parse_args(["--config", "c.toml"]).config == "c.toml"
    assert parser.parse_args(["--demo", "snapshot"]).demo is True
