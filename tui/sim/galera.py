"""Simulated Galera node-status source behind the collector's connector seam.

`connector(address, user, password, timeout) -> conn` with `conn.query(sql) -> list[tuple]` and
`conn.close()`, like the pymysql-backed one. Errors are pymysql's own exception classes with the real
MariaDB error numbers (2003 refused, 2013 lost, 1045 denied, 1047 WSREP not ready), so the collector's
error handling is exercised unchanged. Values follow a 3-node MariaDB 10.11 Galera cluster (tests/contract).
With engine.galera_arbitrators (two data nodes + garbd, `start_demo(galera_arbitrator=True)`) the data nodes
count garbd in wsrep_cluster_size and list it as an empty entry of wsrep_incoming_addresses, as the real
2 + garbd cluster does (tests/contract).
"""

from __future__ import annotations

import re
from typing import Any

from tui.sim.engine import Engine
from tui.sim.model import GaleraNode

NON_PRIMARY_CONF_ID = "18446744073709551615"
PROVIDER_VERSION = "26.4.16(r7dce5149)"


def _errors() -> tuple[type[Exception], type[Exception]]:
    try:
        import pymysql.err as err  # lazy: only when the sim's Galera is used

        return err.OperationalError, err.ProgrammingError
    except ImportError:  # pragma: no cover - pymysql is a declared dependency
        class OperationalError(Exception):
            pass

        class ProgrammingError(Exception):
            pass

        return OperationalError, ProgrammingError


