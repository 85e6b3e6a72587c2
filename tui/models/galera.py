"""Galera snapshot: what each configured node said (or why it said nothing) at one poll.

Values a node did not report are None ("unknown"), never 0 or False. Names follow the wsrep status variables
(`wsrep_cluster_status` -> cluster_status, ...). The *_delta / *_share / recv_queue_history fields are history
the collector keeps between polls, so the rules in tui.rules.quorum stay pure.
"""

from __future__ import annotations

from tui.records import record

# wsrep_cluster_conf_id of a node outside any Primary component (2**64 - 1, measured on MariaDB 10.11).
NON_PRIMARY_CONF_ID = 18446744073709551615


@record
class GaleraNode:
    """One configured node ("host:port").

    reachable: the status query answered this poll. error: one line (no secrets) when it did not;
    auth_error: that line is a login refusal (wrong user/password), the node itself may be fine.
    privilege_error: the account was refused a read for a missing privilege, or the login or a read by the
    account itself (a resource limit reached, an expired password, a lock); the line names the GRANT or ALTER USER.
    flow_control_paused_share: fraction (0..1) of the wall time since the previous poll this node spent paused
    by flow control, from the change of wsrep_flow_control_paused_ns (None on the first poll after (re)connect).
    flow_control_requested: this node is asking the cluster to pause (wsrep_flow_control_requested): it is
    the slow applier. flow_control_sent_delta: pause requests it sent since the previous poll.
    recv_queue_history: wsrep_local_recv_queue of the last few polls,
    oldest first, ending with this one. arbitrators_seen: members of this node's component without an SQL
    address (garbd): the empty entries of wsrep_incoming_addresses (None when the node did not report it).
    provider_option_variables: the provider's options are system variables (wsrep_provider_pc_bootstrap ...:
    MariaDB 11.x), so they are set one by one, not through wsrep_provider_options.
    """

    address: str
    reachable: bool
    error: str | None = None
    auth_error: bool = False
    privilege_error: bool = False
    node_name: str | None = None
    cluster_name: str | None = None
    cluster_size: int | None = None
    cluster_status: str | None = None
    state_comment: str | None = None
    ready: bool | None = None
    connected: bool | None = None
    desync: bool | None = None
    conf_id: int | None = None
    state_uuid: str | None = None
    evs_state: str | None = None
    last_committed: int | None = None
    recv_queue: int | None = None
    recv_queue_avg: float | None = None
    send_queue: int | None = None
    send_queue_avg: float | None = None
    flow_control_active: bool | None = None
    flow_control_requested: bool | None = None
    flow_control_paused_ns: int | None = None
    flow_control_paused_share: float | None = None
    flow_control_interval_s: float | None = None
    flow_control_sent_delta: int | None = None
    recv_queue_history: tuple[int, ...] = ()
    incoming_addresses: str | None = None
    arbitrators_seen: int | None = None
    provider_option_variables: bool | None = None
    provider_version: str | None = None
    query_ms: float | None = None

    @property
    def label(self) -> str:
        """"node2 (127.0.0.1:3312)" when the node named itself, else the address."""
        return f"{self.node_name} ({self.address})" if self.node_name else self.address

    @property
    def primary(self) -> bool:
        return self.reachable and self.cluster_status == "Primary"

    @property
    def quorum_lost(self) -> bool:
        """Outside a Primary component, or not ready: table reads and all writes fail here (1047)."""
        return self.reachable and (
            (self.cluster_status is not None and self.cluster_status != "Primary") or self.ready is False
        )


@record
class GaleraSnapshot:
    """One poll of every configured node, in configured order.

    expected_size: [galera] expected_size (defaults to the configured nodes plus arbitrators); arbitrators:
    [galera] arbitrators, the gcomm addresses of members without SQL (garbd), never polled; disagreement_polls:
    consecutive polls (this one included) in which the reachable nodes disagreed on conf_id or state_uuid;
    interval_s: the collector's poll interval. taken_at: epoch seconds.
    """

    nodes: tuple[GaleraNode, ...]
    expected_size: int | None
    taken_at: float
    interval_s: float = 5.0
    disagreement_polls: int = 0
    arbitrators: tuple[str, ...] = ()

    @property
    def reachable(self) -> tuple[GaleraNode, ...]:
        return tuple(n for n in self.nodes if n.reachable)

    @property
    def unreachable(self) -> tuple[GaleraNode, ...]:
        return tuple(n for n in self.nodes if not n.reachable)

    @property
    def primary_size(self) -> int | None:
        """The size of the Primary component as its members report it (None when no node is Primary)."""
        sizes = [n.cluster_size for n in self.nodes if n.primary and n.cluster_size is not None]
        return max(sizes) if sizes else None
