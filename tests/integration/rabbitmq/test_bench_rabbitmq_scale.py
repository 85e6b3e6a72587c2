"""`python -m bench --quick --only rabbitmq_scale` runs end to end against the test bed's broker (300 queues in a
scratch vhost, deleted after), so the benchmark code cannot rot. Nothing here asserts a timing or a goal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[3]


def test_rabbitmq_scale_measures_a_poll_and_its_baseline(rabbitmq_broker, tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {"STACKTOP_RABBITMQ_MGMT_URL": rabbitmq_broker.mgmt_url, "STACKTOP_RABBITMQ_USER": rabbitmq_broker.user,
           "STACKTOP_RABBITMQ_PASSWORD": rabbitmq_broker.password, "STACKTOP_RABBITMQ_AMQP_HOST": rabbitmq_broker.host,
           "STACKTOP_RABBITMQ_AMQP_PORT": str(rabbitmq_broker.port)}
    proc = subprocess.run([sys.executable, "-m", "bench", "--quick", "--only", "rabbitmq_scale", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    doc = json.loads(out.read_text())
    assert doc["failures"] == []
    results = {r["measure"]: r for r in doc["results"]}
    for what in ("wall time", "client CPU", "bytes received"):
        [r] = [r for m, r in results.items() if m == f"RabbitMQ poll at 300 queues: {what}"]
        assert r["value"] and r["baseline"], r  # the poll and the plain GET, both measured
    assert "plain GET: 300 rows" in results["RabbitMQ poll at 300 queues: wall time"]["note"]
