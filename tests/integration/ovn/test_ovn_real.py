"""The ML2/OVN profile of the real test bed (testcloud/ovn.sh): OVN 23.03 daemons with two chassis and a
neutron-server with the OVN mechanism driver, read by stacktop through the shared Keystone as region RegionOVN.
stacktop lists the OVN agents as neutron reports them, speaks of ovn-controller (never of an "L2 agent"), and a
killed ovn-controller is one finding naming it as the cause although neutron reports its host's OVN Neutron
agent dead with it; once the controller runs again the finding clears."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.testbed.ovn import NEUTRON_URL, REGION, OvnTestbed, run_snapshot
from tests.testbed.wait import wait_for

pytestmark = pytest.mark.integration

# neutron's agent_down_time in the profile is 20 s; neutron bumps nb_cfg at most every 10 s while the agents
# are listed: a dead controller shows within ~30 s, a loaded machine gets the rest
DEAD_WITHIN = 120
OVN_AGENTS = {("compute-01", "ovn-controller", "OVN Controller agent"),
              ("compute-02", "ovn-controller", "OVN Controller agent"),
              ("compute-01", "neutron-ovn-metadata-agent", "OVN Metadata agent"),
              ("compute-02", "neutron-ovn-agent", "OVN Neutron agent")}


def snapshot(config: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(run_snapshot(config, "--json").stdout)
    return report


def agents(report: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """(host, binary, agent_type) -> state of every network agent stacktop read."""
    return {(r["host"], r["binary"], r["agent_type"]): r["state"]
            for r in report["data"]["services"]["network"]["rows"]}


def agent_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["kind"].startswith("neutron.")]


@pytest.fixture
def config(tmp_path: Path, ovn_testbed: OvnTestbed) -> Path:
    return ovn_testbed.config(tmp_path / "ovn.toml")


def all_alive(config: Path) -> dict[str, Any] | None:
    report = snapshot(config)
    ok = (report["sources"]["services"]["ok"] and agents(report) == dict.fromkeys(OVN_AGENTS, "up")
          and not agent_findings(report))
    return report if ok else None


def test_the_ovn_agents_are_listed_alive_through_region_ovn(config: Path) -> None:
    report = wait_for(lambda: all_alive(config), timeout=DEAD_WITHIN, what="the 4 OVN agents alive, no finding")
    services = report["data"]["services"]
    assert services["keystone"]["ok"] and services["keystone"]["cloud"] == "stacktop-testcloud-ovn"
    network = [c for c in services["catalog"] if c["service_type"] == "network"]
    assert [(c["url"].rstrip("/"), c["region"], c["ok"]) for c in network] == [(NEUTRON_URL, REGION, True)]
    # nova, placement and cinder of RegionOVN are the shared cloud's, read with the same token
    assert {r["binary"] for r in services["compute"]["rows"]} >= {"nova-compute", "nova-scheduler"}
    assert report["sources"]["placement"]["ok"] and report["sources"]["instances"]["ok"], report["sources"]
    plain = run_snapshot(config).stdout
    for text in (json.dumps(report), plain):
        assert "L2 agent" not in text and "Open vSwitch agent" not in text


@pytest.fixture
def dead_controller(ovn_testbed: OvnTestbed) -> Iterator[OvnTestbed]:
    """compute-02's ovn-controller SIGKILLed; the profile restored whatever the test does."""
    ovn_testbed.kill_controller("compute-02")
    try:
        yield ovn_testbed
    finally:
        ovn_testbed.restore()


def test_a_killed_ovn_controller_is_one_finding_naming_it_and_clears_once_it_runs(
        config: Path, dead_controller: OvnTestbed) -> None:
    def controller_finding() -> tuple[dict[str, Any], dict[str, Any]] | None:
        report = snapshot(config)
        found = [f for f in agent_findings(report) if f["subject"] == "ovn-controller@compute-02"]
        # neutron reports the OVN Neutron agent dead with its controller: wait for both, to see them folded
        if found and agents(report)[("compute-02", "neutron-ovn-agent", "OVN Neutron agent")] == "down":
            return report, found[0]
        return None

    report, finding = wait_for(controller_finding, timeout=DEAD_WITHIN,
                               what="a neutron.agent_down finding about ovn-controller@compute-02")
    assert finding["kind"] == "neutron.agent_down" and finding["severity"] == "critical", finding
    assert finding["summary"].startswith("ovn-controller on compute-02 is down"), finding["summary"]
    assert "the cause is ovn-controller" in finding["summary"], finding["summary"]
    assert finding["evidence"]["follow_the_controller"] == ["neutron-ovn-agent"], finding["evidence"]
    assert "southbound" in finding["next_step"], finding["next_step"]
    # one finding, not one per dead agent; compute-01 untouched
    assert [f["subject"] for f in agent_findings(report)] == ["ovn-controller@compute-02"], agent_findings(report)
    states = agents(report)
    assert states[("compute-01", "ovn-controller", "OVN Controller agent")] == "up", states
    assert states[("compute-02", "ovn-controller", "OVN Controller agent")] == "down", states
    assert "L2 agent" not in json.dumps(report)
    plain = run_snapshot(config).stdout
    assert "ovn-controller on compute-02 is down" in plain and "L2 agent" not in plain, plain

    dead_controller.restore()
    wait_for(lambda: all_alive(config), timeout=DEAD_WITHIN, what="the finding cleared, the 4 OVN agents alive")
