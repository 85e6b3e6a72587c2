"""`stacktop snapshot` as monitoring runs it: --output for node_exporter's textfile collector (atomic, whatever
the exit code, nothing left behind), Nagios errors on stdout in the plugin format, and the Prometheus labels,
per-kind service counts and the backlogged-queue cap."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tui.cli import asks_nagios
from tui.models.observation import Observation
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.models.services import EndpointCheck, KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.snapshot_prometheus import render_prometheus

ROOT = Path(__file__).resolve().parents[2]
EXIT_CRITICAL, EXIT_UNKNOWN = 2, 3
NOW = 1_800_000_000.0


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("STACKTOP_CONFIG", None)
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env=env)


def families(text: str) -> dict[str, list]:
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


# -- --output --------------------------------------------------------------------------------------------------

def test_output_replaces_the_file_on_a_critical_cloud_and_leaves_no_temp(tmp_path: Path) -> None:
    """The textfile recipe: a CRITICAL cloud (exit 2) still updates the file; the old file is replaced whole,
    readable by node_exporter's user, and no temporary file stays in the folder."""
    target = tmp_path / "stacktop.prom"
    target.write_text("stale\n")
    proc = run("snapshot", "--demo", "--format", "prometheus", "--output", str(target), "--deadline", "600")
    assert proc.returncode == EXIT_CRITICAL, proc.stderr
    assert proc.stdout == ""
    got = families(target.read_text())
    assert [s.value for s in got["stacktop_status"]] == [EXIT_CRITICAL]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stacktop.prom"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_output_to_a_folder_that_is_not_there_is_one_line(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "stacktop.prom"
    proc = run("snapshot", "--demo", "--format", "prometheus", "--output", str(target), "--deadline", "600")
    assert proc.returncode == EXIT_UNKNOWN
    assert proc.stderr.count("\n") == 1 and f"--output {target}: cannot write" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_output_of_text_is_the_piped_text_not_a_table(tmp_path: Path) -> None:
    target = tmp_path / "report.txt"
    proc = run("snapshot", "--demo", "--output", str(target), "--deadline", "600")
    assert proc.returncode == EXIT_CRITICAL, proc.stderr
    text = target.read_text()
    assert text.startswith("triage  catalog ") and "\nsource services: ok in " in text  # the piped form
    assert "─" not in text  # no table borders


# -- nagios errors -------------------------------------------------------------------------------------------

def test_nagios_config_error_is_plugin_output_on_stdout(tmp_path: Path) -> None:
    proc = run("snapshot", "--format", "nagios", "--config", str(tmp_path / "nope.toml"))
    assert proc.returncode == EXIT_UNKNOWN
    assert proc.stdout.startswith("STACKTOP UNKNOWN - ") and "nope.toml" in proc.stdout
    assert proc.stdout.count("\n") == 1


def test_nagios_usage_errors_are_plugin_output_on_stdout() -> None:
    for args in (("snapshot", "--format", "nagios", "--deadline", "0"),
                 ("snapshot", "--format=nagios", "--bogus"),
                 ("snapshot", "--json", "--format", "nagios")):
        proc = run(*args)
        assert proc.returncode == EXIT_UNKNOWN, args
        assert re.match(r"STACKTOP UNKNOWN - stacktop( snapshot)?: ", proc.stdout), (args, proc.stdout, proc.stderr)
        assert proc.stdout.count("\n") == 1 and "|" not in proc.stdout


def test_other_formats_keep_errors_on_stderr(tmp_path: Path) -> None:
    proc = run("snapshot", "--format", "prometheus", "--config", str(tmp_path / "nope.toml"))
    assert proc.returncode == EXIT_UNKNOWN and proc.stdout == "" and "nope.toml" in proc.stderr


def test_asks_nagios_reads_only_snapshot_command_lines() -> None:
    assert asks_nagios(["snapshot", "--format", "nagios"])
    assert asks_nagios(["--config", "x", "snapshot", "--format=nagios"])
    assert not asks_nagios(["snapshot", "--format", "json"])
    assert not asks_nagios(["export", "--format", "nagios"])
    assert not asks_nagios(["snapshot", "--format"])


def test_help_names_the_nrpe_deadline() -> None:
    proc = run("snapshot", "--help")
    assert "--deadline 8" in proc.stdout and "--output" in proc.stdout


# -- prometheus ----------------------------------------------------------------------------------------------

def _services() -> Observation:
    at = datetime.fromtimestamp(NOW, UTC)
    rows = (ServiceRow("compute", "nova-compute", "c1", updated_at=at), ServiceRow("compute", "nova-compute", "c2",
            state="down", updated_at=datetime.fromtimestamp(NOW - 3600, UTC)),
            ServiceRow("compute", "nova-conductor", "ctl", updated_at=at))
    snap = ServicesSnapshot(taken_at=at, keystone=KeystoneCheck(auth_url="https://ks:5000", cloud="prod"),
                            compute=SectionRead("compute", rows, read_at=at),
                            network=SectionRead("network", (ServiceRow("network", "neutron-l3-agent", "n1",
                                                                       updated_at=at),), read_at=at),
                            volume=SectionRead("volume", deployed=False),
                            catalog=(EndpointCheck("compute", "https://nova", region="RegionTwo"),))
    return Observation("services", snapshot=snap, ok_at=NOW, tried_at=NOW, duration_s=0.1)


def _rabbit(n: int) -> Observation:
    queues = tuple(QueueInfo(vhost="/", name=f"q{i:03d}", messages=i + 1, consumers=0) for i in range(n))
    snap = RabbitSnapshot(endpoint="http://mq:15672", taken_at=datetime.fromtimestamp(NOW, UTC), queues=queues)
    return Observation("rabbitmq", snapshot=snap, ok_at=NOW, tried_at=NOW, duration_s=0.1)


def test_prometheus_labels_every_sample_with_cloud_and_region() -> None:
    got = families(render_prometheus([_services(), _rabbit(2)], NOW, cloud="prod"))
    for samples in got.values():
        for s in samples:
            assert s.labels["cloud"] == "prod" and s.labels["region"] == "RegionTwo", s


def test_prometheus_counts_services_up_and_total_per_kind_and_binary() -> None:
    got = families(render_prometheus([_services()], NOW, cloud="prod"))
    up = {(s.labels["kind"], s.labels["binary"]): s.value for s in got["stacktop_services_up"]}
    total = {(s.labels["kind"], s.labels["binary"]): s.value for s in got["stacktop_services_total"]}
    assert up == {("compute", "nova-compute"): 1, ("compute", "nova-conductor"): 1, ("network", "neutron-l3-agent"): 1}
    assert total == {("compute", "nova-compute"): 2, ("compute", "nova-conductor"): 1,
                     ("network", "neutron-l3-agent"): 1}


def test_prometheus_caps_queue_series_at_the_fullest_and_counts_them_all() -> None:
    got = families(render_prometheus([_rabbit(500)], NOW, cloud="prod", top_queues=20))
    queues = {s.labels["queue"]: s.value for s in got["stacktop_queue_messages"]}
    assert len(queues) == 20 and min(queues.values()) == 481 and max(queues.values()) == 500
    assert got["stacktop_queues_backlogged"][0].value == 500
    assert got["stacktop_queue_backlog_messages"][0].value == sum(range(1, 501))
