"""Parsing real nova/neutron/cinder payloads and the server index (merge, DELETED, task_state since)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tui.collectors.instances import (
    ServerIndex,
    parse_actions,
    parse_host_health,
    parse_ports,
    parse_server,
    parse_time,
    parse_volume,
)
from tui.jsonable import to_jsonable
from tui.models.instances import InstancesSnapshot

PAYLOADS = Path(__file__).resolve().parents[1] / "data" / "payloads" / "openstack"
T0 = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)


def load(name: str, scenario: str = "healthy") -> Any:
    return json.loads((PAYLOADS / scenario / name).read_text())


def row(sid: str, task_state: str | None = None, status: str = "BUILD", updated: datetime = T0,
        host: str | None = "compute-02") -> dict[str, Any]:
    return {"id": sid, "name": f"vm-{sid}", "status": status, "tenant_id": "p", "user_id": "u",
            "OS-EXT-STS:task_state": task_state, "OS-EXT-STS:vm_state": "building", "OS-EXT-SRV-ATTR:host": host,
            "updated": updated.strftime("%Y-%m-%dT%H:%M:%SZ"), "created": "2026-12-02T09:00:00Z"}


def test_parse_time_spellings() -> None:
    assert parse_time("2026-12-02T09:40:45Z") == datetime(2026, 12, 2, 9, 40, 45, tzinfo=UTC)
    assert parse_time("2026-12-02T09:38:33.000000") == datetime(2026, 12, 2, 9, 38, 33, tzinfo=UTC)
    assert parse_time("2026-12-02 09:42:29") == datetime(2026, 12, 2, 9, 42, 29, tzinfo=UTC)
    assert parse_time(None) is None and parse_time("garbage") is None


def test_parse_real_servers_detail() -> None:
    servers = {s.name: s for s in map(parse_server, load("servers_detail.json")["servers"])}
    fault = servers["vmFault"]
    assert fault.status == "ERROR" and fault.host is None and fault.flavor == "x.huge"
    assert fault.fault is not None and fault.fault.code == 500
    assert fault.fault.message.startswith("No valid host was found")
    assert fault.fault.created == datetime(2026, 12, 2, 9, 40, 45, tzinfo=UTC)
    vmc = servers["vmC"]
    assert (vmc.host, vmc.task_state, vmc.vm_state, vmc.power_state) == ("compute-02", None, "active", 0)
    assert vmc.volumes == ("a1184784-9ce8-4567-8ef2-3e3212dc0f4a",)
    assert vmc.project_id == "7813818bc78a42a89f7fae09dfda4f7b"


def test_parse_real_actions_latest_first_with_request_ids() -> None:
    raw = load("server_vmB_actions.json")["instanceActions"]
    for a in raw:
        a["events"] = a.get("detail", {}).get("events", [])
    actions = parse_actions(reversed(raw))
    assert [a.action for a in actions][:2] == ["confirmResize", "migrate"]
    assert actions[-1].action == "create" and actions[-1].request_id.startswith("req-")
    starts = [e.start_time for e in actions[1].events]
    assert starts == sorted(starts, reverse=True)
    assert actions[0].events[0].host == "compute-02"


def test_parse_real_ports_volumes_and_health() -> None:
    ports = parse_ports(load("ports.json")["ports"])
    assert ports and all(p.vif_type == "ovs" and not p.binding_failed for p in ports)
    assert ports[0].fixed_ips == ("192.0.2.75",) and ports[0].binding_host == "compute-01"
    vol = parse_volume(load("volumes.json")["volumes"][0], "902ac246-8630-473d-80dd-eac5bd25df82", False)
    assert vol.device == "/dev/sdb" and vol.delete_on_termination is False
    assert vol.attach_status == "attached to this server on compute-02"
    other = parse_volume(load("volumes.json")["volumes"][0], "someone-else", None)
    assert other.attach_status is not None and "not attached" in other.attach_status
    down = parse_host_health(load("compute_services.json", "compute02-down-migration-held")["services"],
                             load("network_agents.json", "compute02-down-migration-held")["agents"])
    assert down["compute-02"].compute_down and not down["compute-01"].compute_down
    assert down["compute-01"].agents and down["compute-01"].agents_read
    no_agents = parse_host_health(load("compute_services.json")["services"], None)
    assert no_agents["compute-01"].agents == () and not no_agents["compute-01"].agents_read


def test_binding_failed_is_flagged() -> None:
    (port,) = parse_ports([{"id": "p", "binding:vif_type": "binding_failed", "status": "DOWN"}])
    assert port.binding_failed


def test_full_list_then_merge_and_deleted_leave() -> None:
    idx = ServerIndex()
    assert idx.replace_all([row("a", "scheduling", host=None), row("b", None, "ACTIVE"),
                            row("x", None, "DELETED")], T0) == 0
    assert set(idx.servers) == {"a", "b"}, "DELETED rows never enter the index"
    left = idx.merge([row("a", "spawning", updated=T0 + timedelta(seconds=8)), row("b", None, "DELETED"),
                      row("c", "scheduling", updated=T0 + timedelta(seconds=9))], T0 + timedelta(seconds=10))
    assert left == 1 and set(idx.servers) == {"a", "c"}
    assert idx.servers["a"].task_state == "spawning"
    # a full resync drops servers that vanished without a DELETED row
    assert idx.replace_all([row("c", "scheduling", updated=T0 + timedelta(seconds=9))], T0 + timedelta(seconds=20)) == 1
    assert set(idx.servers) == {"c"}


def test_task_since_uses_updated_at_when_earlier_and_keeps_it_while_the_state_lasts() -> None:
    idx = ServerIndex()
    started = T0 - timedelta(hours=2)
    idx.replace_all([row("a", "spawning", updated=started)], T0)
    a = idx.servers["a"]
    assert (a.task_since, a.task_since_basis) == (started, "updated_at")
    assert a.in_state_for(T0) == 7200
    # same state re-sent later with a newer updated_at (some other field changed): since is kept
    idx.merge([row("a", "spawning", updated=T0 + timedelta(seconds=30))], T0 + timedelta(seconds=40))
    assert idx.servers["a"].task_since == started
    # a new state starts a new clock
    idx.merge([row("a", "deleting", updated=T0 + timedelta(seconds=45))], T0 + timedelta(seconds=50))
    assert (idx.servers["a"].task_since, idx.servers["a"].task_since_basis) == (T0 + timedelta(seconds=45),
                                                                                "updated_at")
    idx.merge([row("a", None, "ACTIVE")], T0 + timedelta(seconds=60))
    assert idx.servers["a"].task_since is None and idx.servers["a"].in_state_for(T0) is None


def test_task_since_falls_back_to_our_observation_when_updated_at_is_ahead() -> None:
    idx = ServerIndex()
    idx.replace_all([row("a", "networking", updated=T0 + timedelta(seconds=5))], T0)  # nova's clock ahead
    assert (idx.servers["a"].task_since, idx.servers["a"].task_since_basis) == (T0, "observed")


def test_snapshot_is_jsonable() -> None:
    idx = ServerIndex()
    idx.replace_all(load("servers_detail.json")["servers"], T0)
    health = parse_host_health(load("compute_services.json")["services"], load("network_agents.json")["agents"])
    snap = InstancesSnapshot(taken_at=T0, servers=tuple(idx.servers.values()), hosts=health)
    text = json.dumps(to_jsonable(snap))
    assert "No valid host was found" in text and "compute-01" in text


def test_build_without_task_state_is_tracked_as_a_phase() -> None:
    idx = ServerIndex()
    idx.replace_all([row("a", None, "BUILD", updated=T0 - timedelta(minutes=5))], T0)
    a = idx.servers["a"]
    assert a.phase == "build_queued" and a.in_state_for(T0) == 300 and a.task_since_basis == "updated_at"
    idx.merge([row("a", "networking", updated=T0 + timedelta(seconds=1))], T0 + timedelta(seconds=2))
    assert idx.servers["a"].task_since == T0 + timedelta(seconds=1)


def test_full_resync_reuses_unchanged_servers_and_reparses_changed_ones() -> None:
    idx = ServerIndex()
    idx.replace_all([row("a", None, "ACTIVE"), row("b", "spawning")], T0)
    a, b = idx.servers["a"], idx.servers["b"]
    idx.replace_all([row("a", None, "ACTIVE"), row("b", "spawning", updated=T0 + timedelta(seconds=5))],
                    T0 + timedelta(seconds=10))
    assert idx.servers["a"] is a, "unchanged row: the same object, not parsed again"
    assert idx.servers["b"] is not b and idx.servers["b"].task_since == b.task_since, "tracking kept"


def test_scheduling_counts_from_created_even_when_first_seen_late() -> None:
    """A build is in scheduling from its POST on: a build first seen late (changes-since never lists one cast to
    a compute that has not claimed it) is not younger than it is. Other states keep their basis."""
    idx = ServerIndex()
    late = row("a", "scheduling", updated=T0, host=None)  # nova shows the request's time for a NULL updated_at
    late["created"] = (T0 - timedelta(seconds=90)).strftime("%Y-%m-%dT%H:%M:%SZ")
    idx.merge([late], T0 + timedelta(seconds=1))
    a = idx.servers["a"]
    assert (a.task_since, a.task_since_basis) == (T0 - timedelta(seconds=90), "created")
    assert a.in_state_for(T0 + timedelta(seconds=30)) == 120
    idx.merge([row("a", "networking", updated=T0 + timedelta(seconds=40))], T0 + timedelta(seconds=41))
    assert (idx.servers["a"].task_since, idx.servers["a"].task_since_basis) == (T0 + timedelta(seconds=40),
                                                                                "updated_at")


def test_the_kept_attention_subset_is_a_scan_of_every_server_in_order() -> None:
    """ServerIndex keeps the servers worth attention as they change (a poll reads them without scanning every
    server): after any mix of full listings, changes-since answers, deletions and dropped builds it holds the
    same servers, in the same order, as a scan of every server."""
    import random

    from tui.models.instances import attention_of

    rng = random.Random(12)
    states = [(None, "ACTIVE"), (None, "SHUTOFF"), (None, "ERROR"), (None, "BUILD"), ("spawning", "BUILD"),
              ("rebooting", "ACTIVE"), (None, "DELETED")]
    idx = ServerIndex()
    now = T0
    for step in range(300):
        now += timedelta(seconds=1)
        ids = [f"s{rng.randrange(40):02d}" for _ in range(rng.randrange(1, 12))]
        rows = [row(sid, *rng.choice(states), updated=now) for sid in ids]
        kind = rng.random()
        if kind < 0.1:
            idx.replace_all([r for r in rows if r["status"] != "DELETED"], now)
        elif kind < 0.2:
            idx.drop_unlisted_builds(set(ids))
        else:
            idx.merge(rows, now)
        assert idx.attention_in_order() == attention_of(tuple(idx.servers.values())), f"step {step}"
        assert set(idx.attention) <= set(idx.servers)
