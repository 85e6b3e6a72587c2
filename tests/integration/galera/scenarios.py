"""Galera scenario helpers for the integration tests, on a real test cluster (tests/integration/conftest.py
GaleraCluster: testcloud/galera.sh, trixie/galera11.sh or galera-arb.sh; node numbers as their verbs take them).

Each helper that changes the cluster is a context manager that undoes its change on exit (also when the test
fails) and leaves the cluster 3 x Primary/Synced. The harness writes (as root over TCP); stacktop never does.

  killed(cluster, 3)        SIGKILL node 3; on exit wait for the survivors to evict it (restarting before the
                            eviction costs ~24 s instead of ~5 s), then `galera.sh up`
  killed(cluster, 2, 3)     quorum loss on node 1; on exit `galera.sh up` (pc.bootstrap on the survivor, restart)
  desynced(cluster, 2)      SET GLOBAL wsrep_desync=ON on node 2; OFF on exit
  flow_control(cluster, lock_node=3, write_node=1)
                            LOCK TABLES stacktop_test.t WRITE held on node 3 while a thread inserts on node 1:
                            node 3's applier blocks, its receive queue fills, the cluster pauses
  reader_password_changed(cluster, 2, "x")
                            the stacktop reader's password changed on node 2 only (wsrep_on=OFF, not replicated)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from typing import Any

import pymysql

from tests.testbed.wait import wait_for
from tui.collectors.galera import GaleraCollector
from tui.models.finding import Finding
from tui.models.galera import GaleraSnapshot
from tui.rules.quorum import verdict

TEST_TABLE = "stacktop_test.t"


def connect(cluster: Any, node: int, **kwargs: Any) -> pymysql.connections.Connection:
    """A root connection (the harness account: empty password over TCP) to data node 1..N."""
    kwargs.setdefault("connect_timeout", 3)
    kwargs.setdefault("read_timeout", 10)
    return pymysql.connect(host="127.0.0.1", port=cluster.port(node), user=cluster.user, password=cluster.password,
                           ssl_disabled=True, autocommit=True, **kwargs)


def status(cluster: Any, node: int, *names: str) -> dict[str, str]:
    conn = connect(cluster, node)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS LIKE 'wsrep%'")
            rows = dict(cur.fetchall())
    finally:
        conn.close()
    return {n: rows.get(n, "") for n in names} if names else rows


def execute(cluster: Any, node: int, sql: str) -> list[tuple]:
    conn = connect(cluster, node)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())
    finally:
        conn.close()


def healthy(cluster: Any) -> bool:
    members = str(len(cluster.nodes) + len(cluster.arbitrators))
    for n in cluster.indexes:
        try:
            s = status(cluster, n, "wsrep_cluster_status", "wsrep_local_state_comment", "wsrep_ready",
                       "wsrep_cluster_size")
        except pymysql.Error:
            return False
        if (s["wsrep_cluster_status"], s["wsrep_local_state_comment"], s["wsrep_ready"],
                s["wsrep_cluster_size"]) != ("Primary", "Synced", "ON", members):
            return False
    return True


def ensure_healthy(cluster: Any) -> None:
    """Every node Primary/Synced with every member in, quickly when it already is (`up` is a no-op then)."""
    if not healthy(cluster):
        cluster.run("up")


def _evicted(cluster: Any, survivors: list[int], size: int) -> bool:
    """Every survivor sees at most `size` members (or has left the Primary component)."""
    for n in survivors:
        try:
            s = status(cluster, n, "wsrep_cluster_size", "wsrep_cluster_status")
        except pymysql.Error:
            continue
        if s["wsrep_cluster_status"] == "Primary" and int(s["wsrep_cluster_size"] or 0) > size:
            return False
    return True


@contextmanager
def killed(cluster: Any, *members: int | str) -> Iterator[None]:
    """SIGKILL data nodes (numbers) and/or the arbitrator ("garbd"); on exit wait for the eviction, then `up`."""
    survivors = [n for n in cluster.indexes if n not in members]
    size = len(survivors) + len(cluster.arbitrators) - sum(1 for m in members if m == "garbd")
    try:
        cluster.run("kill", *map(str, members))
        yield
    finally:
        with suppress(TimeoutError):
            wait_for(lambda: _evicted(cluster, survivors, size), timeout=30, interval=0.2,
                     what=f"the survivors to evict {members}")
        cluster.run("up")


@contextmanager
def desynced(cluster: Any, node: int) -> Iterator[None]:
    try:
        execute(cluster, node, "SET GLOBAL wsrep_desync=ON")
        yield
    finally:
        execute(cluster, node, "SET GLOBAL wsrep_desync=OFF")
        wait_for(lambda: status(cluster, node, "wsrep_local_state_comment")["wsrep_local_state_comment"] == "Synced",
                 timeout=30, interval=0.2, what=f"node{node} Synced after wsrep_desync=OFF")


class _Writer(threading.Thread):
    """Inserts into the test table on one node until stopped (each INSERT blocks while the cluster is paused)."""

    def __init__(self, cluster: Any, node: int) -> None:
        super().__init__(daemon=True, name=f"galera-writer-node{node}")
        self.conn = connect(cluster, node, read_timeout=60, write_timeout=60)
        self.stop_event = threading.Event()
        self.inserted = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.conn.cursor() as cur:
                while not self.stop_event.is_set():
                    cur.execute(f"INSERT INTO {TEST_TABLE} (v) VALUES ('flow-control')")
                    self.inserted += 1
        except BaseException as exc:  # reported by the test if it matters
            self.error = exc
        finally:
            with suppress(Exception):
                self.conn.close()


@contextmanager
def flow_control(cluster: Any, lock_node: int = 3, write_node: int = 1) -> Iterator[_Writer]:
    locker = connect(cluster, lock_node)
    writer: _Writer | None = None
    try:
        with locker.cursor() as cur:
            cur.execute(f"CREATE TABLE IF NOT EXISTS {TEST_TABLE} (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))")
            cur.execute(f"LOCK TABLES {TEST_TABLE} WRITE")
        writer = _Writer(cluster, write_node)
        writer.start()
        yield writer
    finally:
        if writer is not None:
            writer.stop_event.set()
        with suppress(Exception), locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
        locker.close()
        if writer is not None:
            writer.join(30)
        wait_for(lambda: all(status(cluster, n, "wsrep_flow_control_active")["wsrep_flow_control_active"] == "false"
                             for n in cluster.indexes), timeout=30, interval=0.2, what="flow control to end")
        with suppress(pymysql.Error):
            execute(cluster, 1, f"TRUNCATE TABLE {TEST_TABLE}")


def _set_reader_password(cluster: Any, node: int, password: str) -> None:
    conn = connect(cluster, node)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION wsrep_on=OFF")
            cur.execute(f"ALTER USER '{cluster.reader_user}'@'127.0.0.1' IDENTIFIED BY %s", (password,))
            cur.execute("SET SESSION wsrep_on=ON")
    finally:
        conn.close()


@contextmanager
def reader_password_changed(cluster: Any, node: int, password: str) -> Iterator[None]:
    try:
        _set_reader_password(cluster, node, password)
        yield
    finally:
        _set_reader_password(cluster, node, cluster.reader_password)


async def poll_until(
    collector: GaleraCollector,
    predicate: Callable[[GaleraSnapshot, list[Finding]], bool],
    *,
    timeout: float,
    what: str,
    every: float = 0.25,
) -> tuple[GaleraSnapshot, list[Finding]]:
    """Run collect() + findings() until predicate(snapshot, findings) holds; fail naming `what` and the last
    verdict and findings seen."""
    deadline = time.monotonic() + timeout
    last = "nothing collected"
    while True:
        try:
            snap = await collector.collect()
            found = collector.findings(snap, datetime.now(UTC))
            if predicate(snap, found):
                return snap, found
            last = f"{verdict(snap)!r}, findings {sorted((f.kind, f.subject, f.severity) for f in found)}"
        except Exception as exc:
            last = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last: {last}")
        await asyncio.sleep(every)


def kinds(found: list[Finding]) -> dict[tuple[str, str], str]:
    return {(f.kind, f.subject): f.severity for f in found}
