"""stacktop at 10,000 instances on real Nova and Placement, beside the simulator at 10,000 in the same run.

The real side is the test bed's `scale` profile (`scripts/testcloud up scale`, testcloud/scale.sh): its own
nova-api and placement (region RegionScale) over 10,000 instances, with the shared test cloud's Keystone,
neutron-server and cinder-api. The same figures are then measured on the simulator (10,000 instances, in its
own process, no churn: the real cloud does not change either) and each gets a fidelity ratio, real / simulator.

Figures, each with its baseline measured in the same rounds:
- `stacktop snapshot` (spawn to report; OpenStack, RabbitMQ and Galera sources) vs the five seed commands;
- steady poll (the services + instances collectors, as the runner runs them, one cycle): client CPU, HTTP
  requests, and the server side's CPU per poll: nova-api, placement, neutron-server, cinder-api, keystone and
  MariaDB, from /proc (utime + stime of every process of their sessions; the simulator's: its process), vs a
  naive SDK poller (every list as Resource objects) and vs `openstack server list --all-projects`;
- the steady poll of 5 stacktop instances at once (5 sessions polling together, server CPU per cycle).
stacktop's requests are its client's own count; the naive poller's and the CLI's on the real cloud are the
access-log lines with the SDK's user agent written during the poll (on the simulator, what it served). Server
CPU is net of each process's idle rate (measured for 20 s with no poller first); neutron-server, cinder-api,
keystone and MariaDB are shared with the default test cloud, so other sessions' work there adds noise (medians
of several rounds).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import cli_venv
from bench.common import FULL, Result, log, median, proc_cpu_s, spawn_sim
from bench.steady import naive_poll
from bench.triage import five_commands, run_commands

HOME = Path(os.environ.get("STACKTOP_TESTCLOUD_HOME") or Path.home() / ".cache" / "stacktop" / "testcloud")
SCALE = HOME / "scale"
OPENSTACK = HOME / "openstack"
CLOUD = "stacktop-testcloud-scale"
# API or database process -> (its pid file, its access log); sessions: every process started with setsid
SERVERS = {
    "nova-api": (SCALE / "run" / "nova-api.pid", SCALE / "logs" / "nova-api-access.log"),
    "placement": (SCALE / "run" / "placement-api.pid", SCALE / "logs" / "placement-access.log"),
    "neutron-server": (OPENSTACK / "run" / "neutron-server.pid", OPENSTACK / "logs" / "neutron-server-access.log"),
    "cinder-api": (OPENSTACK / "run" / "cinder-api.pid", OPENSTACK / "logs" / "cinder-api-access.log"),
    "keystone": (OPENSTACK / "run" / "keystone.pid", OPENSTACK / "logs" / "keystone-access.log"),
}
MARIADB_PID = Path("/run/mysqld/mysqld.pid")


def session_cpu(sid: int) -> float:
    """CPU seconds of every process whose session is `sid` (a gunicorn master and its worker)."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:
            total += proc_cpu_s(int(entry.name)) or 0.0
    return total


class RealServers:
    """Server-side CPU and requests of the real cloud's processes around a poll."""

    def __init__(self) -> None:
        self.pids = {name: int(pid.read_text()) for name, (pid, _) in SERVERS.items() if pid.exists()}
        self.mariadb = int(MARIADB_PID.read_text()) if MARIADB_PID.exists() else None

    def cpu(self) -> dict[str, float]:
        out = {name: session_cpu(pid) for name, pid in self.pids.items()}
        if self.mariadb is not None:
            out["mariadb"] = proc_cpu_s(self.mariadb) or 0.0
        return out

    @staticmethod
    def log_sizes() -> dict[str, int]:
        return {name: log.stat().st_size for name, (_, log) in SERVERS.items() if log.exists()}

    @staticmethod
    def requests_since(sizes: dict[str, int], agents: tuple[str, ...]) -> int:
        n = 0
        marks = [a.encode() for a in agents]
        for name, (_, path) in SERVERS.items():
            with path.open("rb") as f:
                f.seek(sizes.get(name, 0))
                n += sum(1 for line in f if any(m in line for m in marks))
        return n


def idle_rates(cpu: Callable[[], dict[str, float]], seconds: float = 20.0) -> dict[str, float]:
    """CPU seconds per second each server process spends with no poller (heartbeats, periodic tasks, other
    sessions on the shared ones): subtracted from a poll's figures for the poll's wall time."""
    before, t0 = cpu(), time.perf_counter()
    time.sleep(seconds)
    after, took = cpu(), time.perf_counter() - t0
    return {k: max(0.0, after[k] - before.get(k, 0.0)) / took for k in after}


