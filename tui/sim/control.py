"""The simulator in its own process: `python -m tui.sim` serves a demo plus a small control API, and
`spawn_demo()` starts one and returns a RemoteDemo with the same controls as Demo.

Why: the simulator's handler threads share the GIL with whatever runs in their process. A benchmark (or a
UI) that must measure only stacktop runs the simulator out of process.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.config import Config, GaleraConfig, OpenStackConfig, RabbitMQConfig, Secret, Thresholds
from tui.sim.demo import DEMO_STUCK, GALERA_PASSWORD, GALERA_USER, RABBIT_PASSWORD, RABBIT_USER, Demo
from tui.sim.http import Listener, Request, Response, Router, json_response
from tui.sim.remote_galera import RemoteGalera


def make_control_app(demo: Demo) -> Router:
    """Loopback-only control API of a running demo (no auth: it binds 127.0.0.1 and holds fake data)."""
    r = Router()
    conns: dict[str, Any] = {}

    def info(req: Request) -> Response:
        return json_response(describe(demo))

    def stats(req: Request) -> Response:
        return json_response(demo.stats.snapshot())

    def stats_reset(req: Request) -> Response:
        demo.stats.reset()
        return json_response({})

    def advance(req: Request) -> Response:
        demo.advance(float(req.q("seconds") or 0))
        return json_response({"now": demo.clock.time()})

    def refuse(req: Request) -> Response:
        demo.set_refusing(req.q("service") or "identity", (req.q("on") or "1") not in ("0", "false"))
        return json_response({})

    def inject(req: Request) -> Response:
        kw = {k: v[0] for k, v in req.query.items() if k != "what"}
        demo.inject(req.q("what") or "", **kw)
        return json_response({})

    def story(req: Request) -> Response:
        return json_response([[t, name, detail] for t, name, detail in demo.story()])

    def galera(req: Request) -> Response:
        body = req.json() or {}
        try:
            key = body["node"]
            if body.get("op") == "connect" or key not in conns:
                conns[key] = demo.galera_connector(key, body.get("user", ""), body.get("password"),
                                                   float(body.get("timeout", 5)))
            if body.get("op") == "connect":
                return json_response({"ok": True})
            if body.get("op") == "close":
                conns.pop(key).close()
                return json_response({"ok": True})
            return json_response({"rows": [list(row) for row in conns[key].query(body["sql"])]})
        except Exception as exc:
            conns.pop(body.get("node"), None) if body.get("op") != "query" else None
            return json_response({"error": [type(exc).__name__, list(getattr(exc, "args", ()))]})

    r.add("GET", "/demo", info)
    r.add("GET", "/stats", stats)
    r.add("POST", "/stats/reset", stats_reset)
    r.add("POST", "/advance", advance)
    r.add("POST", "/refuse", refuse)
    r.add("POST", "/inject", inject)
    r.add("GET", "/story", story)
    r.add("POST", "/galera", galera)
    return r


def describe(demo: Demo) -> dict[str, Any]:
    e = demo.engine
    return {"clouds_file": str(demo.clouds_file), "cloud": "stacktop-demo", "rabbitmq_url": demo.rabbitmq_url,
            "galera_nodes": [n.address for n in e.galera_nodes], "galera_arbitrators": list(e.galera_arbitrators),
            "service_down_time": e.service_down_time,
            "agent_down_time": e.agent_down_time, "urls": {s: demo.url(s) for s in demo.listeners},
            "auth_url": demo.auth_url, "start": demo.clock.start, "speed": demo.clock.speed}


class RemoteDemo:
    """A demo running in a child process (see spawn_demo); the same controls as Demo, over HTTP."""

    def __init__(self, proc: subprocess.Popen[bytes], info: dict[str, Any]) -> None:
        self.proc = proc
        self.info = info
        self.control_url: str = info["control_url"]
        self.clouds_file = Path(info["clouds_file"])
        self.rabbitmq_url: str = info["rabbitmq_url"]

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.control_url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)

    def config(self, base: Config | None = None) -> Config:
        from dataclasses import replace

        base = base or Config()
        i = self.info
        return replace(
            base,
            openstack=OpenStackConfig(cloud=i["cloud"], clouds_file=i["clouds_file"],
                                      interval=base.openstack.interval, timeout=base.openstack.timeout),
            rabbitmq=RabbitMQConfig(management_url=i["rabbitmq_url"], user=RABBIT_USER,
                                    password=Secret(RABBIT_PASSWORD, "demo"),
                                    interval=base.rabbitmq.interval, timeout=base.rabbitmq.timeout),
            galera=GaleraConfig(nodes=tuple(i["galera_nodes"]), user=GALERA_USER,
                                password=Secret(GALERA_PASSWORD, "demo"),
                                expected_size=len(i["galera_nodes"]) + len(i.get("galera_arbitrators", ())),
                                arbitrators=tuple(i.get("galera_arbitrators", ())),
                                interval=base.galera.interval, timeout=base.galera.timeout),
            thresholds=Thresholds(service_down_time=i["service_down_time"], agent_down_time=i["agent_down_time"],
                                  stuck=dict(DEMO_STUCK)),
            demo=True,
        )

    def stats(self) -> dict[str, Any]:
        return dict(self._call("GET", "/stats"))

    def reset_stats(self) -> None:
        self._call("POST", "/stats/reset", {})

    def advance(self, seconds: float) -> None:
        self._call("POST", f"/advance?seconds={seconds}", {})

    def set_refusing(self, service: str, refusing: bool = True) -> None:
        self._call("POST", f"/refuse?service={service}&on={int(refusing)}", {})

    def keystone_refusing(self, refusing: bool = True) -> None:
        self.set_refusing("identity", refusing)

    def inject(self, what: str, **kw: str) -> None:
        from urllib.parse import urlencode

        self._call("POST", "/inject?" + urlencode({"what": what, **kw}), {})

    def story(self) -> list[tuple[float, str, dict[str, Any]]]:
        return [(t, n, d) for t, n, d in self._call("GET", "/story")]

    def now(self) -> datetime:
        speed, start = self.info["speed"], self.info["start"]
        if speed == 1.0:
            return datetime.now(UTC)
        return datetime.fromtimestamp(start + (datetime.now(UTC).timestamp() - self.info["wall_start"]) * speed,
                                      UTC)

    def galera_connector(self, address: str, user: str, password: str | None, timeout: float = 5.0) -> Any:
        return RemoteGalera(self.control_url, address, user, password, timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                if self.proc.stdin:
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def __enter__(self) -> RemoteDemo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def sim_args(**kwargs: Any) -> list[str]:
    """start_demo's keyword arguments as `python -m tui.sim` flags. A boolean is always spelled out
    (`--storyline` / `--no-storyline`): dropping a False one silently gave the flag's default instead."""
    args: list[str] = []
    for key, value in kwargs.items():
        flag = key.replace("_", "-")
        if isinstance(value, bool):
            args.append(f"--{flag}" if value else f"--no-{flag}")
        elif value is not None:
            args += [f"--{flag}", str(value)]
    return args


def spawn_demo(**kwargs: Any) -> RemoteDemo:
    """start_demo(**kwargs) in a child process (`python -m tui.sim`); it exits when stop() closes its stdin
    or this process dies."""
    proc = subprocess.Popen([sys.executable, "-m", "tui.sim", *sim_args(**kwargs)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, cwd=str(Path(__file__).resolve().parents[2]))
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=5)
        raise RuntimeError(f"the simulator process exited ({proc.returncode}) before it was ready")
    info = json.loads(line)
    info["wall_start"] = datetime.now(UTC).timestamp()
    return RemoteDemo(proc, info)


def serve(demo: Demo) -> dict[str, Any]:
    """Add the control listener to a running demo; returns what spawn_demo reads."""
    from tui.sim.http import Stats

    ctl = Listener("control", make_control_app(demo), Stats(), loop="control")  # not the cloud's cost
    ctl.start()
    demo.listeners_extra = {"control": ctl}  # type: ignore[attr-defined]
    return {**describe(demo), "control_url": ctl.base}
