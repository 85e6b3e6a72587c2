"""First full triage: stacktop from launch to every pane filled, vs the seed's five commands one after another.

The five commands (seed 003): `openstack compute service list`, `openstack network agent list`,
`openstack volume service list` (python-openstackclient from the scratch venv, against the simulator), then
`rabbitmqctl cluster_status` (the machine's real broker: the simulator has no Erlang node) and
`mysql -e "SHOW STATUS LIKE 'wsrep_cluster_size'"` (the test bed's Galera node, when it runs). Rounds
alternate: stacktop, the five commands, stacktop, ...
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from typing import Any

from bench import cli_venv
from bench.appruns import AppRun
from bench.common import Result, log, median, spread

GALERA = ("127.0.0.1", 3311, "stacktop", "stacktop")


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def five_commands(demo: Any, openstack: str | None) -> list[tuple[str, list[str], dict[str, str]]]:
    env = {"OS_CLIENT_CONFIG_FILE": str(demo.clouds_file), "OS_CLOUD": demo.info["cloud"]}
    cmds: list[tuple[str, list[str], dict[str, str]]] = []
    if openstack:
        for what in (["compute", "service", "list"], ["network", "agent", "list"], ["volume", "service", "list"]):
            cmds.append(("openstack " + " ".join(what), [openstack, *what], env))
    if shutil.which("rabbitmqctl"):
        cmds.append(("rabbitmqctl cluster_status", ["rabbitmqctl", "cluster_status"], {}))
    host, port, user, password = GALERA
    if shutil.which("mysql") and _port_open(host, port):
        cmds.append(("mysql -e \"SHOW STATUS LIKE 'wsrep_cluster_size'\"",
                     ["mysql", "-h", host, "-P", str(port), "-u", user, f"-p{password}", "-e",
                      "SHOW STATUS LIKE 'wsrep_cluster_size';"], {}))
    return cmds


def run_commands(cmds: list[tuple[str, list[str], dict[str, str]]]) -> tuple[float, dict[str, float], list[str]]:
    per: dict[str, float] = {}
    failed = []
    t0 = time.perf_counter()
    for label, argv, env in cmds:
        t = time.perf_counter()
        out = subprocess.run(argv, env={**os.environ, **env}, capture_output=True, check=False, timeout=120)
        per[label] = time.perf_counter() - t
        if out.returncode != 0:
            failed.append(f"{label}: exit {out.returncode}: {(out.stderr or out.stdout).decode()[:200].strip()}")
    return time.perf_counter() - t0, per, failed


def stacktop_once(demo: Any) -> tuple[float | None, dict[str, float], list[str]]:
    run = AppRun(demo)
    try:
        done = run.wait_mark("all_filled", timeout=120)
        filled = {m["source"]: m["t"] - run.spawned_at for m in run.marks() if m["event"] == "filled"}
        if "instances" in filled:  # the first read: the servers the default view shows (every server later)
            filled["instances (attention view)"] = filled.pop("instances")
        first = run.wait_mark("first_paint", timeout=1)
        if first:
            filled["first paint"] = first["t"] - run.spawned_at
        every = run.wait_mark("complete", timeout=60, source="instances")  # the full list, after the first read
        if every:
            filled["instances (every server listed)"] = every["t"] - run.spawned_at
        return (None if done is None else done["t"] - run.spawned_at), filled, run.errors()
    finally:
        run.stop()


def bench_triage(demo: Any, rounds: int, *, create_venv: bool) -> list[Result]:
    openstack = cli_venv.openstack_cli(create=create_venv)
    cmds = five_commands(demo, str(openstack) if openstack else None)
    ours: list[float] = []
    theirs: list[float] = []
    per_cmd: dict[str, list[float]] = {}
    per_pane: dict[str, list[float]] = {}
    same_info: list[float] = []
    problems: set[str] = set()
    for i in range(rounds):
        t, panes, errors = stacktop_once(demo)
        if t is not None:
            ours.append(t)
        problems.update(errors)
        for k, v in panes.items():
            per_pane.setdefault(k, []).append(v)
        if {"services", "rabbitmq", "galera"} <= set(panes):
            same_info.append(max(panes["services"], panes["rabbitmq"], panes["galera"]))
        if cmds:
            total, per, failed = run_commands(cmds)
            theirs.append(total)
            problems.update(failed)
            for k, v in per.items():
                per_cmd.setdefault(k, []).append(v)
        log(f"triage round {i + 1}/{rounds}: stacktop {t if t is None else round(t, 2)} s, "
            f"five commands {round(theirs[-1], 2) if theirs else 'n/a'} s")
    labels = [c[0] for c in cmds]
    missing = [c for c in ("openstack (3 commands)", "rabbitmqctl", "mysql")
               if not any(label.startswith(c.split()[0]) for label in labels)]
    note = (f"{len(cmds)} commands: " + "; ".join(f"{k} {median(v):.2f} s" for k, v in per_cmd.items())
            + (f". Not run (not available here): {', '.join(missing)}" if missing else "")
            + ". stacktop panes filled at: " + ", ".join(f"{k} {median(v):.2f} s" for k, v in sorted(
                per_pane.items(), key=lambda kv: median(kv[1]) or 0))
            + f". Spread (max-min)/median: stacktop {spread(ours)}, commands {spread(theirs)}")
    if problems:
        note += ". Problems seen: " + " | ".join(sorted(problems))[:600]
    value, base = median(ours), median(theirs)
    res = Result("triage", "first full triage: launch to every pane filled", value, "s", base,
                 "the five seed commands one after another", goal=">= 5x faster",
                 note=note, samples=ours)
    res.met = None if res.ratio is None or len(cmds) < 5 else res.ratio >= 5
    same = Result("triage", "the five commands' information: control plane, RabbitMQ and Galera panes filled",
                  median(same_info), "s", base, "the five seed commands", samples=same_info,
                  note="the instances pane (10,000 servers: ~20 MB of JSON to decode and parse) is what the five "
                       "commands do not show; this row leaves it out")
    res.note += (". The instances pane counts as filled with the dashboard's first read (the servers worth "
                 "attention: ERROR, BUILD, any task_state, by server-side filters); the full list of every server "
                 "follows at once (its time is the 'every server listed' figure above)")
    return [res, same]
