"""Deadlines that hold and a body size cap (issue #22), through `stacktop snapshot` run as a Nagios check would.

Hostile answers come from the simulator's faults (tui.sim.faults): `trickle` (the real answer, one byte every
0.5 s: no per-read timeout ever fires), `huge` (50 MB, chunked, no Content-Length) and `redirect` (a 307 to a
trickle), on Keystone, on Nova behind a working Keystone (the catalog points at the hostile endpoint) and on
the RabbitMQ management API. Each run must end within its deadline + 2 s with exit 3 and an error that says
what happened; a 50 MB body must cost less than 100 MB of peak RSS; a source still running at the snapshot's
own deadline is named on stderr in one line. Before these deadlines a trickling Keystone made the snapshot
hang for good.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tui.sim.demo import CLOUD, RABBIT_PASSWORD, RABBIT_USER

OPENSTACK_TIMEOUT = 3.0
RABBITMQ_TIMEOUT = 3.0
DEADLINE = 12.0  # the snapshot's own: above every source's timeout, so the sources' errors are what is judged
SLACK = 2.0  # the brief's margin: never tighter than deadline + 2 s


def _config(tmp_path: Path, sim: Any, *, deadline: float = DEADLINE, openstack_timeout: float = OPENSTACK_TIMEOUT
            ) -> Path:
    demo = sim.demo
    path = tmp_path / "stacktop.toml"
    path.write_text(
        f'[openstack]\ncloud = "{CLOUD}"\nclouds_file = "{demo.clouds_file}"\ntimeout = {openstack_timeout}\n\n'
        f'[rabbitmq]\nmanagement_url = "{demo.rabbitmq_url}"\nuser = "{RABBIT_USER}"\n'
        f'password_env = "STACKTOP_TEST_RABBIT_PASSWORD"\ntimeout = {RABBITMQ_TIMEOUT}\n\n'
        f"[snapshot]\ndeadline = {deadline}\n")
    return path


def _snapshot(config: Path, tmp_path: Path, limit: float) -> tuple[int, str, str, float, int]:
    """Run `stacktop snapshot --json`: (exit code, stdout, stderr, wall seconds, peak RSS in KiB). A run that
    outlives `limit` is killed and fails the test (the hang this file exists to prevent)."""
    env = {**os.environ, "STACKTOP_TEST_RABBIT_PASSWORD": RABBIT_PASSWORD, "XDG_STATE_HOME": str(tmp_path),
           "STACKTOP_CONFIG": ""}
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    t0 = time.monotonic()
    with out.open("w") as fo, err.open("w") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "tui", "snapshot", "--config", str(config), "--json"],
                                stdout=fo, stderr=fe, env=env)
        status = None
        while status is None and time.monotonic() - t0 < limit:
            pid, status_raw, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = status_raw
                break
            time.sleep(0.05)
        wall = time.monotonic() - t0
        if status is None:
            proc.kill()
            os.wait4(proc.pid, 0)
            pytest.fail(f"stacktop snapshot still running after {limit:g}s (hung); stderr: {err.read_text()[-500:]}")
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out.read_text(), err.read_text(), wall, usage.ru_maxrss


def _errors(stdout: str) -> dict[str, str]:
    report = json.loads(stdout)
    errors = {name: src["error"] for name, src in report["sources"].items() if src["error"]}
    svc = (report["data"].get("services") or {})
    for part in ("keystone", "compute", "network", "volume"):
        section = svc.get(part) or {}
        if section.get("error"):
            errors[f"services.{part}"] = section["error"]
    return errors


CASES = [pytest.param(source, fault, id=f"{source}-{fault}")
         for source in ("keystone", "nova", "rabbitmq") for fault in ("trickle", "huge")]
CASES.append(pytest.param("keystone", "redirect", id="keystone-redirect"))
WORDS = {"trickle": "timed out", "redirect": "timed out", "huge": "max_body_mb"}
AFFECTED = {"keystone": ("services", "instances"), "nova": ("services.compute", "instances"),
            "rabbitmq": ("rabbitmq",)}


@pytest.mark.parametrize(("source", "fault"), CASES)
def test_snapshot_answers_in_time_against_a_hostile_source(sim: Any, tmp_path: Path, source: str,
                                                           fault: str) -> None:
    config = _config(tmp_path, sim)
    sim.faults.set(source, fault)
    try:
        code, out, err, wall, _ = _snapshot(config, tmp_path, DEADLINE + SLACK + 30)
    finally:
        sim.faults.clear()
    print(f"{fault} on {source}: stacktop snapshot exited {code} after {wall:.1f}s")
    assert wall < DEADLINE + SLACK, f"took {wall:.1f}s, deadline {DEADLINE:g}s; stderr: {err[-300:]}"
    assert code == 3, (code, err[-500:])
    assert "Traceback" not in out + err
    errors = _errors(out)
    # through httpx the bytes are counted: a trickle is told from a silent server (openstacksdk's requests path
    # says "timed out" either way)
    word = "came too slowly" if (source, fault) == ("rabbitmq", "trickle") else WORDS[fault]
    named = [part for part in AFFECTED[source] if word in (errors.get(part) or "")]
    assert named, f"{fault} on {source}: no error of {AFFECTED[source]} says '{word}': {errors}"


def test_a_50_mb_body_costs_less_than_100_mb(sim: Any, tmp_path: Path) -> None:
    """Peak RSS of the snapshot process against a 50 MB RabbitMQ answer, against the same run healthy."""
    config = _config(tmp_path, sim)
    code, _, err, _, healthy = _snapshot(config, tmp_path, DEADLINE + SLACK + 30)
    assert code in (0, 1, 2), err[-500:]
    sim.faults.set("rabbitmq", "huge")
    try:
        code, out, err, _, peak = _snapshot(config, tmp_path, DEADLINE + SLACK + 30)
    finally:
        sim.faults.clear()
    assert code == 3 and "max_body_mb" in (_errors(out).get("rabbitmq") or ""), (code, err[-500:])
    growth_mb = (peak - healthy) / 1024
    print(f"peak RSS healthy {healthy / 1024:.0f} MB, with a 50 MB body {peak / 1024:.0f} MB: +{growth_mb:.0f} MB")
    assert growth_mb < 100, f"a 50 MB body grew the peak RSS by {growth_mb:.0f} MB"


def test_a_source_late_at_the_snapshot_deadline_is_named(sim: Any, tmp_path: Path) -> None:
    """Nova hangs (no byte at all) with a 20 s [openstack] timeout; the snapshot's 4 s deadline still holds."""
    deadline = 4.0
    config = _config(tmp_path, sim, deadline=deadline, openstack_timeout=20.0)
    sim.faults.set("nova", "hang")
    try:
        code, out, err, wall, _ = _snapshot(config, tmp_path, deadline + SLACK + 30)
    finally:
        sim.faults.clear()
    assert wall < deadline + SLACK, f"took {wall:.1f}s, deadline {deadline:g}s; stderr: {err[-300:]}"
    assert code == 3, (code, err[-500:])
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "deadline" in lines[0], err
    assert "instances" in lines[0], lines[0]
    report = json.loads(out)
    assert report["sources"]["instances"]["error"].startswith("late:"), report["sources"]["instances"]
    assert set(report["sources"]) == {"services", "instances", "rabbitmq", "placement"}, "every source is in the report"
