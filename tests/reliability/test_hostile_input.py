"""Hostile input: arbitrary JSON shapes (and SQL rows) fed to every payload parser. Each returns a value or
raises SourceError (a handled, one-line error); nothing else may escape. Then the same shapes go through the
real collectors as a simulated API's answer, and the runner must turn them into a readable error or data."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tui.collectors import galera_parse, rabbitmq_payload
from tui.collectors import instances as inst
from tui.collectors import services as svc
from tui.errors import SourceError
from tui.openstack import errors as oserrors
from tui.openstack import paging
from tui.openstack.services_reads import parse_http_date

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
KEYS = st.sampled_from([
    "id", "name", "vhost", "messages", "consumers", "arguments", "idle_since", "running", "mem_alarm", "partitions",
    "status", "state", "updated_at", "host", "binary", "heartbeat_timestamp", "alive", "admin_state_up",
    "OS-EXT-STS:task_state", "OS-EXT-SRV-ATTR:host", "fault", "flavor", "os-extended-volumes:volumes_attached",
    "updated", "created", "events", "fixed_ips", "attachments", "server_id", "x-expires", "href", "rel",
    "servers_links", "error", "errors", "NeutronError", "message", "detail", "type", "endpoints", "url",
    "alarms", "resource", "node", "running_nodes", "partitions", "code", "start_time", "request_id",
]) | st.text(max_size=8)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12)
JSON = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=6),
                    max_leaves=25)
OBJ = st.dictionaries(KEYS, JSON, max_size=8)
# derandomized: CI sees the same examples every run; no explain phase (it costs minutes on a failure)
FAST = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
                suppress_health_check=[HealthCheck.too_slow])


def survives(fn: Any, *args: Any) -> None:
    with contextlib.suppress(SourceError):
        fn(*args)


@FAST
@given(JSON)
def test_rabbitmq_payload_parsers(payload: Any) -> None:
    survives(rabbitmq_payload.parse_queues, payload if isinstance(payload, list) else [payload])
    survives(rabbitmq_payload.parse_alarms, payload)
    if isinstance(payload, dict):
        survives(rabbitmq_payload.parse_queue, payload)
        survives(rabbitmq_payload.parse_node, payload)
        survives(rabbitmq_payload.parse_cluster_status, payload)


@FAST
@given(st.lists(st.tuples(SCALARS | st.binary(max_size=6), SCALARS | st.binary(max_size=6)) | JSON, max_size=8),
       st.dictionaries(st.text(max_size=30), st.text(max_size=10), max_size=8))
def test_galera_rows_and_fields(rows: Any, variables: dict[str, str]) -> None:
    status = galera_parse.rows_to_dict(rows)
    fields = galera_parse.node_fields(status, variables)
    assert isinstance(fields, dict)
    galera_parse.flow_control_sent(status)


@FAST
@given(OBJ, JSON)
def test_services_parsers(raw: dict[str, Any], answers: Any) -> None:
    for parse in svc.PARSERS.values():
        survives(parse, raw, NOW)
    # (endpoint_checks reads rows stacktop builds itself: client.endpoint_versions, not an API answer)
    survives(svc.catalog_types, answers if isinstance(answers, list) else [answers])
    survives(svc.parse_time, raw.get("updated_at"))


@FAST
@given(OBJ, JSON)
def test_instances_parsers(raw: dict[str, Any], other: Any) -> None:
    rows = other if isinstance(other, list) else [other]
    survives(inst.parse_server, raw)
    survives(inst.parse_fault, other)
    survives(inst.parse_host_health, rows, rows)
    survives(inst.parse_actions, rows)
    survives(inst.parse_ports, rows)
    survives(inst.parse_volume, raw, "sid", None)
    index = inst.ServerIndex()
    survives(index.replace_all, rows, NOW)
    survives(index.merge, rows, NOW)


@FAST
@given(JSON, st.binary(max_size=40) | st.text(max_size=40))
def test_openstack_error_and_paging_helpers(body: Any, raw: Any) -> None:
    survives(oserrors.api_message, raw)
    import json as _json

    survives(oserrors.api_message, _json.dumps(body))
    if isinstance(body, dict):
        survives(paging.next_marker, body, "servers_links")
    survives(parse_http_date, raw if isinstance(raw, str) else None)
