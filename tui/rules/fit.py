"""The capacity explainer (`:fit FLAVOR [TRAIT...]`), pure: what a flavor asks placement for, which computes
placement offers (GET /allocation_candidates answers "can it fit anywhere?"), and for every other compute
which resource or trait rules it out. Aggregate free capacity is shown next to it because it is the number
that misleads (aggregate free space is not a matching host).

Read-only: the explanation names constraints, it never proposes to change or delete anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from tui.models.placement import FitReport, FitRequest, HostFit, Provider, rc_sort_key

DISABLED_TRAIT = "COMPUTE_STATUS_DISABLED"


def flavor_request(flavor: Mapping[str, Any], traits: Iterable[str] = (), *,
                   forbid_disabled: bool = True) -> FitRequest:
    """A flavor (GET /flavors/detail row, extra_specs from 2.61) + extra traits ("X" required, "!X"
    forbidden) -> the unnumbered request group nova's scheduler sends to placement."""
    notes: list[str] = []
    swap_mb = flavor.get("swap") or 0
    swap_mb = int(swap_mb) if str(swap_mb).isdigit() else 0
    resources = {"VCPU": int(flavor.get("vcpus") or 0), "MEMORY_MB": int(flavor.get("ram") or 0),
                 "DISK_GB": int(flavor.get("disk") or 0) + int(flavor.get("OS-FLV-EXT-DATA:ephemeral") or 0)
                 + math.ceil(swap_mb / 1024)}
    required: list[str] = []
    forbidden: list[str] = []
    specs = flavor.get("extra_specs") or {}
    if str(specs.get("hw:cpu_policy", "")).lower() == "dedicated":
        resources["PCPU"] = resources.pop("VCPU")
        notes.append("hw:cpu_policy=dedicated: asks PCPU instead of VCPU")
    for key, value in sorted(specs.items()):
        if key.startswith("resources:"):
            rc = key.split(":", 1)[1]
            try:
                resources[rc] = int(value)
            except (TypeError, ValueError):
                notes.append(f"ignored {key}={value} (not a number)")
        elif key.startswith("trait:"):
            trait = key.split(":", 1)[1]
            if str(value).lower() == "required":
                required.append(trait)
            elif str(value).lower() == "forbidden":
                forbidden.append(trait)
        elif key.startswith("resources") and ":" in key:
            notes.append(f"granular group {key} not explained (only the unnumbered group is)")
    for t in traits:
        t = t.strip()
        if t.startswith("!") and len(t) > 1:
            forbidden.append(t[1:])
        elif t:
            required.append(t)
    if forbid_disabled and DISABLED_TRAIT not in required and DISABLED_TRAIT not in forbidden:
        forbidden.append(DISABLED_TRAIT)
        notes.append(f"!{DISABLED_TRAIT} added, as nova's scheduler does (disabled computes are not candidates)")
    return FitRequest(flavor=str(flavor.get("name") or flavor.get("id") or "?"),
                      resources={rc: n for rc, n in resources.items() if n > 0},
                      required=tuple(dict.fromkeys(required)), forbidden=tuple(dict.fromkeys(forbidden)),
                      notes=tuple(notes))


def required_param(request: FitRequest) -> list[str]:
    """The `required=` value: required traits, forbidden ones with '!' (placement >= 1.22)."""
    return [*request.required, *(f"!{t}" for t in request.forbidden)]


def candidate_providers(body: Mapping[str, Any]) -> set[str]:
    """Provider uuids used by any allocation request of GET /allocation_candidates."""
    out: set[str] = set()
    for req in body.get("allocation_requests") or ():
        out.update((req.get("allocations") or {}).keys())
    return out


def _tree_reasons(request: FitRequest, tree: list[Provider]) -> list[str]:
    reasons: list[str] = []
    for rc in sorted(request.resources, key=rc_sort_key):
        amount = request.resources[rc]
        having = [p for p in tree if rc in (p.inventories or {})]
        if not having:
            reasons.append(f"{rc}: asks {amount}, has no {rc} inventory")
            continue
        best_reason: str | None = None
        for p in sorted(having, key=lambda p: -(p.free(rc) or 0)):
            inv = (p.inventories or {})[rc]
            free = p.free(rc) or 0
            tail = f"{free} free of {inv.capacity}"
            if inv.max_unit is not None and amount > inv.max_unit:
                why = f"{rc}: asks {amount}, at most {inv.max_unit} in one allocation (max_unit); {tail}"
            elif amount < inv.min_unit:
                why = f"{rc}: asks {amount}, at least {inv.min_unit} (min_unit)"
            elif inv.step_size > 1 and amount % inv.step_size:
                why = f"{rc}: asks {amount}, not a multiple of step_size {inv.step_size}"
            elif free < amount:
                why = f"{rc}: asks {amount}, {tail} (used {p.used(rc)})"
            else:
                best_reason = None
                break
            best_reason = best_reason or why
        if best_reason:
            reasons.append(best_reason)
    traits = {t for p in tree for t in (p.traits or ())}
    known = any(p.traits is not None for p in tree)
    for t in request.required:
        if known and t not in traits:
            reasons.append(f"lacks required trait {t}")
    for t in request.forbidden:
        if t in traits:
            reasons.append("compute service disabled (COMPUTE_STATUS_DISABLED)" if t == DISABLED_TRAIT
                           else f"has forbidden trait {t}")
    return reasons


def explain(request: FitRequest, providers: Iterable[Provider], candidates: set[str], now: datetime, *,
            hosts: Mapping[str, str] | None = None, errors: Mapping[str, str] | None = None) -> FitReport:
    """providers: every provider with inventories, usages and traits read; candidates: provider uuids placement
    offered; hosts: provider uuid -> compute host (hypervisor id == root provider uuid)."""
    hosts = hosts or {}
    trees: dict[str, list[Provider]] = {}
    for p in providers:
        trees.setdefault(p.root_provider_uuid or p.uuid, []).append(p)
    aggregate: dict[str, int] = {}
    out: list[HostFit] = []
    for root, tree in trees.items():
        root_p = next((p for p in tree if p.uuid == root), tree[0])
        free: dict[str, int] = {}
        for p in tree:
            for rc in p.inventories or {}:
                f = p.free(rc) or 0
                free[rc] = free.get(rc, 0) + f
                aggregate[rc] = aggregate.get(rc, 0) + max(0, f)
        is_candidate = any(p.uuid in candidates for p in tree)
        reasons: list[str] = []
        if not is_candidate:
            reasons = _tree_reasons(request, tree)
            if not reasons:
                reasons = ["placement did not offer it, and its inventories, usages and traits do not say why "
                           "(aggregates/member_of, or it changed between the reads)"]
        out.append(HostFit(provider_uuid=root, name=root_p.name, host=hosts.get(root), candidate=is_candidate,
                           reasons=tuple(reasons), free=free))
    out.sort(key=lambda h: (not h.candidate, h.host or h.name))
    return FitReport(request=request, taken_at=now, hosts=tuple(out), aggregate_free=aggregate,
                     candidates=sum(1 for h in out if h.candidate), errors=dict(errors or {}))


def summary_line(report: FitReport) -> str:
    """'m1.tiny fits on 2 of 2 computes' / 'x.huge fits nowhere: ...'."""
    return report.summary_line()