def measure_real(servers: RealServers, idle: dict[str, float], fn: Callable[[], Any],
                 agents: tuple[str, ...]) -> dict[str, float]:
    """One poll: client CPU (this process), wall, requests (access-log lines with one of `agents`), the CPU of
    each server process beyond its idle rate."""
    sizes, before = servers.log_sizes(), servers.cpu()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    time.sleep(0.3)  # the last access-log lines are written after the answer
    after = servers.cpu()
    got = {f"server:{k}": max(0.0, after[k] - before.get(k, 0.0) - idle.get(k, 0.0) * (wall + 0.3))
           for k in after}
    got.update(client=cpu, wall=wall, requests=servers.requests_since(sizes, agents))
    got["server"] = sum(v for k, v in got.items() if k.startswith("server:"))
    return got


def measure_sim(demo: Any, idle: dict[str, float], fn: Callable[[], Any], agents: tuple[str, ...]
                ) -> dict[str, float]:
    demo.reset_stats()
    s0 = proc_cpu_s(demo.proc.pid) or 0.0
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    snap = demo.stats()
    used = (proc_cpu_s(demo.proc.pid) or 0.0) - s0 - idle.get("sim", 0.0) * wall
    return {"client": cpu, "wall": wall, "requests": sum(snap["requests"].values()), "server": max(0.0, used)}


class StacktopPoller:
    """The services + instances collectors on one session, as the runner polls them (collect, then rules)."""

    def __init__(self, openstack_cfg: Any, thresholds: Any) -> None:
        from tui.collectors.instances import InstancesCollector
        from tui.collectors.services import ServicesCollector
        from tui.openstack import OpenStackSession

        self.session = OpenStackSession(openstack_cfg)
        self.services = ServicesCollector(openstack_cfg, thresholds, session=self.session)
        self.instances = InstancesCollector(openstack_cfg, stuck=thresholds.stuck, session=self.session)
        self.loop = asyncio.new_event_loop()
        self.servers = 0

    def poll(self) -> None:
        from datetime import UTC, datetime

        async def both() -> tuple[Any, Any]:
            return await self.services.collect(), await self.instances.collect()

        s_snap, i_snap = self.loop.run_until_complete(both())
        now = datetime.now(UTC)
        self.services.findings(s_snap, now)
        self.instances.findings(i_snap, now)
        self.servers = len(i_snap.servers)

    def requests(self) -> int:
        """GETs stacktop's client issued so far (its own count: every request of both collectors)."""
        client = self.session.current
        return int(getattr(client, "requests", 0)) if client is not None else 0

    def close(self) -> None:
        self.loop.run_until_complete(self.services.aclose())
        self.loop.run_until_complete(self.instances.aclose())
        self.loop.close()
        self.session.close()


def real_config() -> Any:
    from tui.config import Config, OpenStackConfig

    return Config(openstack=OpenStackConfig(cloud=CLOUD, clouds_file=str(SCALE / "clouds.yaml"), timeout=120))


def sdk_connection(clouds_file: Path, cloud: str) -> Any:
    import openstack.connection
    from openstack.config import loader

    region = loader.OpenStackConfig(config_files=[str(clouds_file)]).get_one(cloud=cloud)
    return openstack.connection.Connection(config=region)


def cli_server_list(openstack: str | None, clouds_file: Path, cloud: str) -> Callable[[], None]:
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(clouds_file), "OS_CLOUD": cloud}

    def run() -> None:
        if openstack is None:
            raise RuntimeError("no openstack CLI (bench/cli_venv.py)")
        subprocess.run([openstack, "server", "list", "--all-projects", "-f", "value", "-c", "ID"], env=env,
                       capture_output=True, check=True, timeout=1800)
    return run


Measure = Callable[[Callable[[], Any], tuple[str, ...]], dict[str, float]]
STACKTOP_AGENTS = ("stacktop",)
SDK_AGENTS = ("openstacksdk", "openstackclient")