def wsrep_status(e: Engine, node: GaleraNode, t: float) -> dict[str, str]:
    """Every wsrep_% status variable of `node` at sim time t, as strings (as SHOW STATUS returns them)."""
    up = [n for n in e.galera_nodes if n.reachable]
    uptime = max(1.0, t - e.galera_started)
    committed = 1_400_000 + int(uptime * 40)
    paused_ns = int(uptime * 2_000_000)  # ~0.2 % paused
    state, num = {"synced": ("Synced", 4), "joined": ("Joined", 3), "isolated": ("Initialized", 0)}.get(
        node.state, ("Synced", 4))
    primary = node.state != "isolated"
    arbitrators = len(e.galera_arbitrators) if primary and e.galera_arbitrators_up else 0
    size = len(up) + arbitrators if primary else 1
    addresses = ",".join([n.address for n in (up if primary else [node])] + [""] * arbitrators)
    return {
        "wsrep_local_state_uuid": e.galera_uuid, "wsrep_protocol_version": "10",
        "wsrep_last_committed": str(committed), "wsrep_replicated": str(committed // 3),
        "wsrep_replicated_bytes": str(committed * 410), "wsrep_repl_keys": str(committed),
        "wsrep_repl_keys_bytes": str(committed * 48), "wsrep_repl_data_bytes": str(committed * 300),
        "wsrep_repl_other_bytes": "0", "wsrep_received": str(committed - committed // 3),
        "wsrep_received_bytes": str(committed * 800), "wsrep_local_commits": str(committed // 3),
        "wsrep_local_cert_failures": "0", "wsrep_local_replays": "0", "wsrep_local_send_queue": "0",
        "wsrep_local_send_queue_max": "2", "wsrep_local_send_queue_min": "0",
        "wsrep_local_send_queue_avg": "0.000421", "wsrep_local_recv_queue": "0",
        "wsrep_local_recv_queue_max": "3", "wsrep_local_recv_queue_min": "0",
        "wsrep_local_recv_queue_avg": "0.00218", "wsrep_local_cached_downto": str(committed - 90_000),
        "wsrep_flow_control_paused_ns": str(paused_ns), "wsrep_flow_control_paused": "0.002",
        "wsrep_flow_control_sent": "0", "wsrep_flow_control_recv": "12",
        "wsrep_flow_control_active": "false", "wsrep_flow_control_requested": "false",
        "wsrep_cert_deps_distance": "18.4", "wsrep_apply_oooe": "0.01", "wsrep_apply_oool": "0",
        "wsrep_apply_window": "1.02", "wsrep_commit_oooe": "0", "wsrep_commit_oool": "0",
        "wsrep_commit_window": "1.0", "wsrep_local_state": str(num), "wsrep_local_state_comment": state,
        "wsrep_cert_index_size": "41", "wsrep_causal_reads": "0", "wsrep_cert_interval": "0.03",
        "wsrep_open_transactions": "0", "wsrep_open_connections": "0",
        "wsrep_incoming_addresses": addresses, "wsrep_cluster_weight": str(size if primary else 0),
        "wsrep_desync_count": "0", "wsrep_evs_delayed": "", "wsrep_evs_evict_list": "",
        "wsrep_evs_repl_latency": "0.000213/0.000401/0.00102/0.00011/24", "wsrep_evs_state": "OPERATIONAL",
        "wsrep_gcomm_uuid": f"{node.index:08x}-sim0-11ee-8000-{node.index:012x}", "wsrep_gmcast_segment": "0",
        "wsrep_applier_thread_count": "4", "wsrep_cluster_capabilities": "",
        "wsrep_cluster_conf_id": str(e.galera_conf_id) if primary else NON_PRIMARY_CONF_ID,
        "wsrep_cluster_size": str(size), "wsrep_cluster_state_uuid": e.galera_uuid,
        "wsrep_cluster_status": "Primary" if primary else "non-Primary", "wsrep_connected": "ON",
        "wsrep_local_bf_aborts": "0", "wsrep_local_index": str(node.index - 1),
        "wsrep_provider_capabilities": ":MULTI_MASTER:CERTIFICATION:PARALLEL_APPLYING:TRX_REPLAY:ISOLATION:"
                                       "PAUSE:CAUSAL_READS:INCREMENTAL_WRITESET:UNORDERED:PREORDERED:"
                                       "STREAMING:NBO:",
        "wsrep_provider_name": "Galera", "wsrep_provider_vendor": "Codership Oy <info@codership.com>",
        "wsrep_provider_version": PROVIDER_VERSION, "wsrep_ready": "ON" if primary else "OFF",
        "wsrep_rollbacker_thread_count": "1", "wsrep_thread_count": "5", "wsrep_apply_waits": "0",
        "wsrep_checkpoint_position": f"{e.galera_uuid}:{committed}", "wsrep_protocol_application": "4",
        "wsrep_protocol_gcs": "5", "wsrep_protocol_replicator": "11",
        "wsrep_se_checkpoint": f"{e.galera_uuid}:{committed} 0-1-{committed}",
    }


def wsrep_variables(e: Engine, node: GaleraNode) -> dict[str, str]:
    return {
        "wsrep_on": "ON", "wsrep_cluster_name": "openstack",
        "wsrep_cluster_address": "gcomm://" + ",".join([n.name for n in e.galera_nodes]
                                                       + [a.rsplit(":", 1)[0] for a in e.galera_arbitrators]),
        "wsrep_node_name": node.name, "wsrep_node_address": node.name, "wsrep_sst_method": "mariabackup",
        "wsrep_provider": "/usr/lib/galera/libgalera_smm.so", "wsrep_slave_threads": "4",
        "wsrep_dirty_reads": "OFF", "wsrep_sync_wait": "0", "wsrep_osu_method": "TOI",
        "wsrep_provider_options": "gcache.size = 1G; gcs.fc_limit = 16; evs.suspect_timeout = PT5S",
        "version": "10.11.6-MariaDB-log", "hostname": node.name, "read_only": "OFF",
        # the rest of MariaDB 10.11's wsrep variables, at their defaults (as the real test cluster shows)
        "wsrep_allowlist": "", "wsrep_auto_increment_control": "ON", "wsrep_causal_reads": "OFF",
        "wsrep_certification_rules": "strict", "wsrep_certify_nonpk": "ON", "wsrep_convert_lock_to_trx": "OFF",
        "wsrep_data_home_dir": "/var/lib/mysql/", "wsrep_dbug_option": "", "wsrep_debug": "NONE",
        "wsrep_desync": "OFF", "wsrep_drupal_282555_workaround": "OFF", "wsrep_forced_binlog_format": "NONE",
        "wsrep_gtid_domain_id": "0", "wsrep_gtid_mode": "OFF", "wsrep_ignore_apply_errors": "7",
        "wsrep_load_data_splitting": "OFF", "wsrep_log_conflicts": "OFF", "wsrep_max_ws_rows": "0",
        "wsrep_max_ws_size": "2147483647", "wsrep_mode": "", "wsrep_mysql_replication_bundle": "0",
        "wsrep_node_incoming_address": node.address, "wsrep_notify_cmd": "", "wsrep_patch_version": "wsrep_26.22",
        "wsrep_recover": "OFF", "wsrep_reject_queries": "NONE", "wsrep_restart_slave": "OFF",
        "wsrep_retry_autocommit": "1", "wsrep_slave_fk_checks": "ON", "wsrep_slave_uk_checks": "OFF",
        "wsrep_sr_store": "table", "wsrep_sst_auth": "********", "wsrep_sst_donor": "",
        "wsrep_sst_donor_rejects_queries": "OFF", "wsrep_sst_receive_address": "AUTO",
        "wsrep_start_position": "00000000-0000-0000-0000-000000000000:-1", "wsrep_status_file": "",
        "wsrep_trx_fragment_size": "0", "wsrep_trx_fragment_unit": "bytes",
    }


def _like(pattern: str) -> re.Pattern[str]:
    rx = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(rx, re.IGNORECASE | re.DOTALL)


_SHOW = re.compile(r"show\s+(?:global\s+|session\s+)?(status|variables)"
                   r"(?:\s+like\s+'([^']*)'|\s+where\s+variable_name\s+in\s*\(([^)]*)\))?\s*;?", re.IGNORECASE)
_IS = re.compile(r"select\s+variable_name\s*,\s*variable_value\s+from\s+information_schema\.global_(status|"
                 r"variables)(?:\s+where\s+variable_name\s+like\s+'([^']*)')?\s*;?", re.IGNORECASE)
_VAR = re.compile(r"select\s+@@(?:global\.)?(\w+)\s*;?", re.IGNORECASE)


class SimGaleraConnection:
    """One connection to one simulated node. Thread-compatible like a pymysql connection (one user)."""

    def __init__(self, engine: Engine, node: GaleraNode) -> None:
        self._e = engine
        self._node = node
        self._open = True
        self.queries = 0

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        operational, programming = _errors()
        if not self._open:
            raise operational(0, "Not connected")  # pymysql's InterfaceError-ish message
        t = self._e.clock.time()
        with self._e.lock:
            self._e.advance_to(t)
            node = self._node
            if not node.reachable:
                self._open = False
                raise operational(2013, "Lost connection to MySQL server during query")
            self.queries += 1
            text = " ".join(sql.strip().split())
            m = _SHOW.fullmatch(text)
            if m:
                data = wsrep_status(self._e, node, t) if m.group(1).lower() == "status" else \
                    wsrep_variables(self._e, node)
                if m.group(2) is not None:
                    rx = _like(m.group(2))
                    return [(k, v) for k, v in data.items() if rx.fullmatch(k)]
                if m.group(3) is not None:
                    names = {x.strip().strip("'\"").lower() for x in m.group(3).split(",")}
                    return [(k, v) for k, v in data.items() if k.lower() in names]
                return list(data.items())
            m = _IS.fullmatch(text)
            if m:
                data = wsrep_status(self._e, node, t) if m.group(1).lower() == "status" else \
                    wsrep_variables(self._e, node)
                rx = _like(m.group(2) or "%")
                return [(k.upper(), v) for k, v in data.items() if rx.fullmatch(k)]
            m = _VAR.fullmatch(text)
            if m:
                data = wsrep_variables(self._e, node)
                if m.group(1).lower() in data:
                    return [(data[m.group(1).lower()],)]
                raise programming(1193, f"Unknown system variable '{m.group(1)}'")
            if re.fullmatch(r"select\s+1\s*;?", text, re.IGNORECASE):
                return [(1,)]
            if not re.match(r"(select|show)\b", text, re.IGNORECASE):
                raise programming(1142, "the Galera simulator is read-only: only SHOW and SELECT are answered")
            if node.state == "isolated":
                raise operational(1047, "WSREP has not yet prepared node for application use")
            raise programming(1064, f"the Galera simulator does not answer: {text[:80]}")

    def close(self) -> None:
        self._open = False


class GaleraSim:
    """The connector factory for one engine."""

    def __init__(self, engine: Engine, user: str, password: str) -> None:
        self.engine = engine
        self.user = user
        self.password = password

    def connect(self, address: Any, user: str, password: str | None, timeout: float = 5.0) -> SimGaleraConnection:
        operational, _ = _errors()
        if isinstance(address, tuple):
            address = f"{address[0]}:{address[1]}"
        host = str(address).rsplit(":", 1)[0]
        node = next((n for n in self.engine.galera_nodes if n.name == host or n.address == address), None)
        if node is None:
            raise operational(2005, f"Unknown MySQL server host '{host}' (-2)")
        t = self.engine.clock.time()
        with self.engine.lock:
            self.engine.advance_to(t)
            if not node.reachable:
                raise operational(2003, f"Can't connect to MySQL server on '{host}' ([Errno 111] Connection "
                                        f"refused)")
        if user != self.user or password != self.password:
            raise operational(1045, f"Access denied for user '{user}'@'127.0.0.1' (using password: "
                                    f"{'YES' if password else 'NO'})")
        return SimGaleraConnection(self.engine, node)

    __call__ = connect
