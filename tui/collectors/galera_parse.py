"""wsrep status/variable rows -> GaleraNode fields. Only whitelisted names are kept (wsrep_sst_auth and
wsrep_provider_options never leave this module)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def rows_to_dict(rows: Iterable[tuple[Any, ...]]) -> dict[str, str]:
    """(Variable_name, Value) rows -> {lowercased name: value as str}."""
    out: dict[str, str] = {}
    for row in rows:
        if isinstance(row, (tuple, list)) and len(row) >= 2 and row[0] is not None:  # anything else: not a row
            name = row[0].decode(errors="replace") if isinstance(row[0], bytes) else str(row[0])
            value = row[1].decode(errors="replace") if isinstance(row[1], bytes) else row[1]
            out[name.lower()] = "" if value is None else str(value)
    return out


MAX_STATUS = 2**64 - 1  # the server's status counters are 64-bit: a larger number is absurd, unknown


def to_int(value: str | None) -> int | None:
    """A status value as an integer; None (unknown) when it is not a number, not finite or beyond MAX_STATUS."""
    if value is None or value == "" or len(value) > 40:
        return None
    try:
        number = int(value)
    except ValueError:
        parsed = to_float(value)
        if parsed is None:
            return None
        number = int(parsed)
    return number if -MAX_STATUS <= number <= MAX_STATUS else None


def to_float(value: str | None) -> float | None:
    """A status value as a finite float; None (unknown) otherwise (inf, nan, 1e400)."""
    if value is None or value == "" or len(value) > 40:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def to_bool(value: str | None) -> bool | None:
    """ON/OFF, true/false (wsrep_flow_control_active says "false"), 1/0."""
    if value is None or value == "":
        return None
    v = value.strip().lower()
    if v in ("on", "true", "1", "yes"):
        return True
    if v in ("off", "false", "0", "no"):
        return False
    return None


def to_str(value: str | None) -> str | None:
    return value if value not in (None, "") else None


def arbitrators_seen(incoming_addresses: str | None) -> int | None:
    """Members without an SQL address in wsrep_incoming_addresses: garbd joins with an empty incoming address,
    so its entry is empty ("10.0.0.1:3306,10.0.0.2:3306," for two data nodes and garbd, measured on MariaDB
    10.11 / galera-4 26.4). None when the variable is missing."""
    if incoming_addresses is None:
        return None
    return sum(1 for entry in incoming_addresses.split(",") if not entry.strip())


def node_fields(status: dict[str, str], variables: dict[str, str]) -> dict[str, Any]:
    """The GaleraNode fields one node's SHOW GLOBAL STATUS / VARIABLES answer gives (history fields excluded)."""
    s, v = status.get, variables.get
    return {
        "node_name": to_str(v("wsrep_node_name")),
        "cluster_name": to_str(v("wsrep_cluster_name")),
        "desync": to_bool(v("wsrep_desync")),
        "cluster_size": to_int(s("wsrep_cluster_size")),
        "cluster_status": to_str(s("wsrep_cluster_status")),
        "state_comment": to_str(s("wsrep_local_state_comment")),
        "ready": to_bool(s("wsrep_ready")),
        "connected": to_bool(s("wsrep_connected")),
        "conf_id": to_int(s("wsrep_cluster_conf_id")),
        "state_uuid": to_str(s("wsrep_cluster_state_uuid")),
        "evs_state": to_str(s("wsrep_evs_state")),
        "last_committed": to_int(s("wsrep_last_committed")),
        "recv_queue": to_int(s("wsrep_local_recv_queue")),
        "recv_queue_avg": to_float(s("wsrep_local_recv_queue_avg")),
        "send_queue": to_int(s("wsrep_local_send_queue")),
        "send_queue_avg": to_float(s("wsrep_local_send_queue_avg")),
        "flow_control_active": to_bool(s("wsrep_flow_control_active")),
        "flow_control_requested": to_bool(s("wsrep_flow_control_requested")),
        "flow_control_paused_ns": to_int(s("wsrep_flow_control_paused_ns")),
        "incoming_addresses": to_str(s("wsrep_incoming_addresses")),
        "arbitrators_seen": arbitrators_seen(s("wsrep_incoming_addresses")),
        "provider_option_variables": ("wsrep_provider_pc_bootstrap" in variables) if variables else None,
        "provider_version": to_str(s("wsrep_provider_version")),
    }


def flow_control_sent(status: dict[str, str]) -> int | None:
    return to_int(status.get("wsrep_flow_control_sent"))
