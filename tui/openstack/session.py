"""One OpenStack session per cloud: the client its collectors share, and what they tell each other.

The services and instances sources of a cloud read through one client (one token, one HTTP session), and they
coordinate the steady poll's request budget (at most 6 requests a cycle of both panes) through this object:

- the latest full compute-service and agent listings (the services source reads them; the instances source
  takes host health from them instead of asking again),
- when the instances source lists status=BUILD next (the steady poll's one optional request): the services
  source leaves its endpoint check's turn to the cycle without it.

The registry builds one session per cloud and hands it to the collectors that need it; nothing lives at module
level. Blocking, like the client: call through asyncio.to_thread where it may read.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from tui.config import OpenStackConfig

# The dashboard and `stacktop snapshot` keep the light client for good (no timed handover): keystoneauth's
# session and requests cost more CPU per steady poll than httpx, and importing openstacksdk ~0.35 s of CPU per
# snapshot. What the light path does not handle goes to openstacksdk at once.
LIGHT_HANDOVER_S = math.inf


def new_client(cfg: OpenStackConfig, light_first: float | None = None) -> Any:
    """The client for cfg: with light_first (seconds before openstacksdk takes over; math.inf: never) the light
    client (tui.openstack.triage) where it handles the clouds.yaml entry, else openstacksdk's. None: openstacksdk
    from the start (tests). STACKTOP_LIGHT_FIRST=0 in the environment turns the light path off."""
    if light_first is not None and os.environ.get("STACKTOP_LIGHT_FIRST", "1") != "0":
        from tui.openstack.triage import triage_client

        client = triage_client(cfg, handover_after_s=light_first)
        if client is not None:
            return client
    from tui.openstack.client import connect

    return connect(cfg)


class OpenStackSession:
    """A cloud's client (built on first use, thread-safe) and the coordination state of its collectors."""

    def __init__(self, cfg: OpenStackConfig, *, light_first: float | None = None,
                 client_factory: Callable[[], Any] | None = None) -> None:
        self.cfg = cfg
        self.light_first = light_first
        self._factory = client_factory
        self._client: Any = None
        self._lock = threading.Lock()
        self._recent: dict[str, tuple[float, list[dict[str, Any]]]] = {}
        self._build_list_due: datetime | None = None

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._factory() if self._factory is not None else new_client(self.cfg,
                                                                                             self.light_first)
            return self._client

    @property
    def current(self) -> Any:
        """The client if it was built, else None (never builds one)."""
        return self._client

    # ----- the latest full listings ------------------------------------------------------------------------
    def remember(self, what: str, rows: list[dict[str, Any]]) -> None:
        """The rows of a full `compute` (/os-services) or `network` (/agents) listing just read."""
        with self._lock:
            self._recent[what] = (time.monotonic(), rows)

    def recent_listing(self, what: str, max_age: float) -> list[dict[str, Any]] | None:
        """The rows of the last full `compute` or `network` listing read within max_age seconds, else None
        (then read it yourself)."""
        with self._lock:
            entry = self._recent.get(what)
        if entry is None or time.monotonic() - entry[0] > max_age:
            return None
        return entry[1]

    # ----- the steady cycle's plan -------------------------------------------------------------------------
    def plan_build_list(self, due: datetime) -> None:
        """The instances source says when its next status=BUILD listing is due."""
        with self._lock:
            self._build_list_due = due

    def build_list_due_near(self, now: datetime, within_s: float) -> bool:
        """True when the instances source's next status=BUILD listing is due within within_s seconds of `now`,
        before or after. Not when it is overdue by more: that source is not polling on time (failing, backing
        off, a cloud not on screen), and the services source must not wait for it."""
        with self._lock:
            due = self._build_list_due
        return due is not None and abs((due - now).total_seconds()) <= within_s

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()


def given_or_own(session: OpenStackSession | None, cfg: OpenStackConfig,
                 client_factory: Callable[[], Any] | None = None) -> tuple[OpenStackSession, bool]:
    """A collector's session: the one handed in (the cloud's, not the collector's to close), else one of its own
    on cfg (its client from client_factory when given). Returns (session, owned)."""
    if session is not None:
        return session, False
    return OpenStackSession(cfg, client_factory=client_factory), True
