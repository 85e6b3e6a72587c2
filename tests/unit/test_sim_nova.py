"""The simulator's nova: pagination (max_limit 1000, the extra empty page), changes-since, microversions.

Requests and rows are counted on the simulator's side (demo.stats) and on the client's (tui.openstack).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import timedelta

import pytest

from tui.errors import SourceError
from tui.openstack import connect
from tui.sim import start_demo

START = 1_790_000_000.0  # fixed sim epoch: deterministic timestamps


@pytest.fixture
def demo2500():
    demo = start_demo(instances=2500, hosts=10, queues=50, churn=0, storyline=False, manual=True, start=START)
    yield demo
    demo.stop()


def _server_requests(demo) -> list[tuple[str, str, str, int, int]]:
    return demo.stats.matching("compute", "/v2.1/servers/detail")


def test_full_list_pages_at_max_limit_then_changes_since_returns_nothing(demo2500):
    client = connect(demo2500.config().openstack)
    demo2500.stats.reset()
    rows = client.servers()
    assert len(rows) == 2500
    assert len({r["id"] for r in rows}) == 2500
    reqs = _server_requests(demo2500)
    assert len(reqs) == 3  # 1000 + 1000 + 500
    assert all(status == 200 for *_, status, _size in reqs)

    # newest first, like nova's default sort (created_at desc)
    created = [r["created"] for r in rows]
    assert created == sorted(created, reverse=True)

    demo2500.stats.reset()
    demo2500.advance(5)
    since = demo2500.now() - timedelta(seconds=2)
    assert client.servers(changes_since=since) == []
    assert len(_server_requests(demo2500)) == 1


def test_exactly_full_last_page_costs_one_extra_empty_request():
    demo = start_demo(instances=2000, hosts=4, queues=20, churn=0, storyline=False, manual=True, start=START)
    try:
        client = connect(demo.config().openstack)
        demo.stats.reset()
        assert len(client.servers()) == 2000
        sizes = [size for *_, size in _server_requests(demo)]
        assert len(sizes) == 3  # 1000, 1000, then the empty page nova's link asked for
        assert sizes[-1] < 100
    finally:
        demo.stop()


def test_limit_above_max_limit_is_capped_and_links_carry_limit(demo2500):
    body = _get(demo2500, "compute", "/v2.1/servers/detail?all_tenants=1&limit=5000")
    assert len(body["servers"]) == 1000
    href = body["servers_links"][0]["href"]
    assert "limit=5000" in href and f"marker={body['servers'][-1]['id']}" in href


def test_changes_since_sees_each_transition_and_deleted_servers(demo2500):
    client = connect(demo2500.config().openstack)
    client.servers()
    engine = demo2500.engine
    t0 = demo2500.now()
    with engine.lock:
        inst = engine.boot("probe-1", engine.projects[0], "m1.small", durations=(2, 2, 2, 2))
        victim = engine.order_desc()[-1]
        engine.delete(victim)
    seen: dict[str, list[str | None]] = {}
    deleted_seen = False
    for _ in range(20):
        demo2500.advance(1)
        for row in client.servers(changes_since=t0):
            if row["id"] == inst.id:
                states = seen.setdefault(row["status"], [])
                if row["OS-EXT-STS:task_state"] not in states:
                    states.append(row["OS-EXT-STS:task_state"])
            if row["id"] == victim and row["status"] == "DELETED":
                deleted_seen = True
    assert seen["BUILD"] == ["scheduling", None, "networking", "block_device_mapping", "spawning"]
    assert seen["ACTIVE"] == [None]
    assert deleted_seen
    # a full list no longer has the deleted one
    assert victim not in {r["id"] for r in client.servers()}


def test_bad_marker_and_bad_changes_since_are_400(demo2500):
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(demo2500, "compute", "/v2.1/servers/detail?all_tenants=1&marker=nope")
    assert err.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(demo2500, "compute", "/v2.1/servers/detail?all_tenants=1&changes-since=yesterday")
    assert err.value.code == 400


def test_without_all_tenants_admin_sees_only_its_project(demo2500):
    assert _get(demo2500, "compute", "/v2.1/servers/detail")["servers"] == []


def test_microversion_header_echoed_and_out_of_range_refused(demo2500):
    token = demo2500.auth.issue()
    url = demo2500.url("compute") + "/os-services"
    req = urllib.request.Request(url, headers={"X-Auth-Token": token, "OpenStack-API-Version": "compute 2.53"})
    with urllib.request.urlopen(req) as resp:
        assert resp.headers["OpenStack-API-Version"] == "compute 2.53"
        services = json.load(resp)["services"]
    assert "forced_down" in services[0] and len(services[0]["id"]) == 36
    req = urllib.request.Request(url, headers={"X-Auth-Token": token, "OpenStack-API-Version": "compute 2.999"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req)
    assert err.value.code == 406


def test_unauthenticated_request_is_401(demo2500):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(demo2500.url("compute") + "/os-services")
    assert err.value.code == 401


def test_client_negotiates_compute_and_placement_microversions(demo2500):
    client = connect(demo2500.config().openstack)
    assert client.compute_microversion() == "2.96"
    assert client.placement_microversion() == "1.39"


def test_keystone_refusing_connections_is_one_line_error_naming_the_url(demo2500):
    cfg = demo2500.config().openstack
    demo2500.keystone_refusing(True)
    try:
        with pytest.raises(SourceError) as err:
            connect(cfg).compute_services()
        msg = str(err.value)
        assert "\n" not in msg and "connection refused" in msg
        assert demo2500.listeners["identity"].base in msg and "stacktop-demo" in msg
    finally:
        demo2500.keystone_refusing(False)
    assert connect(cfg).compute_services()


def test_ten_thousand_instances_are_served():
    demo = start_demo(instances=10_000, hosts=500, queues=2000, churn=0, storyline=False, manual=True,
                      start=START)
    try:
        client = connect(demo.config().openstack)
        demo.stats.reset()
        rows = client.servers()
        assert len({r["id"] for r in rows}) == 10_000
        assert len(_server_requests(demo)) == 11
        hosts = {r["OS-EXT-SRV-ATTR:host"] for r in rows}
        assert len(hosts) == 499  # every enabled host (compute-004 is disabled for maintenance)
    finally:
        demo.stop()


def _get(demo, service: str, path: str) -> dict:
    token = demo.auth.issue()
    base = demo.listeners[service].base
    req = urllib.request.Request(base + path, headers={"X-Auth-Token": token,
                                                       "OpenStack-API-Version": "compute 2.96"})
    with urllib.request.urlopen(req) as resp:
        return json.load(resp)


def test_date_header_is_sim_time(demo2500):
    """Collectors age heartbeats by the API's Date header: it must follow the sim clock, not the wall."""
    from email.utils import parsedate_to_datetime

    demo2500.advance(3600)
    token = demo2500.auth.issue()
    req = urllib.request.Request(demo2500.url("compute") + "/os-services", headers={"X-Auth-Token": token})
    with urllib.request.urlopen(req) as resp:
        date = parsedate_to_datetime(resp.headers["Date"]).timestamp()
    assert abs(date - (START + 3600)) <= 1


