"""The background placement audit (the placement source, `stacktop snapshot`) reads a provider's inventories
only when that provider is worth a finding: its digest, findings and capacities are those of the audit that
reads every provider's inventories, with one request per other provider fewer (on the simulator, frozen at the
storyline's stale allocation)."""

from __future__ import annotations

import asyncio

from tui.collectors.registry import build_collectors
from tui.models.placement import AuditDigest
from tui.openstack.placement_reads import audit_cloud
from tui.openstack.session import OpenStackSession
from tui.rules.allocations import audit_findings
from tui.sim.demo import start_demo_at


async def test_capacities_are_read_only_for_the_providers_worth_a_finding() -> None:
    demo = start_demo_at(instances=50, queues=40)
    try:
        client = OpenStackSession(demo.config().openstack).client()
        every = await audit_cloud(client)
        noteworthy = await audit_cloud(client, every_capacity=False)
        [placement] = [c for c in build_collectors(demo.config()) if c.name == "placement"]
        digest = await asyncio.wait_for(placement.collect(), timeout=120)
    finally:
        demo.stop()
    full, lean = AuditDigest.of(every), AuditDigest.of(noteworthy)
    assert full.judged, "the storyline's orphan allocation is judged"
    assert lean.judged == full.judged  # verdicts, usages and the capacities the findings quote
    assert all(a.capacities for a in lean.judged)
    assert [f.summary for f in audit_findings(lean.judged)] == [f.summary for f in audit_findings(full.judged)]
    assert every.requests - noteworthy.requests == len(every.providers) - len(full.judged)
    assert isinstance(digest, AuditDigest) and digest.judged == full.judged
    assert digest.requests == noteworthy.requests  # the placement source reads the lean way
