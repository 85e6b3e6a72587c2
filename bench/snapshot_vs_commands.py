"""`stacktop snapshot` vs the seed's five commands one after another, on the same simulator.

stacktop's side is `python -m tui snapshot --config FILE` (what `stacktop snapshot` runs; its report to a pipe,
as from cron or a Nagios check), from process start to exit, with a config written here: [openstack] and
[rabbitmq] pointed at the simulator, [galera] at the test bed's Galera nodes (127.0.0.1:3311-3313, the account
the mysql baseline uses) when they listen. The baseline is triage.py's five commands (`openstack compute service
list`, `network agent list`, `volume service list`, `rabbitmqctl cluster_status`, `mysql -e "SHOW STATUS LIKE
'wsrep_cluster_size'"`). Rounds alternate: snapshot, the five commands, snapshot, ...

The snapshot gives the RabbitMQ 2-poll verdict in one run: a queue holding messages with nobody consuming is
confirmed from its sample history (one GET each, tui.collectors.rabbitmq_history) when that history covers the
window, else sampled again once the broker's statistics ticked (every 5 s), and then its time includes that
wait. The note says how often such a queue existed, how often a history fell short (the tick wait), and the
snapshot's time with and without the wait.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import cli_venv
from bench.common import ROOT, Result, log, median, spread
from bench.triage import GALERA, _port_open, five_commands, run_commands

GALERA_PORTS = (3311, 3312, 3313)
PASSWORD_ENV = "STACKTOP_BENCH_GALERA_PASSWORD"
STATS_TICK_S = 5.0  # the broker's statistics interval (RabbitMQ's default collect_statistics_interval; the sim's)


def write_config(demo: Any, folder: Path) -> tuple[Path, list[str]]:
    """The bench's config file for `stacktop snapshot` (no secret in it) and the Galera nodes it names."""
    from tui.sim.demo import RABBIT_USER

    host, _, user, _ = GALERA
    nodes = [f"{host}:{port}" for port in GALERA_PORTS if _port_open(host, port)]
    text = (f'[openstack]\ncloud = "{demo.info["cloud"]}"\nclouds_file = "{demo.clouds_file}"\n\n'
            f'[rabbitmq]\nmanagement_url = "{demo.rabbitmq_url}"\nuser = "{RABBIT_USER}"\n'
            'password_env = "STACKTOP_BENCH_RABBIT_PASSWORD"\n\n'
            f'[thresholds]\nservice_down_time = {demo.info["service_down_time"]}\n'
            f'agent_down_time = {demo.info["agent_down_time"]}\n')
    if nodes:
        text += (f"\n[galera]\nnodes = {json.dumps(nodes)}\nuser = \"{user}\"\npassword_env = \"{PASSWORD_ENV}\"\n"
                 f"expected_size = {len(nodes)}\n")
    path = folder / "stacktop.toml"
    path.write_text(text)
    return path, nodes


SOURCE_LINE = re.compile(r"^source (\S+): (ok|ERROR .*?)(?: in ([0-9.]+)s)?$")


def snapshot_once(config: Path) -> tuple[float, dict[str, tuple[bool, float | None]], list[str]]:
    """`stacktop snapshot --config FILE` as a cron job or a Nagios check runs it (its report to a pipe):
    (wall seconds from spawn to exit, {source: (ok, its read time)} from the report's source lines, problems)."""
    from tui.sim.demo import RABBIT_PASSWORD

    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKTOP_BENCH_RABBIT_PASSWORD": RABBIT_PASSWORD,
           PASSWORD_ENV: GALERA[3]}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--config", str(config)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=False, timeout=120)
    took = time.perf_counter() - t0
    sources: dict[str, tuple[bool, float | None]] = {}
    problems = []
    for line in out.stdout.splitlines():
        m = SOURCE_LINE.match(line)
        if m:
            sources[m[1]] = (m[2] == "ok", float(m[3]) if m[3] else None)
            if m[2] != "ok":
                problems.append(f"snapshot {m[1]}: {m[2][:200]}")
    if not sources:
        problems.append(f"snapshot: exit {out.returncode}, no report: {out.stderr[-300:].strip()}")
    return took, sources, problems


