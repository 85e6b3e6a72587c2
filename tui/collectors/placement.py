"""Placement audit source: every resource provider's allocations judged against the hypervisors' servers and
in-progress migrations (tui.openstack.placement_reads.audit_cloud, the reads `:audit` makes), as a slow background
source: stale allocations (the usual cause of a cloud "full at 40 %") reach the findings pane, the triage row
and `stacktop snapshot` without anyone asking. `[openstack] audit_interval` (default 600 s; 0: off).

In the dashboard the first audit waits FIRST_DELAY_S, so it never competes with the first triage's reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from tui.collectors.base import BaseCollector, BuildContext, Collector
from tui.config import Config
from tui.models.finding import Finding

if TYPE_CHECKING:
    from tui.models.placement import AuditDigest

FIRST_DELAY_S = 30.0
AUDIT_TIMEOUT_S = 300.0  # 500 providers take ~600 GETs: seconds on a healthy cloud, minutes on a sick one


class PlacementAuditCollector(BaseCollector):
    name = "placement"  # tui.rules.allocations.SOURCE: the audit's models and rules load with its first run

    def __init__(self, session: object, interval: float, *, first_delay: float = 0.0,
                 timeout: float = AUDIT_TIMEOUT_S, clock: Callable[[], datetime] | None = None) -> None:
        self.session = session
        self.clock = clock  # the audit's taken_at (None: the wall clock)
        self.interval = interval
        self.first_delay = first_delay
        self.timeout = timeout + first_delay
        self._first = True

    async def collect(self) -> AuditDigest:
        if self._first:
            self._first = False
            if self.first_delay:
                await asyncio.sleep(self.first_delay)
                self.timeout -= self.first_delay
        from tui.models.placement import AuditDigest
        from tui.openstack.placement_reads import audit_cloud

        client = await asyncio.to_thread(self.session.client)  # type: ignore[attr-defined]
        # the digest keeps only the providers worth a finding: only theirs need a capacity
        timed = {"clock": self.clock} if self.clock is not None else {}
        return AuditDigest.of(await audit_cloud(client, every_capacity=False, **timed))

    def findings(self, snapshot: AuditDigest, now: datetime) -> list[Finding]:
        from tui.rules.allocations import audit_findings

        return audit_findings(snapshot.judged)


def build(config: Config, context: BuildContext | None = None) -> list[Collector]:
    if not config.openstack.audited:
        return []
    session = context.session if context is not None else None
    if session is None:
        from tui.openstack.session import OpenStackSession

        session = OpenStackSession(config.openstack)
    dashboard = context is not None and context.dashboard
    return [PlacementAuditCollector(session, config.openstack.audit_interval,
                                    first_delay=FIRST_DELAY_S if dashboard else 0.0,
                                    clock=context.clock if context is not None else None)]