def test_filtered_listing_is_the_full_list_filtered_in_nova_order(demo2500):
    """The simulator sorts only a filter's matches (the dashboard's first read sends ~40 filtered listings):
    the answer must be the full, ordered list with the filter applied, page by page."""
    engine = demo2500.engine
    with engine.lock:
        for k in range(30):  # same-second builds too: the id breaks created_at ties
            engine.boot(f"probe-{k}", engine.projects[k % 2], "m1.small", durations=(50, 50, 50, 50))
        states = ["rebooting", "migrating", "rebooting"]
        for k, sid in enumerate(engine.order_desc()[100:160]):
            engine.instances[sid].task_state = states[k % 3]
    everything = _get(demo2500, "compute", "/v2.1/servers/detail?all_tenants=1&limit=1000")["servers"]
    for _page in (2, 3):
        marker = everything[-1]["id"]
        everything += _get(demo2500, "compute",
                           f"/v2.1/servers/detail?all_tenants=1&limit=1000&marker={marker}")["servers"]
    assert len(everything) == 2530
    for query, keep in (("task_state=rebooting", lambda r: r["OS-EXT-STS:task_state"] == "rebooting"),
                        ("status=build", lambda r: r["status"] == "BUILD"),
                        ("task_state=scheduling", lambda r: r["OS-EXT-STS:task_state"] == "scheduling")):
        expected = [r["id"] for r in everything if keep(r)]
        assert len(expected) >= 20, query
        got = _get(demo2500, "compute", f"/v2.1/servers/detail?all_tenants=1&limit=1000&{query}")["servers"]
        assert [r["id"] for r in got] == expected, query
        first = _get(demo2500, "compute", f"/v2.1/servers/detail?all_tenants=1&limit=7&{query}")
        rest = _get(demo2500, "compute", f"/v2.1/servers/detail?all_tenants=1&limit=1000&{query}"
                                         f"&marker={first['servers'][-1]['id']}")
        assert [r["id"] for r in first["servers"] + rest["servers"]] == expected, query


def test_hypervisors_page_at_max_limit_with_a_next_link_and_the_client_follows_it():
    """nova pages os-hypervisors at [api] max_limit (1000) from 2.33, with a next link whenever a page is full,
    asked-for limit or not: 1,500 hosts are 1,000 + 500, and every reader sees all 1,500."""
    demo = start_demo(instances=300, hosts=1500, queues=20, churn=0, storyline=False, manual=True, start=START)
    try:
        first = _get(demo, "compute", "/v2.1/os-hypervisors/detail")
        assert len(first["hypervisors"]) == 1000
        href = first["hypervisors_links"][0]["href"]
        assert f"marker={first['hypervisors'][-1]['id']}" in href and "limit" not in href
        client = connect(demo.config().openstack)
        demo.stats.reset()
        listed = client.hypervisors(with_servers=True)
        assert len({h["id"] for h in listed}) == 1500
        assert len(demo.stats.matching("compute", "/v2.1/os-hypervisors/detail")) == 2
    finally:
        demo.stop()


def test_a_hypervisor_pattern_search_is_not_paged(demo2500):
    body = _get(demo2500, "compute", "/v2.1/os-hypervisors/detail?hypervisor_hostname_pattern=compute")
    assert len(body["hypervisors"]) == 10 and "hypervisors_links" not in body
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(demo2500, "compute", "/v2.1/os-hypervisors/detail?hypervisor_hostname_pattern=compute&limit=5")
    assert err.value.code == 400
