"""The simulator's Galera, reached from another process over its control API (the benchmarks' seam).

A Connector (tui.collectors.galera_sql) whose connections answer from the simulator's Galera nodes: the
simulator speaks no MySQL protocol. Only the standard library: the benchmark's app imports this instead of
the simulator (tui.sim.demo and the rest are ~50 ms of imports a real deployment never pays).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit


def _call(control_url: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(control_url + "/galera", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


def remote_galera_connector(control_url: str) -> Callable[[str, str, str | None, float], RemoteGalera]:
    """connector(address, user, password, timeout) -> a connection to that simulated node."""

    def connect(address: str, user: str, password: str | None, timeout: float = 5.0) -> RemoteGalera:
        return RemoteGalera(control_url, address, user, password, timeout)

    return connect


class RemoteGalera:
    def __init__(self, control_url: str, node: str, user: str, password: str | None, timeout: float) -> None:
        self._control_url, self._node = control_url, node
        self._conn: http.client.HTTPConnection | None = None
        self._raise(_call(control_url, {"op": "connect", "node": node, "user": user, "password": password,
                                        "timeout": timeout}))

    @staticmethod
    def _raise(answer: dict[str, Any]) -> dict[str, Any]:
        if "error" in answer:
            name, args = answer["error"]
            from tui.sim.galera import _errors

            operational, programming = _errors()
            raise (programming if name == "ProgrammingError" else operational)(*args)
        return answer

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        rows = self._raise(self._post({"op": "query", "node": self._node, "sql": sql}))
        return [tuple(r) for r in rows["rows"]]

    def _post(self, body: dict[str, Any]) -> Any:
        """One keep-alive connection per node, as pymysql's persistent one: urllib's new connection and opener
        per query cost ~3 ms of the app's CPU each, 12 polls of 3 nodes a minute in the idle benchmark, where
        the real query costs ~0.4 ms. A broken connection is opened again once."""
        data = json.dumps(body).encode()
        url = urlsplit(self._control_url)
        path = url.path.rstrip("/") + "/galera"
        for attempt in (1, 2):
            conn = self._conn
            if conn is None:
                conn = self._conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=30)
            try:
                conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
                return json.loads(conn.getresponse().read())
            except (OSError, http.client.HTTPException):
                conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            _call(self._control_url, {"op": "close", "node": self._node})
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
