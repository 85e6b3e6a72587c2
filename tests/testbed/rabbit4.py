"""The RabbitMQ 4.0 cluster of the test bed (testcloud/trixie/rabbit4.sh): three nodes on 127.0.0.1, AMQP
5673-5675, management 15673-15675, guest/guest. Scenario helpers stop a node's application (`stop_app`: the
Erlang node stays, the others list it as the sparse `running: false` row) and start it again.

A stopped node is *held* (rabbit4.sh stop-node records this process's PID): a parallel session's
`scripts/testcloud up rabbitmq4` leaves it stopped while this process lives.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass

from tests.testbed import paths
from tests.testbed.rabbitmq import Broker
from tests.testbed.testcloud import run_script
from tests.testbed.wait import wait_for

SCRIPT = paths.REPO / "testcloud" / "trixie" / "rabbit4.sh"
NODES = ("rabbit4a@localhost", "rabbit4b@localhost", "rabbit4c@localhost")


@dataclass(frozen=True)
class Rabbit4Cluster:
    """Where the cluster answers; broker(i) is node i's Broker (management and AMQP ports of that node)."""

    nodes: tuple[str, ...] = NODES
    user: str = "guest"
    password: str = "guest"

    def broker(self, i: int = 0, vhost: str = "/") -> Broker:
        return Broker(mgmt_url=f"http://127.0.0.1:{15673 + i}", user=self.user, password=self.password,
                      port=5673 + i, vhost=vhost)

    def run(self, *args: str, timeout: float = 300) -> str:
        env_pid = os.environ.get("STACKTOP_HOLD_PID")
        os.environ["STACKTOP_HOLD_PID"] = str(os.getpid())
        try:
            rc, text = run_script([str(SCRIPT), *args], timeout)
        finally:
            if env_pid is None:
                os.environ.pop("STACKTOP_HOLD_PID", None)
            else:
                os.environ["STACKTOP_HOLD_PID"] = env_pid
        if rc != 0:
            raise RuntimeError(f"rabbit4.sh {' '.join(args)} failed ({rc}): {text[-3000:]}")
        return text

    def running_nodes(self, *, besides: int | None = None) -> set[str]:
        """The nodes listed running by the first management API that answers (node `besides` not asked)."""
        error: Exception | None = None
        for i in range(len(self.nodes)):
            if i == besides:
                continue
            try:
                nodes = self.broker(i).get("/api/nodes?columns=name,running")
            except Exception as exc:  # a stopped node's API refuses: ask the next one
                error = exc
                continue
            assert isinstance(nodes, list)
            return {n["name"] for n in nodes if n.get("running") is True}
        raise RuntimeError(f"no management API of the cluster answers: {error}")

    def stop_node(self, i: int) -> None:
        """stop_app on node i, and wait until another node's management API lists it not running."""
        self.run("stop-node", str(i))
        wait_for(lambda: self.nodes[i] not in self.running_nodes(besides=i), timeout=60,
                 what=f"{self.nodes[i]} listed as not running")

    def start_node(self, i: int) -> None:
        """start_app on node i (drops the hold); the script waits until every node lists 3 running."""
        self.run("start-node", str(i))


@contextlib.contextmanager
def nodes_stopped(cluster: Rabbit4Cluster, *indexes: int) -> Iterator[None]:
    """Nodes `indexes` stopped for the block (in order), started again in `finally` (all of them, even when the
    block or a stop failed)."""
    try:
        for i in indexes:
            cluster.stop_node(i)
        yield
    finally:
        errors = []
        for i in reversed(indexes):
            try:
                cluster.start_node(i)
            except Exception as exc:  # start the others all the same
                errors.append(exc)
        if errors:
            raise errors[0]
