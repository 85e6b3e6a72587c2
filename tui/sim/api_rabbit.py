"""RabbitMQ management HTTP API subset, shaped like a real 3.10 broker (tests/data/payloads/rabbitmq/), or
with Engine(rabbitmq4=True) like a real 4.0 3-node cluster (tests/data/payloads/rabbitmq4/): quorum and stream
rows with leader/members/online, no policy/idle_since in lists, sockets 0 of 0, a stopped node's sparse row.

Statistics are published every 5 s (collect_statistics_interval), so queue numbers lag; queues younger
than the last stats tick have no `messages`/`consumers` keys yet; `/api/nodes` reports a memory alarm
~8 s after `/api/health/checks/local-alarms` does.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any
from urllib.parse import unquote

from tui.sim.engine import Engine
from tui.sim.http import Request, Response, Router, json_response
from tui.sim.model import Queue, RabbitNode
from tui.sim.util import iso_rabbit

VERSION = "3.10.8"
VERSION4 = "4.0.5"
# keys a 4.0 broker no longer puts in a queue row (mirroring and the list's policy/idle_since are gone)
_GONE_IN_4 = ("backing_queue_status", "exclusive_consumer_tag", "garbage_collection", "head_message_timestamp",
              "idle_since", "operator_policy", "policy", "recoverable_slaves", "single_active_consumer_tag")
_NOT_IN_QUORUM = ("message_bytes_paged_out", "messages_paged_out", "messages_ready_ram",
                  "messages_unacknowledged_ram")
_NOT_IN_STREAM = ("consumer_capacity", "consumer_utilisation", "message_bytes", "message_bytes_paged_out",
                  "message_bytes_persistent", "message_bytes_ram", "message_bytes_ready",
                  "message_bytes_unacknowledged", "messages_paged_out", "messages_persistent", "messages_ram",
                  "messages_ready_ram", "messages_unacknowledged_ram")
STATS_INTERVAL = 5.0
NODES_ALARM_LAG = 8.0
MAX_PAGE_SIZE = 500


def queue_dict(q: Queue, t: float, node: str, *, stats: bool = True,
               cluster: list[RabbitNode] | None = None) -> dict[str, Any]:
    """A queue row as /api/queues gives it; stats=False: `disable_stats=true&enable_queue_totals=true` (the
    basic row plus message totals: no consumers, no idle_since, no rates). With `cluster` (RabbitMQ 4), the
    4.0 row: quorum and stream queues with leader/members/online, classic ones without mirroring keys."""
    if cluster is not None:
        return _queue_dict4(q, t, node, stats, cluster)
    base: dict[str, Any] = {"arguments": q.arguments, "auto_delete": q.auto_delete, "durable": q.durable,
                            "exclusive": False, "name": q.name, "node": node, "type": "classic",
                            "vhost": q.vhost}
    tick = math.floor(t / STATS_INTERVAL) * STATS_INTERVAL
    if tick < q.created:
        return base  # not in the stats DB yet: no messages / consumers keys
    consumers, ready, unacked = q.stats(t, STATS_INTERVAL)
    total = ready + unacked
    if not stats:  # `state` comes with the light listing too (RabbitMQ 3.10 answers it with disable_stats=true)
        base.update({"messages": total, "messages_ready": ready, "messages_unacknowledged": unacked,
                     "state": "running"})
        return base
    rate = {"rate": 0.0}
    base.update({
        "backing_queue_status": {"avg_ack_egress_rate": 0.0, "avg_ack_ingress_rate": 0.0,
                                 "avg_egress_rate": 0.0, "avg_ingress_rate": 0.0,
                                 "delta": ["delta", "undefined", 0, 0, "undefined"], "len": total,
                                 "mode": "default", "next_deliver_seq_id": 0, "next_seq_id": total, "q1": 0,
                                 "q2": 0, "q3": 0, "q4": total, "target_ram_count": "infinity", "version": 1},
        "consumer_capacity": 1.0 if consumers else 0, "consumer_utilisation": 1.0 if consumers else 0,
        "consumers": consumers, "effective_policy_definition": {}, "exclusive_consumer_tag": None,
        "garbage_collection": {"fullsweep_after": 65535, "max_heap_size": 0, "min_bin_vheap_size": 46422,
                               "min_heap_size": 233, "minor_gcs": 11},
        "head_message_timestamp": None, "idle_since": iso_rabbit(q.created), "memory": 13776 + 60 * total,
        "message_bytes": total * 900, "message_bytes_paged_out": 0, "message_bytes_persistent": 0,
        "message_bytes_ram": total * 900, "message_bytes_ready": ready * 900,
        "message_bytes_unacknowledged": unacked * 900,
        "message_stats": {"publish": total, "publish_details": rate},
        "messages": total, "messages_details": {"rate": q.growth}, "messages_paged_out": 0,
        "messages_persistent": 0, "messages_ram": total, "messages_ready": ready,
        "messages_ready_details": {"rate": q.growth}, "messages_ready_ram": ready,
        "messages_unacknowledged": unacked, "messages_unacknowledged_details": rate,
        "messages_unacknowledged_ram": unacked, "operator_policy": None, "policy": None,
        "recoverable_slaves": None, "reductions": 8016, "reductions_details": rate,
        "single_active_consumer_tag": None, "state": "running",
    })
    return base


def _queue_dict4(q: Queue, t: float, node: str, stats: bool, cluster: list[RabbitNode]) -> dict[str, Any]:
    members = [n.name for n in cluster]
    online = [n.name for n in cluster if n.running]
    replicated = q.qtype in ("quorum", "stream")
    leader_node = cluster[q.leader % len(cluster)]
    if not leader_node.running:  # re-elected among the members online
        leader_node = next((n for n in cluster if n.running), leader_node)
    row = queue_dict(q, t, node, stats=stats)
    for key in _GONE_IN_4:
        row.pop(key, None)
    row["type"] = q.qtype
    if not stats:
        row["state"] = "running"
    if not replicated:
        row["node"] = node
        if stats and "messages" in row:
            row["storage_version"] = 2
        if not stats:
            row["online"] = None  # the light listing's classic row says so
        return row
    row["node"] = leader_node.name
    row["leader"] = leader_node.name
    row["members"] = members
    row["online"] = online
    majority = len(online) * 2 > len(members)
    row["state"] = "running" if majority else "minority"
    if not stats or "messages" not in row:
        if q.qtype == "stream" and not stats:  # the light listing: a stream's name, state and online only
            for key in ("messages", "messages_ready", "messages_unacknowledged", "leader", "members", "node"):
                row.pop(key, None)
        return row
    if q.qtype == "quorum":
        for key in _NOT_IN_QUORUM:
            row.pop(key, None)
        ready = row.get("messages_ready", 0)
        row.update({"delivery_limit": 20, "message_bytes_dlx": 0, "messages_dlx": 0, "messages_ready_high": 0,
                    "messages_ready_normal": ready, "messages_ready_returned": 0,
                    "open_files": {m: 0 for m in online}, "publishers": 0})
    else:
        for key in _NOT_IN_STREAM:
            row.pop(key, None)
        row.update({"readers": {m: (row.get("consumers") or 0) if m == leader_node.name else 0 for m in online},
                    "segments": 1 + (row.get("messages") or 0) // 10000})
    return row


_NODE_COUNTERS = (
    "gc_bytes_reclaimed", "io_read_avg_time", "io_read_bytes", "io_write_count", "io_write_bytes",
    "io_write_avg_time", "io_sync_count", "io_sync_avg_time", "io_seek_count", "io_seek_avg_time",
    "io_reopen_count", "mnesia_ram_tx_count", "mnesia_disk_tx_count", "msg_store_read_count",
    "msg_store_write_count", "queue_index_write_count", "queue_index_read_count", "connection_created",
    "connection_closed", "channel_created", "channel_closed", "queue_declared", "queue_created", "queue_deleted",
)


def node_dict(n: RabbitNode, t: float, v4: bool = False) -> dict[str, Any]:
    if v4 and not n.running:  # the sparse row of a stopped member
        return {"being_drained": False, "cluster_links": [], "name": n.name, "running": False, "type": "disc"}
    alarm = n.alarmed(t - NODES_ALARM_LAG)
    mem_used = int(n.mem_limit * 1.03) if n.alarmed(t) else n.mem_used
    d: dict[str, Any] = {
        "partitions": [], "os_pid": "2933", "fd_total": 1048576, "sockets_total": 943629,
        "mem_limit": n.mem_limit, "mem_alarm": alarm, "disk_free_limit": 50000000, "disk_free_alarm": False,
        "proc_total": 1048576, "rates_mode": "basic", "uptime": int((t - n.started) * 1000), "run_queue": 1,
        "processors": 8, "exchange_types": [], "auth_mechanisms": [], "applications": [], "contexts": [],
        "log_files": [f"/var/log/rabbitmq/{n.name}.log"], "db_dir": f"/var/lib/rabbitmq/mnesia/{n.name}",
        "config_files": ["/etc/rabbitmq/rabbitmq.conf"], "net_ticktime": 60, "enabled_plugins":
        ["rabbitmq_management"], "mem_calculation_strategy": "rss", "ra_open_file_metrics": {},
        "name": n.name, "type": "disc", "running": True, "mem_used": mem_used, "mem_used_details": {"rate": 0.0},
        "fd_used": n.fd_used, "fd_used_details": {"rate": 0.0}, "sockets_used": n.sockets_used,
        "sockets_used_details": {"rate": 0.0}, "proc_used": n.proc_used, "proc_used_details": {"rate": 0.0},
        "disk_free": 84_000_000_000, "disk_free_details": {"rate": 0.0}, "gc_num": 1000,
        "gc_num_details": {"rate": 0.0}, "context_switches": 1000, "context_switches_details": {"rate": 0.0},
        "io_read_count": 1, "io_read_count_details": {"rate": 0.0}, "metrics_gc_queue_length": {},
        "cluster_links": [],
    }
    for name in _NODE_COUNTERS:
        d[name] = 0
        d[f"{name}_details"] = {"rate": 0.0}
    if v4:  # RabbitMQ 4 counts no sockets, and says whether the node is drained (maintenance mode)
        d.update({"sockets_total": 0, "sockets_used": 0, "being_drained": False})
    return d


def consumer_rows(q: Any, consumers: int, node: str) -> list[dict[str, Any]]:
    """The consumers of one queue as /api/consumers and a queue's consumer_details list them (at most 50). A
    consumer's connection is named by its peer address and port: the port follows the queue's last consumer
    consumers' last return, so a consumer that went and came back (a restarted process) is on a new connection."""
    port = 40000 + int(q.connected * 10) % 20000
    return [{
        "arguments": {}, "ack_required": True, "active": True, "activity_status": "up",
        "channel_details": {"connection_name": f"10.0.0.{10 + i}:{port + i} -> 10.0.0.1:5672",
                            "name": f"10.0.0.{10 + i}:{port + i} -> 10.0.0.1:5672 (1)", "node": node,
                            "number": 1, "peer_host": f"10.0.0.{10 + i}", "peer_port": port + i,
                            "user": "openstack"},
        "consumer_tag": f"{i + 1}", "exclusive": False, "prefetch_count": 0,
        "queue": {"name": q.name, "vhost": q.vhost}} for i in range(min(consumers, 50))]


