"""wsrep rows -> node fields: value forms seen on MariaDB 10.11 / galera 26.4, and the whitelist."""

from __future__ import annotations

from tui.collectors.galera_parse import flow_control_sent, node_fields, rows_to_dict, to_bool, to_int
from tui.models.galera import NON_PRIMARY_CONF_ID, GaleraNode

STATUS = [
    ("wsrep_cluster_status", "non-Primary"), ("wsrep_local_state_comment", "Initialized"), ("wsrep_ready", "OFF"),
    ("wsrep_connected", "ON"), ("wsrep_cluster_size", "1"), ("wsrep_cluster_conf_id", "18446744073709551615"),
    ("wsrep_cluster_state_uuid", "3ed5d036-ee3b-11f1-a091-0ad27cc1aae1"), ("wsrep_flow_control_active", "false"),
    ("wsrep_flow_control_paused_ns", "1234567"), ("wsrep_flow_control_sent", "3"),
    ("wsrep_local_recv_queue_avg", "0.2"), ("wsrep_local_recv_queue", "0"), ("wsrep_evs_delayed", ""),
    ("WSREP_LAST_COMMITTED", "42"),
]
VARIABLES = [("wsrep_node_name", "node1"), ("wsrep_desync", "OFF"), ("wsrep_sst_auth", "********"),
             ("wsrep_provider_options", "socket.ssl_key = /secret; gcache.size = 16M")]


def test_measured_non_primary_node() -> None:
    fields = node_fields(rows_to_dict(STATUS), rows_to_dict(VARIABLES))
    node = GaleraNode(address="127.0.0.1:3311", reachable=True, **fields)
    assert node.cluster_status == "non-Primary" and node.ready is False and node.connected is True
    assert node.conf_id == NON_PRIMARY_CONF_ID and node.cluster_size == 1
    assert node.flow_control_active is False and node.flow_control_paused_ns == 1234567
    assert node.recv_queue_avg == 0.2 and node.last_committed == 42
    assert node.quorum_lost and not node.primary
    assert node.label == "node1 (127.0.0.1:3311)"
    assert flow_control_sent(rows_to_dict(STATUS)) == 3


def test_secrets_and_unknown_variables_are_not_kept() -> None:
    fields = node_fields(rows_to_dict(STATUS), rows_to_dict(VARIABLES))
    text = repr(fields)
    assert "********" not in text and "ssl_key" not in text and "gcache" not in text


def test_missing_values_are_unknown_not_zero() -> None:
    fields = node_fields({}, {})
    assert all(v is None for v in fields.values())
    assert to_int("") is None and to_int("x") is None and to_int("3.0") == 3
    assert to_bool("true") is True and to_bool("ON") is True and to_bool("0") is False and to_bool("?") is None


def test_bytes_rows() -> None:
    assert rows_to_dict([(b"wsrep_ready", b"ON"), (None, "x"), ("short",)]) == {"wsrep_ready": "ON"}
