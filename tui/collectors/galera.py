"""Galera source: every configured node read over its own persistent connection, concurrently.

Per node and poll: `SHOW GLOBAL STATUS LIKE 'wsrep%'` and `SHOW GLOBAL VARIABLES LIKE 'wsrep%'`, through
tui.collectors.galera_sql.run_query, the gate that refuses anything but SHOW and SELECT. A node that does not
answer becomes a row with its error; the poll fails (SourceError) only when no node answers.

The connector is a seam (galera_sql): `connector(address, user, password, timeout)` returns an object with
`query(sql)` and `close()`; pymysql by default, a fake in the demo's simulator. A broken connection is reopened
once in the same poll, then failed connects back off (1 s, 2 s, 4 s ... max_backoff_s); node timeouts are short
(0.4 x timeout) so a black-holed node cannot hold the poll past the runner's timeout, and a larger
[galera] timeout gives slow nodes more time. A node's whole read has a deadline too (0.8 x timeout, through
tui.deadline.guard): a node that trickles its greeting or answer has its socket shut down then.

Arbitrators (garbd: a group member without SQL) are never polled: their presence is what the data nodes report
(wsrep_cluster_size, and their empty entry in wsrep_incoming_addresses); they count in expected_size.

History kept here so the rules stay pure (tui.rules.quorum): flow-control counters per node (-> paused share and
pause requests since the last poll), the last few recv queue lengths, and how many polls in a row the nodes
disagreed on conf_id / state_uuid. It restarts when a node's connection is reopened.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tui import deadline
from tui.collectors.base import BaseCollector, BuildContext, Collector
from tui.collectors.galera_parse import flow_control_sent, node_fields, rows_to_dict
from tui.collectors.galera_sql import (
    STATUS_SQL,
    VARIABLES_SQL,
    Connection,
    Connector,
    PrivilegeMissing,
    account_refused,
    describe_error,
    privilege_missing,
    pymysql_connector,
    run_query,
    tls_context,
)
from tui.config import Config
from tui.errors import SourceError
from tui.models.finding import Finding
from tui.models.galera import GaleraNode, GaleraSnapshot
from tui.rules.quorum import DEFAULT_THRESHOLDS, GaleraThresholds, disagreement, galera_findings
from tui.tlserror import ca_file_problem

RECV_HISTORY = 5


@dataclass
class _NodeState:
    address: str
    conn: Connection | None = None
    failures: int = 0
    retry_at: float = 0.0
    error: str | None = None
    auth_error: bool = False
    privilege_error: bool = False
    prev_paused_ns: int | None = None
    prev_sent: int | None = None
    prev_at: float | None = None
    recv_history: deque[int] = field(default_factory=lambda: deque(maxlen=RECV_HISTORY))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def forget_history(self) -> None:
        self.prev_paused_ns = self.prev_sent = self.prev_at = None
        self.recv_history.clear()


class GaleraCollector(BaseCollector):
    name = "galera"

    def __init__(
        self,
        nodes: Sequence[str],
        user: str = "root",
        password: str | None = None,
        *,
        expected_size: int | None = None,
        arbitrators: Sequence[str] = (),
        interval: float = 5.0,
        timeout: float = 5.0,
        connector: Connector | None = None,
        thresholds: GaleraThresholds = DEFAULT_THRESHOLDS,
        max_backoff_s: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if not nodes:
            raise ValueError("GaleraCollector needs at least one node")
        self.interval = interval
        self.timeout = timeout
        self.user = user
        self._password = password
        self.arbitrators = tuple(arbitrators)
        self.expected_size = expected_size if expected_size is not None else len(nodes) + len(self.arbitrators)
        self.connector = connector or pymysql_connector()
        self.thresholds = thresholds
        self.max_backoff_s = max_backoff_s
        # a broken kept connection is retried once in the same poll: two node timeouts must fit in one poll
        self.node_timeout = max(0.4, timeout * 0.4)
        # a node's whole read (connect, login, both queries, the one retry): past it the socket is shut down, so
        # a node that trickles its answer (no per-read timeout fires) is cut off inside the runner's timeout
        self.node_deadline = 2 * self.node_timeout
        self._closed = False
        self._monotonic = monotonic
        self._wall = wall
        self._states = [_NodeState(address) for address in nodes]
        self._disagreement_polls = 0

    @property
    def timeout_hint(self) -> str:
        return f"no Galera node answered in time ({', '.join(self.nodes)}; raise [galera] timeout if they are " \
               "just slow)"

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(s.address for s in self._states)

    # ---------------------------------------------------------------------------------- blocking, per node
    def _connect(self, st: _NodeState) -> Connection:
        try:
            conn = self.connector(st.address, self.user, self._password, self.node_timeout)
        except Exception as exc:
            refused = account_refused(exc, "log in", self.user)
            if refused is not None:
                raise refused from None
            raise
        st.conn = conn
        st.forget_history()
        return conn

    def _drop(self, st: _NodeState) -> None:
        if st.conn is not None:
            with contextlib.suppress(Exception):
                st.conn.close()
        st.conn = None

    def _fail(self, st: _NodeState, exc: BaseException) -> GaleraNode:
        self._drop(st)
        st.error, st.auth_error = describe_error(exc)
        st.privilege_error = isinstance(exc, PrivilegeMissing)
        st.failures += 1
        st.retry_at = self._monotonic() + min(self.max_backoff_s, 2.0 ** (st.failures - 1))
        st.forget_history()
        return GaleraNode(address=st.address, reachable=False, error=st.error, auth_error=st.auth_error,
                          privilege_error=st.privilege_error)

    def _query(self, conn: Connection, sql: str) -> list[tuple[Any, ...]]:
        """run_query; a statement refused for a missing privilege raises PrivilegeMissing naming the GRANT."""
        try:
            return run_query(conn, sql)
        except Exception as exc:
            missing = privilege_missing(exc, sql, self.user)
            if missing is not None:
                raise missing from None
            raise

    def _read(self, st: _NodeState, conn: Connection) -> tuple[dict[str, str], dict[str, str], float]:
        t0 = self._monotonic()
        status = rows_to_dict(self._query(conn, STATUS_SQL))
        variables = rows_to_dict(self._query(conn, VARIABLES_SQL))
        return status, variables, self._monotonic() - t0

    def _poll_node(self, st: _NodeState) -> GaleraNode:
        if not st.lock.acquire(blocking=False):
            return GaleraNode(address=st.address, reachable=False,
                              error=f"previous query still running (no answer within {self.node_timeout:g}s)")
        try:
            if st.conn is None and st.failures and self._monotonic() < st.retry_at:
                return GaleraNode(address=st.address, reachable=False, error=st.error, auth_error=st.auth_error,
                                  privilege_error=st.privilege_error)
            with deadline.guard(self.node_deadline) as fired:
                try:
                    if st.conn is not None:
                        try:
                            status, variables, took = self._read(st, st.conn)
                        except Exception:
                            if fired:
                                raise
                            # the kept connection broke (node restarted, idle timeout): one fresh try right away
                            self._drop(st)
                            status, variables, took = self._read(st, self._connect(st))
                    else:
                        status, variables, took = self._read(st, self._connect(st))
                except Exception as exc:
                    # the watchdog shut the socket: the error says "lost connection", the cause is time (a
                    # ValueError: our own one-line description, shown as it is)
                    late = ValueError(f"timed out: no complete answer within {self.node_deadline:g}s (the node "
                                      "answers too slowly or trickles) - raise [galera] timeout if it is just slow")
                    return self._fail(st, late if fired else exc)
            if "wsrep_cluster_status" not in status:  # garbage, or a server without Galera (wsrep_on=OFF)
                return self._fail(st, ValueError(f"{st.address} answered SHOW GLOBAL STATUS without "
                                                 "wsrep_cluster_status: not a Galera node (wsrep_on=OFF?) - check "
                                                 "[galera] nodes"))
            st.failures, st.error, st.auth_error, st.privilege_error = 0, None, False, False
            return self._node(st, status, variables, took)
        finally:
            if self._closed:  # the collector was closed while this read ran: nothing may stay open
                self._drop(st)
            st.lock.release()

    def _node(self, st: _NodeState, status: dict[str, str], variables: dict[str, str], took: float) -> GaleraNode:
        fields: dict[str, Any] = node_fields(status, variables)
        now = self._monotonic()
        paused, sent = fields["flow_control_paused_ns"], flow_control_sent(status)
        share = interval = sent_delta = None
        if st.prev_at is not None and now > st.prev_at:
            interval = now - st.prev_at
            if paused is not None and st.prev_paused_ns is not None and paused >= st.prev_paused_ns:
                share = min(1.0, (paused - st.prev_paused_ns) / (interval * 1e9))
            if sent is not None and st.prev_sent is not None and sent >= st.prev_sent:
                sent_delta = sent - st.prev_sent
        st.prev_paused_ns, st.prev_sent, st.prev_at = paused, sent, now
        if fields["recv_queue"] is not None:
            st.recv_history.append(fields["recv_queue"])
        return GaleraNode(
            address=st.address, reachable=True, **fields,
            flow_control_paused_share=share, flow_control_interval_s=interval,
            flow_control_sent_delta=sent_delta, recv_queue_history=tuple(st.recv_history),
            query_ms=round(took * 1000, 2),
        )

    # ------------------------------------------------------------------------------------------- protocol
    async def collect(self) -> GaleraSnapshot:
        self._closed = False  # read again after a close: connections are kept again
        nodes = tuple(await asyncio.gather(*(asyncio.to_thread(self._poll_node, st) for st in self._states)))
        if not any(n.reachable for n in nodes):
            by_reason: dict[str | None, list[str]] = {}
            for n in nodes:  # nodes failing alike (a shared certificate, a wrong password) share one line
                by_reason.setdefault(n.error, []).append(n.address)
            reasons = "; ".join(f"{', '.join(addresses)}: {error}" for error, addresses in by_reason.items())
            if all((n.error or "").startswith(("TLS certificate", "[galera] cacert", "timed out"))
                   or n.privilege_error for n in nodes):  # each carries its own fix
                raise SourceError(f"no Galera node answers ({reasons})")
            raise SourceError(f"no Galera node answers ({reasons}) - check [galera] nodes, user and password")
        self._disagreement_polls = self._disagreement_polls + 1 if disagreement(nodes) else 0
        return GaleraSnapshot(nodes=nodes, expected_size=self.expected_size, taken_at=self._wall(),
                              interval_s=self.interval, disagreement_polls=self._disagreement_polls,
                              arbitrators=self.arbitrators)

    def findings(self, snapshot: GaleraSnapshot, now: datetime) -> list[Finding]:
        return galera_findings(snapshot, now, self.thresholds)

    def _close_all(self) -> None:
        """Close every idle connection now; a node still reading is not waited for: its read ends at its
        deadline (the watchdog shuts its socket) and closes the connection then."""
        self._closed = True
        for st in self._states:
            if st.lock.acquire(blocking=False):
                try:
                    self._drop(st)
                finally:
                    st.lock.release()

    async def aclose(self) -> None:
        await asyncio.to_thread(self._close_all)


def unusable_ca(line: str) -> Connector:
    """A Connector for a CA bundle OpenSSL cannot load: every connect fails with line (never plaintext)."""

    def connect(address: str, user: str, password: str | None, timeout: float) -> Any:
        raise ValueError(line)

    return connect


def build(config: Config, context: BuildContext | None = None, *, connector: Connector | None = None
          ) -> list[Collector]:
    ga = config.galera
    if connector is None and context is not None:
        connector = context.galera_connector
    if not ga.configured:
        return []
    if connector is None and ga.uses_tls:
        problem = ca_file_problem(ga.cacert) if ga.cacert else None
        if problem:
            connector = unusable_ca(f"[galera] cacert {ga.cacert} {problem} - point it at the PEM bundle of the CA "
                                    "that signed the nodes' certificates")
        else:
            connector = pymysql_connector(ssl=tls_context(ga.cacert, ga.insecure), cafile=ga.cacert)
    clock = context.clock if context is not None else None
    wall = (lambda: clock().timestamp()) if clock is not None else time.time
    return [GaleraCollector(ga.nodes, ga.user, ga.password.value, expected_size=ga.expected_size,
                            arbitrators=ga.arbitrators, interval=ga.interval, timeout=ga.timeout, connector=connector,
                            wall=wall)]