def _select(row: dict[str, Any], columns: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for col in columns:
        head, _, rest = col.partition(".")
        if head not in row:
            continue
        if rest and isinstance(row[head], dict):
            if rest in row[head]:
                out.setdefault(head, {})[rest] = row[head][rest]
        else:
            out[head] = row[head]
    return out


def _window(age: str | None, incr: str | None) -> tuple[int, int] | None:
    """A history query's (age, increment) in seconds, None when not asked; ValueError when not numbers."""
    if not age or not incr:
        return None
    return max(1, int(age)), max(1, int(incr))


def _grid(t: float, age_s: int, incr_s: int) -> list[float]:
    """The sample times of a history, newest first: the broker rounds now up to the next statistics tick and
    carries the last value there."""
    newest = (math.floor(t / STATS_INTERVAL) + 1) * STATS_INTERVAL
    return [newest - k * incr_s for k in range(age_s // incr_s + 1)]


def _length(q: Queue, at: float) -> int:
    """The queue's length as of the statistics tick at `at` (0 before it existed: the broker pads so)."""
    if math.floor(at / STATS_INTERVAL) * STATS_INTERVAL < q.created:
        return 0
    _, ready, unacked = q.stats(at, STATS_INTERVAL)
    return ready + unacked


def _delivered(q: Queue, at: float) -> int:
    """The queue's deliveries counter as of the statistics tick at `at`: one message a second while a consumer
    is attached (the consumers before the queue's last change, then its consumers since)."""
    tick = math.floor(at / STATS_INTERVAL) * STATS_INTERVAL
    before = max(0.0, min(tick, q.changed) - q.created) if q.prev[0] else 0.0
    after = max(0.0, tick - max(q.changed, q.created)) if q.consumers else 0.0
    return int(before + after)


def _details(samples: list[tuple[float, int]]) -> dict[str, Any]:
    """A `*_details` object with its samples (newest first), as the broker answers a history query."""
    newest, oldest = samples[0][1], samples[-1][1]
    span = max(1.0, samples[0][0] - samples[-1][0])
    rate = (samples[0][1] - samples[1][1]) / max(1.0, samples[0][0] - samples[1][0]) if len(samples) > 1 else 0.0
    return {"avg": sum(v for _, v in samples) / len(samples), "avg_rate": (newest - oldest) / span,
            "rate": rate, "samples": [{"sample": v, "timestamp": int(ts * 1000)} for ts, v in samples]}


# the delivery counters a queue row gains with its first delivery (consumers acknowledging: deliver, ack)
_DELIVERY_COUNTERS = ("ack", "deliver", "deliver_get", "deliver_no_ack", "get", "get_empty", "get_no_ack",
                      "redeliver")
_COUNTS_DELIVERIES = ("ack", "deliver", "deliver_get")


def _message_stats(q: Queue, t: float, window: tuple[int, int]) -> dict[str, Any]:
    """`message_stats` with each counter's samples: publish, and once a message was delivered the delivery
    counters (the broker leaves them out before)."""
    grid = [ts - window[1] for ts in _grid(t, *window)]  # the counters' newest sample: the last tick, not past it
    delivered = [(ts, _delivered(q, min(ts, t))) for ts in grid]
    published = [(ts, _length(q, min(ts, t)) + n) for ts, n in delivered]
    out: dict[str, Any] = {"publish": published[0][1], "publish_details": _details(published)}
    if delivered[0][1]:
        zero = [(ts, 0) for ts, _ in delivered]
        for name in _DELIVERY_COUNTERS:
            samples = delivered if name in _COUNTS_DELIVERIES else zero
            out.update({name: samples[0][1], f"{name}_details": _details(samples)})
    return out


def make_app(engine: Engine, user: str, password: str) -> Router:
    r = Router()
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def api(fn: Any) -> Any:
        def wrapped(req: Request, **kw: str) -> Response:
            if req.headers.get("Authorization") != expected:
                return json_response({"error": "not_authorized", "reason": "Login failed"}, 401,
                                     [("www-authenticate", 'Basic realm="RabbitMQ Management"')])
            t = engine.clock.time()
            with engine.lock:
                engine.advance_to(t)
                return fn(req, t, **kw)
        return wrapped

    node0 = lambda: engine.rabbit_nodes[0]  # noqa: E731 - the node this endpoint is served by

    def _paged(req: Request, items: list[Any], render: Any) -> Response:
        """items are rendered only for the page asked (the real broker pays for all rows; we need not)."""
        columns = [c for c in (req.q("columns") or "").split(",") if c]
        if req.q("page") is None:
            rows = [render(x) for x in items]
            return json_response([_select(x, columns) for x in rows] if columns else rows)
        try:
            page, size = int(req.q("page") or 1), int(req.q("page_size") or 100)
        except ValueError:
            page, size = 0, 0
        if page < 1 or size < 1 or size > MAX_PAGE_SIZE:
            return json_response({"error": "invalid_pagination_parameters",
                                  "reason": f"Invalid pagination parameters: page number {page}, page size "
                                            f"{size}"}, 400)
        total = len(items)
        page_count = math.ceil(total / size)
        if total and page > page_count:
            return json_response({"error": "page_out_of_range",
                                  "reason": f"Page out of range, page: {page} page size: {size}, len: {total}"},
                                 400)
        rows = [render(x) for x in items[(page - 1) * size:page * size]]
        if columns:
            rows = [_select(x, columns) for x in rows]
        return json_response({"filtered_count": total, "item_count": len(rows), "items": rows, "page": page,
                              "page_count": page_count, "page_size": size, "total_count": total})

    def _queues(req: Request, t: float, vhost: str | None) -> tuple[list[Queue], Any]:
        """The broker's `name` filter (a case-insensitive substring, or with use_regex=true a regex; like the
        broker's, applied to paged listings only: an unpaged one lists every queue) and `disable_stats=true`
        (with enable_queue_totals=true: message totals only)."""
        node = node0().name
        qs = sorted((q for q in engine.queues.values() if vhost is None or q.vhost == vhost),
                    key=lambda q: (q.vhost, q.name))
        name = req.q("name")
        if name and req.q("page") is not None:
            if req.q("use_regex") == "true":
                pattern = re.compile(name, re.IGNORECASE)
                qs = [q for q in qs if pattern.search(q.name)]
            else:
                qs = [q for q in qs if name.lower() in q.name.lower()]
        stats = not (req.q("disable_stats") == "true" and req.q("enable_queue_totals") == "true")
        cluster = engine.rabbit_nodes if engine.rabbitmq4 else None
        return qs, lambda q: queue_dict(q, t, node, stats=stats, cluster=cluster)

    @api
    def queues(req: Request, t: float) -> Response:
        return _paged(req, *_queues(req, t, None))

    @api
    def queues_vhost(req: Request, t: float, vhost: str) -> Response:
        return _paged(req, *_queues(req, t, unquote(vhost)))

    @api
    def queue_show(req: Request, t: float, vhost: str, name: str) -> Response:
        q = engine.queues.get((unquote(vhost), unquote(name)))
        if q is None:
            return json_response({"error": "Object Not Found", "reason": "Not Found"}, 404)
        d = queue_dict(q, t, node0().name, cluster=engine.rabbit_nodes if engine.rabbitmq4 else None)
        if engine.rabbitmq4 and "messages" in d:  # one queue's GET still has what the 4.0 list left out
            d.update({"garbage_collection": {"fullsweep_after": 65535, "max_heap_size": 0,
                                             "min_bin_vheap_size": 46422, "min_heap_size": 233, "minor_gcs": 9},
                      "operator_policy": None, "policy": None})
        d["consumer_details"] = consumer_rows(q, d.get("consumers", 0) or 0, node0().name)
        d["deliveries"] = []
        d["incoming"] = []
        try:
            lengths = _window(req.q("lengths_age"), req.q("lengths_incr"))
            rates = _window(req.q("msg_rates_age"), req.q("msg_rates_incr"))
        except ValueError:
            return json_response({"error": "bad_request", "reason": "lengths_age/lengths_incr, msg_rates_age/"
                                                                    "msg_rates_incr"}, 400)
        if "messages" in d:  # in the statistics DB: its history can be asked
            if lengths is not None:
                d["messages_details"] = _details(
                    [(ts, _length(q, min(ts, t))) for ts in _grid(t, *lengths)])
            if rates is not None:
                d["message_stats"] = _message_stats(q, t, rates)
        columns = [c for c in (req.q("columns") or "").split(",") if c]
        return json_response(_select(d, columns) if columns else d)

    @api
    def nodes(req: Request, t: float) -> Response:
        return json_response([node_dict(n, t, engine.rabbitmq4) for n in engine.rabbit_nodes])

    @api
    def node_show(req: Request, t: float, name: str) -> Response:
        for n in engine.rabbit_nodes:
            if n.name == unquote(name):
                return json_response(node_dict(n, t, engine.rabbitmq4))
        return json_response({"error": "Object Not Found", "reason": "Not Found"}, 404)

    @api
    def local_alarms(req: Request, t: float) -> Response:
        n = node0()
        if n.alarmed(t):
            return json_response({"alarms": [{"node": n.name, "resource": "memory"}],
                                  "reason": "There are alarms in effect on the node", "status": "failed"}, 503)
        return json_response({"status": "ok"})

    @api
    def cluster_alarms(req: Request, t: float) -> Response:
        alarms = [{"node": n.name, "resource": "memory"} for n in engine.rabbit_nodes if n.alarmed(t)]
        if alarms:
            return json_response({"alarms": alarms, "reason": "There are alarms in effect in the cluster",
                                  "status": "failed"}, 503)
        return json_response({"status": "ok"})

    @api
    def overview(req: Request, t: float) -> Response:
        msgs = sum(q.stats(t)[1] for q in engine.queues.values())
        consumers = sum(q.stats(t)[0] for q in engine.queues.values())
        n = node0()
        body = {
            "management_version": VERSION, "rates_mode": "basic",
            "sample_retention_policies": {"global": [600, 3600, 28800, 86400], "basic": [600, 3600],
                                          "detailed": [600]},
            "exchange_types": [], "product_version": VERSION, "product_name": "RabbitMQ",
            "rabbitmq_version": VERSION, "cluster_name": f"{n.name}", "erlang_version": "25.2.3",
            "erlang_full_version": "Erlang/OTP 25 [erts-13.1.5] [source] [64-bit]",
            "release_series_support_status": "supported", "disable_stats": False, "enable_queue_totals": False,
            "message_stats": {"publish": 0, "publish_details": {"rate": 0.0}},
            "churn_rates": {}, "queue_totals": {"messages": msgs, "messages_details": {"rate": 0.0},
                                                "messages_ready": msgs, "messages_ready_details": {"rate": 0.0},
                                                "messages_unacknowledged": 0,
                                                "messages_unacknowledged_details": {"rate": 0.0}},
            "object_totals": {"channels": consumers, "connections": consumers // 2 + 1, "consumers": consumers,
                              "exchanges": 40 + len(engine.hosts), "queues": len(engine.queues)},
            "statistics_db_event_queue": 0, "node": n.name, "listeners": [], "contexts": [],
        }
        if engine.rabbitmq4:
            body.pop("release_series_support_status")
            body.update({"management_version": VERSION4, "product_version": VERSION4, "rabbitmq_version": VERSION4,
                         "erlang_version": "27.3.4.1", "cluster_tags": {}, "node_tags": {},
                         "default_queue_type": "classic", "is_op_policy_updating_enabled": True,
                         "erlang_full_version": "Erlang/OTP 27 [erts-15.2.7] [source] [64-bit] [smp:8:8] "
                                                "[ds:8:8:10] [async-threads:1] [jit:ns]"})
        return json_response(body)

    @api
    def vhosts(req: Request, t: float) -> Response:
        names = sorted({q.vhost for q in engine.queues.values()})
        return json_response([{"name": v, "description": "", "tags": [], "tracing": False,
                               "cluster_state": {n.name: "running" for n in engine.rabbit_nodes}}
                              for v in names])

    def _consumers(vhost: str | None, t: float) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for q in engine.queues.values():
            if vhost is not None and q.vhost != vhost:
                continue
            out += consumer_rows(q, q.stats(t, STATS_INTERVAL)[0], node0().name)
        return out

    @api
    def consumers(req: Request, t: float) -> Response:
        columns = [c for c in (req.q("columns") or "").split(",") if c]
        rows = _consumers(None, t)
        return json_response([_select(x, columns) for x in rows] if columns else rows)

    @api
    def consumers_vhost(req: Request, t: float, vhost: str) -> Response:
        columns = [c for c in (req.q("columns") or "").split(",") if c]
        rows = _consumers(unquote(vhost), t)
        return json_response([_select(x, columns) for x in rows] if columns else rows)

    @api
    def whoami(req: Request, t: float) -> Response:
        return json_response({"name": user, "tags": ["administrator"]})

    r.add("GET", "/api/overview", overview)
    r.add("GET", "/api/nodes", nodes)
    r.add("GET", "/api/nodes/(?P<name>[^/]+)", node_show)
    r.add("GET", "/api/queues", queues)
    r.add("GET", "/api/queues/(?P<vhost>[^/]+)", queues_vhost)
    r.add("GET", "/api/queues/(?P<vhost>[^/]+)/(?P<name>[^/]+)", queue_show)
    r.add("GET", "/api/health/checks/local-alarms", local_alarms)
    r.add("GET", "/api/health/checks/alarms", cluster_alarms)
    r.add("GET", "/api/vhosts", vhosts)
    r.add("GET", "/api/whoami", whoami)
    r.add("GET", "/api/consumers", consumers)
    r.add("GET", "/api/consumers/(?P<vhost>[^/]+)", consumers_vhost)
    return r