def queues_without_consumer(demo: Any) -> tuple[int, int]:
    """(how many queues hold messages with no consumer now, how many of them have a sample history that does
    not cover the one-shot window), the management API's numbers: with any of the latter, a snapshot's RabbitMQ
    read waits for the broker's next statistics tick to sample them again."""
    from urllib.parse import quote

    import httpx

    from tui.collectors.rabbitmq_history import HISTORY_PARAMS, judge_history
    from tui.sim.demo import RABBIT_PASSWORD, RABBIT_USER

    with httpx.Client(base_url=demo.rabbitmq_url.rstrip("/"), auth=(RABBIT_USER, RABBIT_PASSWORD),
                      timeout=30) as api:
        rows = api.get("/api/queues", params={"columns": "vhost,name,messages,consumers"}).json()
        stuck = [q for q in rows if (q.get("messages") or 0) > 0 and q.get("consumers") == 0]
        short = sum(1 for q in stuck if judge_history(api.get(
            f"/api/queues/{quote(q['vhost'], safe='')}/{quote(q['name'], safe='')}", params=HISTORY_PARAMS
        ).json()).kind == "short")
    return len(stuck), short


def bench_snapshot(demo: Any, rounds: int, *, create_venv: bool) -> list[Result]:
    openstack = cli_venv.openstack_cli(create=create_venv)
    cmds = five_commands(demo, str(openstack) if openstack else None)
    folder = Path(tempfile.mkdtemp(prefix="stacktop-bench-snapshot-"))
    config, nodes = write_config(demo, folder)
    ours: list[float] = []
    theirs: list[float] = []
    per_source: dict[str, list[float]] = {}
    suspects: list[int] = []
    shorts: list[int] = []
    problems: set[str] = set()
    phase = random.Random(0)
    for i in range(rounds):
        # a random point of the broker's 5 s statistics tick: back to back, the rounds (the five commands take
        # about one tick) would start each snapshot at the same point of it, and wait the same for the tick
        time.sleep(phase.uniform(0.0, STATS_TICK_S))
        took, sources, errors = snapshot_once(config)
        problems.update(errors)
        if sources:
            ours.append(took)
            for source, (_, read_s) in sources.items():
                if read_s is not None:
                    per_source.setdefault(source, []).append(read_s)
            stuck, short = queues_without_consumer(demo)
            suspects.append(stuck)
            shorts.append(short)
        if cmds:
            total, _, failed = run_commands(cmds)
            theirs.append(total)
            problems.update(failed)
        log(f"snapshot round {i + 1}/{rounds}: stacktop snapshot {round(took, 2)} s, "
            f"five commands {round(theirs[-1], 2) if theirs else 'n/a'} s")
    waited = [t for t, n in zip(ours, shorts, strict=True) if n]
    direct = [t for t, n in zip(ours, shorts, strict=True) if not n]
    split = "; ".join(f"{label} {median(v):.2f} s ({len(v)} runs)" for label, v in (
        ("with that wait", waited), ("without", direct)) if v)
    note = (f"`python -m tui snapshot --config FILE` (its report to a pipe), spawn to exit, each run started at a "
            "random point of the broker's 5 s statistics tick; [galera] "
            f"{', '.join(nodes) if nodes else 'not configured (no test bed node listening)'}. Sources' own "
            "read times (median): " + ", ".join(f"{k} {median(v):.2f} s" for k, v in sorted(per_source.items()))
            + f". A queue held messages with no consumer in {sum(1 for n in suspects if n)} of {len(suspects)} "
            "runs (the management API asked right after each): the RabbitMQ read confirms such queues from their "
            "sample history (one GET each) for its 2-poll verdict; a history shorter than the 10 s window was "
            f"seen in {len(waited)} runs, and then the read samples again once the broker's statistics ticked "
            "(every 5 s: 0-5 s away; without [rabbitmq] amqp_url, which confirms live at once), and rabbitmq's "
            f"read time above includes that wait; snapshot {split}. "
            f"Baseline: {len(cmds)} commands ({', '.join(c[0] for c in cmds)}). "
            f"Spread (max-min)/median: snapshot {spread(ours)}, commands {spread(theirs)}")
    if problems:
        note += ". Problems seen: " + " | ".join(sorted(problems))[:600]
    res = Result("snapshot", "stacktop snapshot: spawn to report", median(ours), "s", median(theirs),
                 "the five seed commands one after another", goal=">= 3x faster", note=note, samples=ours)
    res.met = None if res.ratio is None or len(cmds) < 5 else res.ratio >= 3
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return [res]
