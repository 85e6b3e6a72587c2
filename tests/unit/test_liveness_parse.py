"""Pure parts of the services collector: API payloads -> ServiceRow (ages on the API clock), catalog checks,
HTTP Date parsing. Payload shapes are the ones the test cloud answered (nova 2.96, neutron, cinder 3.0)."""

from __future__ import annotations

from datetime import UTC, datetime

from tui.collectors.services import (
    build,
    catalog_types,
    endpoint_checks,
    parse_agent,
    parse_compute_service,
    parse_time,
    parse_volume_service,
)
from tui.config import Config, OpenStackConfig
from tui.openstack.services_reads import parse_http_date

BASE = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)


def test_time_formats_of_the_three_apis() -> None:
    want = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_time("2026-01-01T12:00:00.000000") == want  # nova, cinder
    assert parse_time("2026-01-01 12:00:00") == want  # neutron heartbeat_timestamp
    assert parse_time("2026-01-01T12:00:00Z") == want
    assert parse_time("2026-01-01T13:00:00+01:00") == want
    assert parse_time(None) is None and parse_time("garbage") is None


def test_http_date() -> None:
    assert parse_http_date("Thu, 01 Jan 2026 12:00:10 GMT") == BASE
    assert parse_http_date(None) is None and parse_http_date("nonsense") is None


def test_compute_service() -> None:
    row = parse_compute_service({
        "id": "7788b800-1fb3-412d-b35d-9894554ed553", "binary": "nova-compute", "host": "compute-02",
        "zone": "nova", "status": "disabled", "state": "down", "updated_at": "2026-01-01T12:00:00.000000",
        "disabled_reason": "AUTO: Connection to libvirt lost: 1", "forced_down": False}, BASE)
    assert (row.section, row.binary, row.host, row.zone) == ("compute", "nova-compute", "compute-02", "nova")
    assert (row.status, row.state, row.forced_down) == ("disabled", "down", False)
    assert row.age_at_read_s == 10 and row.key == "compute:7788b800-1fb3-412d-b35d-9894554ed553"
    assert row.disabled_reason.startswith("AUTO:")


def test_compute_service_without_forced_down_or_timestamp() -> None:
    row = parse_compute_service({"id": 3, "binary": "nova-scheduler", "host": "ctl", "zone": "internal",
                                 "status": "enabled", "state": "up", "updated_at": None}, BASE)
    assert row.forced_down is None and row.age_at_read_s is None and row.id == "3"


def test_heartbeat_from_the_future_is_a_negative_age() -> None:
    row = parse_compute_service({"binary": "nova-compute", "host": "c", "status": "enabled", "state": "up",
                                 "updated_at": "2026-01-01T12:00:13"}, BASE)
    assert row.age_at_read_s == -3


def test_agent_maps_admin_state_and_alive() -> None:
    row = parse_agent({"id": "a1", "binary": "neutron-openvswitch-agent", "host": "compute-01",
                       "agent_type": "Open vSwitch agent", "availability_zone": None, "admin_state_up": True,
                       "alive": False, "heartbeat_timestamp": "2026-01-01 11:59:40"}, BASE)
    assert (row.section, row.status, row.state, row.age_at_read_s) == ("network", "enabled", "down", 30)
    assert row.agent_type == "Open vSwitch agent" and row.key == "network:a1"
    off = parse_agent({"id": "a2", "binary": "x", "host": "h", "admin_state_up": False, "alive": True}, BASE)
    assert (off.status, off.state) == ("disabled", "up")


def test_volume_service_key_without_id() -> None:
    row = parse_volume_service({"binary": "cinder-volume", "host": "storage-01@fake", "zone": "nova",
                                "status": "enabled", "state": "up", "updated_at": "2026-01-01T12:00:05.000000"},
                               BASE)
    assert row.key == "volume:cinder-volume@storage-01@fake" and row.age_at_read_s == 5


def test_catalog_types_canonical() -> None:
    assert catalog_types([{"type": "volumev3"}, {"type": "compute"}, {"type": "identity"}]) == {
        "block-storage", "compute", "identity"}


def test_endpoint_checks_one_per_type_newest_volume_api_first() -> None:
    checks = endpoint_checks([
        {"service_type": "volumev2", "name": "cinderv2", "url": "http://c:8776/v2", "status": None,
         "error": "connection refused", "seconds": 0.01},
        {"service_type": "volumev3", "name": "cinderv3", "url": "http://c:8776/v3", "status": 401, "seconds": 0.02},
        {"service_type": "compute", "name": "nova", "url": "http://n:8774/v2.1", "status": 503},
    ])
    assert [(c.service_type, c.name, c.ok, c.status) for c in checks] == [
        ("block-storage", "cinderv3", True, 401), ("compute", "nova", False, 503)]


def test_build_needs_a_cloud() -> None:
    assert build(Config()) == []
    (collector,) = build(Config(openstack=OpenStackConfig(cloud="prod", interval=7, timeout=12)))
    assert (collector.name, collector.interval, collector.timeout) == ("services", 7, 12)