def steady_figures(measure: Measure, cfg: Any, conn: Any,
                   cli: Callable[[], None], rounds: int, copies: int) -> dict[str, dict[str, float | None]]:
    """Median per figure of: stacktop's steady poll, the naive poller, the CLI listing, `copies` stacktops."""
    ours = StacktopPoller(cfg.openstack, cfg.thresholds)
    many = [StacktopPoller(cfg.openstack, cfg.thresholds) for _ in range(copies)]
    try:
        # first polls (token, discovery, the full list: the triage's cost, not the steady one), all at once
        warm = [threading.Thread(target=p.poll) for p in (ours, *many)]
        warm.append(threading.Thread(target=naive_poll, args=(conn,)))
        for t in warm:
            t.start()
        for t in warm:
            t.join()
        rows: dict[str, list[dict[str, float]]] = {"stacktop": [], "naive": [], "cli": [], "five": []}
        def counted(pollers: list[StacktopPoller], fn: Callable[[], Any]) -> dict[str, float]:
            before = sum(p.requests() for p in pollers)
            got = measure(fn, STACKTOP_AGENTS)
            got["requests"] = sum(p.requests() for p in pollers) - before
            return got

        for i in range(rounds):
            rows["stacktop"].append(counted([ours], ours.poll))
            rows["naive"].append(measure(lambda: naive_poll(conn), SDK_AGENTS))
            r0 = os.times()
            got = measure(cli, SDK_AGENTS)
            r1 = os.times()
            got["client"] = (r1.children_user + r1.children_system) - (r0.children_user + r0.children_system)
            rows["cli"].append(got)

            def together() -> None:
                threads = [threading.Thread(target=p.poll) for p in many]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            rows["five"].append(counted(many, together))
            log(f"real10k steady round {i + 1}/{rounds}: " + "; ".join(
                f"{k} client {v[-1]['client'] * 1000:.0f} ms, {v[-1]['requests']:.0f} req, "
                f"server {v[-1]['server'] * 1000:.0f} ms" for k, v in rows.items()))
        out: dict[str, dict[str, float | None]] = {}
        for who, samples in rows.items():
            keys = sorted({k for s in samples for k in s})
            out[who] = {k: median(s.get(k, 0.0) for s in samples) for k in keys}
        out["stacktop"]["servers"] = float(ours.servers)
        return out
    finally:
        ours.close()
        for p in many:
            p.close()


def snapshot_config(folder: Path, clouds_file: Path, cloud: str, rabbit_url: str | None) -> Path:
    text = (f'[openstack]\ncloud = "{cloud}"\nclouds_file = "{clouds_file}"\ntimeout = 120\n\n')
    if rabbit_url:
        text += (f'[rabbitmq]\nmanagement_url = "{rabbit_url}"\nuser = "guest"\n'
                 f'password_file = "{HOME / "rabbitmq.password"}"\n\n')
    text += ('[galera]\nnodes = ["127.0.0.1:3311", "127.0.0.1:3312", "127.0.0.1:3313"]\nuser = "stacktop"\n'
             f'password_file = "{HOME / "galera.password"}"\nexpected_size = 3\n')
    path = folder / "stacktop-real10k.toml"
    path.write_text(text)
    return path


def snapshot_figures(config: Path, cmds: list[Any], rounds: int) -> tuple[float | None, float | None, list[str]]:
    from bench.snapshot_vs_commands import snapshot_once

    ours, theirs, problems = [], [], set()
    for _ in range(rounds):
        took, sources, errors = snapshot_once(config)
        problems.update(errors)
        if sources:
            ours.append(took)
        total, _, failed = run_commands(cmds)
        theirs.append(total)
        problems.update(failed)
    return median(ours), median(theirs), sorted(problems)


class _Cloud:
    """What triage.five_commands needs of a cloud: its clouds.yaml and cloud name."""

    def __init__(self, clouds_file: Path, cloud: str) -> None:
        self.clouds_file = clouds_file
        self.info = {"cloud": cloud}


def fidelity(real: float | None, sim: float | None) -> str:
    return "n/a" if real is None or not sim else f"{real / sim:.2f}"


