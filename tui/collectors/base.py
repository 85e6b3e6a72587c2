"""The collector protocol every source implements.

A collector reads one source and returns an immutable snapshot; it never touches the UI. Blocking clients
(openstacksdk, pymysql, pika) run in asyncio.to_thread. Failures of the source raise tui.errors.SourceError with one
short human line naming what failed and the config key to fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from tui.models.finding import Finding


@dataclass(frozen=True)
class BuildContext:
    """What the registry hands every source module's build(config, context): each takes what it needs.

    dashboard: for the app (the instances source first reads the servers worth attention); `stacktop snapshot`
    reads everything in its one poll. session: the cloud's tui.openstack.OpenStackSession, shared by its
    OpenStack sources. galera_connector: the Galera collector's connection seam (the simulator passes its own).
    clock: the time the collectors stamp their reads with (UTC), the one the dashboard judges them at: the
    simulated cloud's for `stacktop --demo` (its --speed runs it ahead of the wall clock); None: the wall clock.
    """

    dashboard: bool = False
    session: Any = None
    galera_connector: Any = None
    clock: Callable[[], datetime] | None = None


@runtime_checkable
class Collector(Protocol):
    name: str
    interval: float
    timeout: float

    async def collect(self) -> Any:
        """Read the source once and return a snapshot (frozen dataclass or plain JSON-able data)."""
        ...

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        """Apply this source's pure rules to a snapshot."""
        ...

    async def aclose(self) -> None: ...


class BaseCollector:
    """Convenience base: subclasses set name/interval/timeout and implement collect (and findings)."""

    name: str = "base"
    interval: float = 10.0
    timeout: float = 10.0

    async def collect(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return []

    async def aclose(self) -> None:
        return None
