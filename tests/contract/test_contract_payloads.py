"""Contract: the simulator answers every resource kind stacktop reads with the same keys and value types as
the payloads captured from a real cloud and a real broker (tests/data/payloads). A drift fails naming the
field. Runs without any server (the live comparison is test_contract_live.py)."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.contract.kinds import KINDS, sim_ids
from tests.contract.shape import drift, shape
from tests.placement_provider_reads import provider_allocations, provider_inventories, provider_usages
from tui.openstack import connect
from tui.sim import start_demo

DATA = Path(__file__).parents[1] / "data" / "payloads"
OS = DATA / "openstack" / "healthy"
HELD = DATA / "openstack" / "compute02-down-migration-held"
START = 1_790_000_000.0
MAPS = {k.name: k.maps for k in KINDS}


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _actions(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in a.items() if k != "detail"} for a in _load(path)["instanceActions"]]


def _create_detail(path: Path) -> dict[str, Any]:
    return next(a["detail"] for a in _load(path)["instanceActions"] if a["action"] == "create")


# kind -> (real value from the captured files, simulator read (client, ids) -> value)
CASES: dict[str, tuple[Any, Any]] = {
    "compute_services": (_load(OS / "compute_services.json")["services"], lambda c, i: c.compute_services()),
    "servers": (_load(OS / "servers_detail.json")["servers"], lambda c, i: c.servers()),
    "server_active": (_load(OS / "server_vmC.json")["server"], lambda c, i: c.server(i.active)),
    "server_error": (_load(OS / "server_vmFault.json")["server"], lambda c, i: c.server(i.error)),
    "instance_actions": (_actions(OS / "server_vmB_actions.json"), lambda c, i: c.instance_actions(i.active)),
    "instance_action": (_create_detail(OS / "server_vmB_actions.json"),
                        lambda c, i: c.instance_action(i.active, i.create_request)),
    "hypervisors": (_load(OS / "hypervisors.json")["hypervisors"], lambda c, i: c.hypervisors()),
    "migrations": (_load(HELD / "os_migrations.json")["migrations"], lambda c, i: c.migrations()),
    "network_agents": (_load(OS / "network_agents.json")["agents"], lambda c, i: c.network_agents()),
    "ports": (_load(OS / "ports.json")["ports"], lambda c, i: c.ports()),
    "volume_services": (_load(OS / "volume_services.json")["services"], lambda c, i: c.volume_services()),
    "volumes": (_load(OS / "volumes.json")["volumes"], lambda c, i: c.volumes()),
    "resource_providers": (_load(OS / "rp_list.json")["resource_providers"], lambda c, i: c.resource_providers()),
    "provider_inventories": (_load(OS / "rp_compute-01.json")["inventories"]["inventories"],
                             lambda c, i: provider_inventories(c, i.provider)),
    "provider_usages": (_load(OS / "rp_compute-01.json")["usages"]["usages"],
                        lambda c, i: provider_usages(c, i.provider)),
    "provider_allocations": (_load(HELD / "rp_compute-02.json")["allocations"]["allocations"],
                             lambda c, i: provider_allocations(c, i.provider)),
    "catalog": (_load(OS / "catalog.json"), lambda c, i: c.catalog()),
}


@pytest.fixture(scope="module")
def sim():
    demo = start_demo(instances=120, hosts=6, queues=120, seed=1, manual=True, start=START)
    demo.advance(20)  # past the storyline's ERROR boot and into the victim's death
    client = connect(demo.config().openstack)
    yield demo, client, sim_ids(client)
    demo.stop()


@pytest.mark.parametrize("kind", sorted(CASES))
def test_openstack_kind_matches_captured_payload(sim, kind):
    _demo, client, ids = sim
    real, read = CASES[kind]
    lines = drift(shape(real, MAPS.get(kind, ())), shape(read(client, ids), MAPS.get(kind, ())))
    assert not lines, f"simulator drifted from the real {kind}:\n" + "\n".join(lines)


def test_drift_is_detected_and_named():
    """The comparison can fail: a renamed field and a changed type are both reported by path."""
    real = _load(OS / "compute_services.json")["services"]
    bent = [dict(s) for s in real]
    bent[0]["updated"] = bent[0].pop("updated_at")
    bent[1]["forced_down"] = "no"
    lines = drift(shape(real), shape(bent))
    assert "[].updated_at: the real API has it (str), the simulator lacks it" not in lines  # still in bent[1:]
    assert "[].updated: the simulator invents it (str), the real API lacks it" in lines
    assert "[].forced_down: real is bool, simulator is bool/str" in lines


# ------------------------------------------------------------------------------------------------ RabbitMQ
def _rabbit(demo, path: str) -> tuple[int, Any]:
    auth = base64.b64encode(b"guest:guest").decode()
    req = urllib.request.Request(demo.rabbitmq_url + path, headers={"Authorization": f"Basic {auth}"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


RQ = DATA / "rabbitmq"
RABBIT_MAPS = ("[].arguments", "[].effective_policy_definition", "items[].arguments")


@pytest.mark.parametrize(("name", "path", "status"), [
    ("queues.json", "/api/queues", 200),
    ("queues_page_columns.json", "/api/queues?page=1&page_size=2&columns=name,vhost,messages,consumers", 200),
    ("nodes.json", "/api/nodes", 200),
    ("overview.json", "/api/overview", 200),
    ("local_alarms_ok.json", "/api/health/checks/local-alarms", 200),
    ("error_page_size_1000.json", "/api/queues?page=1&page_size=1000", 400),
    ("error_page_out_of_range.json", "/api/queues?page=900&page_size=2", 400),
])
def test_rabbitmq_matches_captured_payload(sim, name, path, status):
    demo, _client, _ids = sim
    got_status, body = _rabbit(demo, path)
    assert got_status == status
    real = _load(RQ / name)
    if name == "queues.json":  # compare like with like: rows that have stats
        body = [q for q in body if "messages" in q]
    lines = drift(shape(real, RABBIT_MAPS), shape(body, RABBIT_MAPS), ignore=_RABBIT_IGNORE.get(name, ()))
    assert not lines, f"simulator drifted from the real RabbitMQ {name}:\n" + "\n".join(lines)


def test_rabbitmq_alarm_body_and_fresh_queue_rows(sim):
    demo, _client, _ids = sim
    with demo.engine.lock:
        demo.engine.storyline.rabbit_memory_alarm()
    try:
        status, body = _rabbit(demo, "/api/health/checks/local-alarms")
    finally:
        with demo.engine.lock:
            demo.engine.storyline.rabbit_memory_alarm_clears()
    assert status == 503
    assert not drift(shape(_load(RQ / "local_alarms_memory.json")), shape(body))
    fresh = _load(RQ / "queues_fresh.json")
    demo.advance(1)  # off the 5 s stats tick: a queue declared now has no stats until the next one
    with demo.engine.lock:
        q = demo.engine._queue("reply_fresh0000000000000000000000000", demo.engine.clock.time(), expires=True)
    try:
        row = next(r for r in _rabbit(demo, "/api/queues")[1] if r["name"] == q.name)
    finally:
        with demo.engine.lock:
            demo.engine.queues.pop((q.vhost, q.name))
    assert set(row) == set(fresh[2]), "a queue before its first stats tick has no messages/consumers keys"


# the management API's per-node detail the simulator leaves out: lists of plugins/contexts/listeners whose
# element shapes nothing in stacktop reads
_RABBIT_IGNORE: dict[str, tuple[str, ...]] = {
    "nodes.json": ("[].applications[]", "[].auth_mechanisms[]", "[].exchange_types[]", "[].contexts[]",
                   "[].metrics_gc_queue_length.", "[].ra_open_file_metrics."),
    "overview.json": ("exchange_types[]", "listeners[]", "contexts[]", "churn_rates", "message_stats"),
}


# ------------------------------------------------------------------------------------------------ RabbitMQ 4.0
R4 = DATA / "rabbitmq4"
# data-keyed maps: arguments, policies, and the per-member maps of quorum queues and streams
R4_MAPS = ("[].arguments", "[].effective_policy_definition", "[].open_files", "[].readers", "items[].arguments",
           "arguments", "effective_policy_definition", "open_files", "readers")
# what nothing in stacktop reads and the simulator leaves out: a consumer's tag, per-operation counters
R4_IGNORE = ("[].single_active_consumer_tag", "[].message_stats.", "single_active_consumer_tag",
             "message_stats", "consumer_details", "deliveries", "incoming")


@pytest.fixture(scope="module")
def sim4():
    demo = start_demo(instances=20, hosts=3, queues=60, seed=1, manual=True, start=START, storyline=False,
                      churn=0, rabbitmq4=True)
    demo.advance(12)  # past the first statistics tick: rows with messages
    yield demo
    demo.stop()


def _by_type(rows: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("type") == kind and "messages" in r]


@pytest.mark.parametrize("kind", ["classic", "quorum", "stream"])
def test_rabbitmq4_queue_rows_match_captured(sim4, kind):
    real = _by_type(_load(R4 / "queues.json"), kind)
    status, body = _rabbit(sim4, "/api/queues")
    with sim4.engine.lock:  # the 4.0 profile has no classic queue of its own: declare one to compare
        q = sim4.engine._queue("classic.contract", sim4.engine.clock.time() - 30, qtype="classic")
    try:
        status, body = _rabbit(sim4, "/api/queues")
    finally:
        with sim4.engine.lock:
            sim4.engine.queues.pop((q.vhost, q.name))
    sim = _by_type(body, kind)
    assert status == 200 and real and sim
    lines = drift(shape(real, R4_MAPS), shape(sim, R4_MAPS), ignore=R4_IGNORE)
    assert not lines, f"simulator drifted from the real RabbitMQ 4.0 {kind} rows:\n" + "\n".join(lines)


@pytest.mark.parametrize(("name", "path"), [
    ("queues_page_columns.json", "/api/queues?page=1&page_size=2&columns=name,vhost,messages,consumers"),
    ("queues_light.json", "/api/queues?columns=name,vhost,messages,messages_ready,messages_unacknowledged,"
                          "arguments&disable_stats=true&enable_queue_totals=true"),
    ("nodes.json", "/api/nodes"),
    ("overview.json", "/api/overview"),
    ("local_alarms_ok.json", "/api/health/checks/local-alarms"),
    ("queue_quorum.json", "/api/queues/%2F/conductor"),
])
def test_rabbitmq4_matches_captured_payload(sim4, name, path):
    status, body = _rabbit(sim4, path)
    assert status == 200
    ignore = R4_IGNORE + _RABBIT_IGNORE.get(name, ())
    lines = drift(shape(_load(R4 / name), R4_MAPS), shape(body, R4_MAPS), ignore=ignore)
    assert not lines, f"simulator drifted from the real RabbitMQ 4.0 {name}:\n" + "\n".join(lines)


@pytest.mark.parametrize(("name", "stopped"), [("one_down", ("rabbit@ctl-2",)),
                                               ("two_down", ("rabbit@ctl-2", "rabbit@ctl-3"))])
def test_rabbitmq4_stopped_nodes_match_captured(sim4, name, stopped):
    """A stopped member's sparse node row, quorum/stream rows with members online and, without a majority,
    `state: minority`, as the real cluster showed them."""
    for node in stopped:
        sim4.inject("rabbit_node_down", node=node)
    try:
        nodes = _rabbit(sim4, "/api/nodes")[1]
        queues = _rabbit(sim4, "/api/queues")[1]
    finally:
        for node in stopped:
            sim4.inject("rabbit_node_up", node=node)
    real_nodes = _load(R4 / f"nodes_{name}.json")
    for running in (True, False):
        real = [n for n in real_nodes if n["running"] is running]
        sim = [n for n in nodes if n["running"] is running]
        ignore = R4_IGNORE + _RABBIT_IGNORE["nodes.json"]
        lines = drift(shape(real, R4_MAPS), shape(sim, R4_MAPS), ignore=ignore)
        assert not lines, f"simulator drifted from the real nodes_{name} (running={running}):\n" + "\n".join(lines)
    real_q = _load(R4 / f"queues_{name}.json")
    for kind in ("quorum", "stream"):
        real_states = {r["state"] for r in real_q if r["type"] == kind}
        sim_states = {r["state"] for r in queues if r["type"] == kind}
        assert real_states == sim_states, (kind, real_states, sim_states)
        real_online = {len(r["online"]) for r in real_q if r["type"] == kind and r["state"] == "running"}
        sim_online = {len(r["online"]) for r in queues if r["type"] == kind and r["state"] == "running"}
        assert real_online == sim_online, (kind, real_online, sim_online)