def bench_real10k(rounds: int, copies: int = 5) -> list[Result]:
    if not (SCALE / "clouds.yaml").exists():
        raise RuntimeError("the scale profile is not built: scripts/testcloud up scale")
    # python-openstackclient: the test cloud's venv has it (else the bench's scratch venv)
    cloud_cli = OPENSTACK / "venv" / "bin" / "openstack"
    openstack = cloud_cli if cloud_cli.exists() else cli_venv.openstack_cli(create=True)
    cli = str(openstack) if openstack else None
    folder = Path(tempfile.mkdtemp(prefix="stacktop-bench-real10k-"))
    results: list[Result] = []
    servers = RealServers()

    # ---- the real cloud
    real_cfg = real_config()
    real_cloud = _Cloud(SCALE / "clouds.yaml", CLOUD)
    snap_real = snapshot_figures(snapshot_config(folder, real_cloud.clouds_file, CLOUD, "http://127.0.0.1:15672"),
                                 five_commands(real_cloud, cli), max(1, rounds // 2))
    log(f"real10k snapshot (real): {snap_real}")
    conn = sdk_connection(real_cloud.clouds_file, CLOUD)
    idle = idle_rates(servers.cpu)
    log("real10k idle CPU rates (s/s): " + ", ".join(f"{k} {v:.3f}" for k, v in idle.items()))
    real = steady_figures(lambda fn, agents: measure_real(servers, idle, fn, agents), real_cfg, conn,
                          cli_server_list(cli, real_cloud.clouds_file, CLOUD), rounds, copies)
    conn.close()

    # ---- the simulator at 10,000, quiet (no churn, no storyline)
    demo = spawn_sim(FULL, churn=0.0, storyline=False, queue_growth=False)
    try:
        sim_cfg = demo.config()
        sim_cloud = _Cloud(demo.clouds_file, demo.info["cloud"])
        from bench.snapshot_vs_commands import write_config

        sim_snap_cfg, _ = write_config(demo, folder)
        snap_sim = snapshot_figures(sim_snap_cfg, five_commands(sim_cloud, cli), max(1, rounds // 2))
        conn = sdk_connection(demo.clouds_file, demo.info["cloud"])
        sim_idle = idle_rates(lambda: {"sim": proc_cpu_s(demo.proc.pid) or 0.0}, 10.0)
        sim = steady_figures(lambda fn, agents: measure_sim(demo, sim_idle, fn, agents), sim_cfg, conn,
                             cli_server_list(cli, demo.clouds_file, demo.info["cloud"]), rounds, copies)
        conn.close()
    finally:
        demo.stop()

    def row(measure: str, unit: str, real_v: float | None, sim_v: float | None, base: float | None = None,
            base_label: str = "", goal: str = "", note: str = "") -> Result:
        r = Result("real10k", measure, real_v, unit, base, base_label, goal=goal,
                   note=(f"simulator at 10,000: {sim_v if sim_v is None else round(sim_v, 4)}; fidelity (real / "
                         f"simulator) {fidelity(real_v, sim_v)}" + (f". {note}" if note else "")))
        results.append(r)
        return r

    s, n, c, f = real["stacktop"], real["naive"], real["cli"], real["five"]
    ss, sn, sc, sf = sim["stacktop"], sim["naive"], sim["cli"], sim["five"]
    r = row("real services: stacktop snapshot, spawn to report", "s", snap_real[0], snap_sim[0], snap_real[1],
            "the five seed commands", ">= 5x faster", "problems: " + " | ".join(snap_real[2])[:300] if snap_real[2]
            else "")
    r.met = None if r.ratio is None else r.ratio >= 5
    row("real services: steady poll, client CPU per cycle", "s", s["client"], ss["client"], n["client"],
        "naive SDK poller", note=f"naive poller {n['client']:.2f} s real, {sn['client']:.2f} s simulator; "
        f"`openstack server list --all-projects` (CLI process): {c['client']:.2f} s real, "
        f"{sc['client']:.2f} s simulator; servers listed {s.get('servers', 0):.0f}")
    r = row("real services: steady poll, HTTP requests per cycle", "req", s["requests"], ss["requests"],
            n["requests"], "naive SDK poller", "<= 6",
            f"`openstack server list --all-projects`: {c['requests']:.0f} real, {sc['requests']:.0f} simulator")
    r.met = s["requests"] is not None and s["requests"] <= 6
    detail = ", ".join(f"{k.split(':', 1)[1]} {v * 1000:.0f} ms" for k, v in s.items()
                       if k.startswith("server:") and v is not None)
    r = row("real services: steady poll, server-side CPU per poll (all APIs + MariaDB)", "s", s["server"],
            ss["server"], n["server"], "naive SDK poller", "< 1 % of a core of nova-api at 10 s",
            f"stacktop per process: {detail}; `openstack server list --all-projects`: {c['server']:.2f} s real, "
            f"{sc['server']:.2f} s simulator")
    nova = s.get("server:nova-api")
    r.met = None if nova is None else nova / 10.0 < 0.01
    r = row(f"real services: {copies} stacktops at once, server-side CPU per cycle", "s", f["server"], sf["server"],
            n["server"] * copies if n["server"] is not None else None, f"{copies} naive SDK pollers (1 measured x "
            f"{copies})", "< 5 % of a core of nova-api at 10 s",
            f"nova-api {(f.get('server:nova-api') or 0) * 1000:.0f} ms; requests {f['requests']:.0f}")
    five_nova = f.get("server:nova-api")
    r.met = None if five_nova is None else five_nova / 10.0 < 0.05
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return results
