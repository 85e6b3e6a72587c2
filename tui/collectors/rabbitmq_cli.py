"""RabbitMQ through rabbitmqctl, for deployments without the management API.

[rabbitmq] cli_command is the command prefix that reaches rabbitmqctl, e.g. `rabbitmqctl` or
`docker exec rabbitmq rabbitmqctl` (kolla). One poll runs `cluster_status --formatter json` (nodes, running
nodes, partitions, alarms) and `list_queues -p VHOST --formatter json name messages ... arguments` for each of
[rabbitmq] vhosts (checked against `list_vhosts`; all vhosts when none is configured). Each call starts an Erlang VM
(~0.5-1.4 s): keep the interval generous. rabbitmqctl reads queue processes directly, so its numbers are
live, not statistics; the 2-poll rule still guards against a consumer that is only reconnecting, and the
one-shot run (prepare_oneshot) takes a second sample confirm_delay_s (3 s) later.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shlex
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from tui.collectors.base import BaseCollector
from tui.collectors.rabbitmq_payload import parse_cluster_status, parse_queues
from tui.config import RabbitMQConfig
from tui.errors import SourceError
from tui.models.finding import Finding
from tui.models.rabbitmq import QueueInfo, RabbitSnapshot
from tui.rules.queues import MIN_POLLS, History, apply_history, is_suspect, rabbitmq_findings

QUEUE_FIELDS = ("name", "messages", "messages_ready", "messages_unacknowledged", "consumers", "arguments")
MAX_PARALLEL = 2  # each call is an Erlang VM: do not start one per vhost at once


def _raise_first(results: list[Any]) -> list[Any]:
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results


def _version(status: Any) -> str | None:
    versions = status.get("versions") if isinstance(status, dict) else None
    if isinstance(versions, dict):
        for info in versions.values():
            if isinstance(info, dict) and isinstance(info.get("rabbitmq_version"), str):
                return info["rabbitmq_version"]
    return None


class RabbitMQCliCollector(BaseCollector):
    name = "rabbitmq"

    def __init__(self, cli_command: str, *, vhosts: Iterable[str] = (), interval: float = 30.0,
                 timeout: float = 20.0, confirm_delay_s: float = 3.0, min_polls: int = MIN_POLLS) -> None:
        self.cli_command = cli_command
        self.argv = shlex.split(cli_command)
        self.vhosts = tuple(vhosts)
        self.interval = interval
        self.timeout = timeout
        self.confirm_delay_s = confirm_delay_s
        self.min_polls = min_polls
        self.oneshot = False
        self._history: History = {}
        self._sem = asyncio.Semaphore(MAX_PARALLEL)

    @classmethod
    def from_config(cls, rq: RabbitMQConfig) -> RabbitMQCliCollector:
        assert rq.cli_command
        return cls(rq.cli_command, vhosts=rq.vhosts, interval=rq.interval, timeout=rq.timeout)

    def prepare_oneshot(self) -> None:
        if not self.oneshot:
            self.oneshot = True
            self.timeout += self.confirm_delay_s

    async def _run(self, *args: str) -> Any:
        shown = f"`{self.cli_command} {args[0]}`"
        async with self._sem:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *self.argv, "-q", *args, stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            except OSError as exc:
                raise SourceError(f"{shown} cannot start ({exc.strerror or exc}) - check [rabbitmq] "
                                  "cli_command") from None
            try:
                out, err = await proc.communicate()
            except asyncio.CancelledError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                raise
        if proc.returncode != 0:
            lines = [ln.strip() for ln in err.decode(errors="replace").splitlines() if ln.strip()]
            reason = lines[0] if lines else f"exit {proc.returncode}"
            raise SourceError(f"{shown} failed: {reason[:200]} - check [rabbitmq] cli_command")
        try:
            return json.loads(out.decode(errors="replace"))
        except ValueError:
            raise SourceError(f"{shown} did not print JSON - does [rabbitmq] cli_command end in rabbitmqctl?") \
                from None

    async def _list_queues(self, vhost: str) -> list[QueueInfo]:
        data = await self._run("list_queues", "-p", vhost, "--formatter", "json", *QUEUE_FIELDS)
        return parse_queues(data if isinstance(data, list) else [], vhost=vhost)

    async def _all_queues(self) -> tuple[tuple[str, ...], list[QueueInfo]]:
        listed = await self._run("list_vhosts", "--formatter", "json")
        known = tuple(v["name"] for v in listed if isinstance(v, dict) and isinstance(v.get("name"), str)) \
            if isinstance(listed, list) else ()
        missing = [v for v in self.vhosts if v not in known]
        if missing:  # list_queues -p <unknown> prints an empty list: say so instead of showing nothing
            raise SourceError(f"`{self.cli_command}`: vhost {missing[0]!r} does not exist - check [rabbitmq] vhosts")
        vhosts = self.vhosts or known
        per_vhost = _raise_first(await asyncio.gather(*(self._list_queues(v) for v in vhosts),
                                                      return_exceptions=True))
        return vhosts, [q for qs in per_vhost for q in qs]

    async def _sample(self) -> RabbitSnapshot:
        start = time.monotonic()
        status, (vhosts, queues) = _raise_first(await asyncio.gather(
            self._run("cluster_status", "--formatter", "json"), self._all_queues(), return_exceptions=True))
        nodes, alarms = parse_cluster_status(status if isinstance(status, dict) else {})
        now = datetime.now(UTC)
        self._history, queues = apply_history(self._history, sorted(queues, key=lambda q: q.key), now)
        return RabbitSnapshot(
            endpoint=self.cli_command, taken_at=now, queues=tuple(queues), nodes=nodes, alarms=alarms,
            alarms_checked=True, vhosts=self.vhosts, via="cli",
            cluster_name=status.get("cluster_name") if isinstance(status, dict) else None,
            rabbitmq_version=_version(status),
            fetch={"commands": 2 + len(vhosts),
                   "seconds": round(time.monotonic() - start, 4)},
        )

    async def collect(self) -> RabbitSnapshot:
        snap = await self._sample()
        if self.oneshot and any(is_suspect(q) for q in snap.queues):
            await asyncio.sleep(self.confirm_delay_s)
            snap = dataclasses.replace(await self._sample(), confirmation="second-sample")
        return snap

    def findings(self, snapshot: RabbitSnapshot, now: datetime) -> list[Finding]:
        return rabbitmq_findings(snapshot, now, self.min_polls)
