"""The RabbitMQ collector against the machine's real RabbitMQ 3.10, one vhost per test.

The management API shows changes 4-9 s late, so every wait is a poll with a deadline.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from datetime import UTC, datetime

import pytest

from tests.integration.rabbitmq.conftest import Amqp, poll_until
from tests.testbed.rabbitmq import Broker, temporary_vhost, wait_consumers, wait_history_held
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.errors import SourceError
from tui.models.finding import Finding
from tui.models.rabbitmq import RabbitSnapshot
from tui.runner import CollectorRunner
from tui.snapshot import collect_once

pytestmark = pytest.mark.integration

HEX = uuid.uuid4().hex
OPENSTACK_QUEUES = ("scheduler", "conductor", "compute", "compute.compute-01", "compute.compute-02",
                    f"scheduler_fanout_{HEX}")


def make(broker: Broker, vhost: str | None = None, **kw) -> RabbitMQCollector:
    return RabbitMQCollector(broker.mgmt_url, broker.user, broker.password, vhosts=[vhost or broker.vhost],
                             interval=1, timeout=10, **kw)


class Poller:
    """collect() + findings() in one call, keeping the last pair."""

    def __init__(self, collector: RabbitMQCollector) -> None:
        self.c = collector
        self.findings: list[Finding] = []

    async def __call__(self) -> tuple[RabbitSnapshot, list[Finding]]:
        snap = await self.c.collect()
        self.findings = self.c.findings(snap, datetime.now(UTC))
        return snap, self.findings


def suspect_seen(name: str):
    def check(res) -> bool:
        q = res[0].queue(name)
        return q is not None and q.no_consumer_with_messages
    return check


def no_consumer(findings, subject_part: str = "") -> list[Finding]:
    return [f for f in findings if f.kind == "rabbitmq.queue_no_consumer" and subject_part in f.subject]


def openstack_like(amqp: Amqp) -> None:
    amqp.declare(*OPENSTACK_QUEUES)
    for name in OPENSTACK_QUEUES:
        if name != "compute.compute-02":
            amqp.consume(name)
    amqp.publish("compute.compute-02", 3)


async def test_stopped_compute_is_the_one_critical_and_clears(vb, amqp):
    openstack_like(amqp)
    poll = Poller(make(vb))
    try:
        # The first poll that sees the stuck queue must not page yet (stats lag): the rule wants 2 polls.
        snap, findings = await poll_until(poll, suspect_seen("compute.compute-02"), what="compute-02 stuck")
        assert snap.queue("compute.compute-02").stuck_polls == 1
        assert no_consumer(findings) == []
        snap, findings = await poll()
        crit = [f for f in findings if f.severity == "critical"]
        assert len(crit) == 1, findings
        [f] = crit
        assert f.kind == "rabbitmq.queue_no_consumer"
        assert f.subject == f"{vb.vhost}/compute.compute-02"
        assert "compute-02" in f.summary and "nova-compute" in f.summary
        assert f.evidence["class"] == "service" and f.evidence["host"] == "compute-02"
        assert f.evidence["messages"] == 3 and f.evidence["polls"] == 2
        # every other OpenStack queue has its consumer and is known to. Each queue's statistics arrive on its own
        # schedule (every 5 s per queue process): a queue declared with the others may still have none
        # (consumers unknown: None) when compute-02's arrived, or an emission taken between its declare and its
        # consume (consumers 0: seen in CI at load, stop 16), so wait until every one shows its consumer.
        names = [n for n in OPENSTACK_QUEUES if n != "compute.compute-02"]

        def all_consumed(res) -> bool:
            return all(res[0].queue(n) is not None and res[0].queue(n).consumers == 1 for n in names)

        snap, findings = await poll_until(poll, all_consumed, what="every other queue's consumer")
        others = [snap.queue(n) for n in names]
        assert all(q.consumers == 1 for q in others), others
        assert [f.subject for f in findings if f.severity == "critical"] == [f"{vb.vhost}/compute.compute-02"]

        amqp.consume("compute.compute-02")
        snap, _ = await poll_until(poll, lambda res: not no_consumer(res[1]), what="compute-02 finding cleared")
        assert snap.queue("compute.compute-02").consumers == 1
    finally:
        await poll.c.aclose()


async def test_reply_and_notifications_are_info_and_warning(vb, amqp):
    reply = f"reply_{HEX}"
    amqp.declare(reply, expires_ms=1_800_000)
    amqp.declare("notifications.info")
    amqp.publish(reply, 2)
    amqp.publish("notifications.info", 5)
    poll = Poller(make(vb))
    try:
        await poll_until(poll, lambda res: len(no_consumer(res[1])) == 2, what="reply + notifications findings")
        by_queue = {f.evidence["queue"]: f for f in no_consumer(poll.findings)}
        assert by_queue[reply].severity == "info"
        assert by_queue[reply].evidence["class"] == "reply"
        assert by_queue[reply].evidence["x_expires_s"] == 1800
        assert 0 < by_queue[reply].evidence["expires_in_s_at_most"] <= 1800
        assert by_queue["notifications.info"].severity == "warning"
        assert by_queue["notifications.info"].evidence["class"] == "notifications"
        assert not [f for f in poll.findings if f.severity == "critical"]
    finally:
        await poll.c.aclose()


def without_tick_wait(collector: RabbitMQCollector) -> RabbitMQCollector:
    """The collector, failing the test should a one-shot run wait for the broker's next statistics tick."""

    async def refused(queue) -> None:
        raise AssertionError(f"a one-shot run waited for the statistics tick (suspect {queue.name})")

    collector._next_statistics_tick = refused  # type: ignore[method-assign]
    return collector


async def compute_02_stuck(vb, amqp) -> None:
    """An OpenStack-like vhost whose compute.compute-02 holds messages with no consumer, seen by a poller."""
    openstack_like(amqp)
    probe = Poller(make(vb))
    try:
        await poll_until(probe, suspect_seen("compute.compute-02"), what="compute-02 stuck")
    finally:
        await probe.c.aclose()


async def test_oneshot_reaches_the_verdict_in_one_run_from_the_queue_history(vb, amqp):
    await compute_02_stuck(vb, amqp)
    await asyncio.to_thread(wait_history_held, vb, ["compute.compute-02"])
    fresh = without_tick_wait(make(vb))
    [obs] = await collect_once([fresh])  # the real `stacktop snapshot` path, one run
    assert obs.ok, obs.error
    assert obs.snapshot.confirmation == "history"
    assert obs.snapshot.fetch["history"] == {"asked": 1, "held": 1, "clear": 0, "left_unconfirmed": 0}
    crit = [f for f in obs.findings if f.severity == "critical"]
    assert [f.subject for f in crit] == [f"{vb.vhost}/compute.compute-02"]
    assert crit[0].evidence["polls"] == 2 and crit[0].evidence["history_s"] >= 10
    assert crit[0].evidence["messages"] == 3


async def test_oneshot_history_sees_a_consumer_the_listing_missed(vb, amqp):
    """A consumer attached after the listing: the history's GET tells it, and nothing is reported."""
    await compute_02_stuck(vb, amqp)
    await asyncio.to_thread(wait_history_held, vb, ["compute.compute-02"])
    listed = await make(vb).collect()  # the listing while nobody consumes
    amqp.consume("compute.compute-02")
    await asyncio.to_thread(wait_consumers, vb, "compute.compute-02", 1)
    fresh = without_tick_wait(make(vb))
    fresh.prepare_oneshot()
    try:
        snap = await fresh._confirm_by_history(listed)
    finally:
        await fresh.aclose()
    assert snap is not None and snap.confirmation == "history"
    assert snap.fetch["history"]["clear"] == 1
    assert snap.queue("compute.compute-02").stuck_polls == 1
    assert no_consumer(fresh.findings(snap, datetime.now(UTC))) == []


async def test_oneshot_and_veto_over_amqp(vb, amqp):
    await compute_02_stuck(vb, amqp)
    fresh = make(vb, amqp_url=vb.amqp_address)
    [obs] = await collect_once([fresh])
    assert obs.ok, obs.error
    assert obs.snapshot.confirmation == "amqp", obs.snapshot.confirm_error
    assert obs.duration_s < 5  # no second sample was needed
    [f] = [f for f in obs.findings if f.severity == "critical"]
    assert f.evidence["confirmed_live"] is True and f.evidence["live_consumers"] == 0
    assert f.evidence["live_messages"] == 3

    # A consumer comes back: the management numbers still say 0 for a few seconds, the live check does not.
    amqp.consume("compute.compute-02")
    live = make(vb, amqp_url=vb.amqp_address, min_polls=1)
    try:
        snap = await live.collect()
        q = snap.queue("compute.compute-02")
        assert no_consumer(live.findings(snap, datetime.now(UTC))) == []
        if q.consumers == 0:  # stale statistics (the usual case right after attaching)
            assert q.live_consumers == 1
    finally:
        await live.aclose()


async def test_amqp_failure_does_not_fail_the_poll(vb, amqp):
    amqp.declare("conductor")
    amqp.publish("conductor")
    poll = Poller(make(vb, amqp_url="amqp://127.0.0.1:1", min_polls=1))
    try:
        snap, findings = await poll_until(poll, suspect_seen("conductor"), what="conductor stuck")
        assert snap.confirm_error and "amqp://127.0.0.1:1" in snap.confirm_error
        assert "[rabbitmq] amqp_url" in snap.confirm_error
        assert [f.subject for f in no_consumer(findings)] == [f"{vb.vhost}/conductor"]  # 2-poll rule applies
    finally:
        await poll.c.aclose()


async def test_one_unpaged_listing_per_vhost(vb, amqp):
    """A full listing is one unpaged request per configured vhost (page_size is for the name-filtered
    requests only), and lists only those vhosts' queues."""
    names = [f"q-{i:02d}" for i in range(7)]
    amqp.declare(*names)
    with temporary_vhost(vb, prefix="stacktop-rmq-other") as other:
        Amqp(other).declare("elsewhere")
        c = make(vb, page_size=3)
        try:
            snap = await c.collect()
        finally:
            await c.aclose()
        assert sorted(q.name for q in snap.queues) == names
        assert {q.vhost for q in snap.queues} == {vb.vhost}
        assert snap.fetch["queue_pages"] == 1 and snap.fetch["requests"] == 4  # queues, nodes, alarms, overview
        both = RabbitMQCollector(vb.mgmt_url, vb.user, vb.password, vhosts=[vb.vhost, other.vhost])
        try:
            snap2 = await both.collect()
        finally:
            await both.aclose()
        assert {(q.vhost, q.name) for q in snap2.queues} == \
            {(vb.vhost, n) for n in names} | {(other.vhost, "elsewhere")}
        assert snap2.fetch["queue_pages"] == 2


async def test_fresh_queue_numbers_are_unknown_not_zero(vb, amqp):
    c = make(vb)
    try:
        amqp.declare("brand-new")
        snap = await c.collect()
        q = snap.queue("brand-new")
        assert q is not None
        # Right after the declare the row usually lacks the stats keys; if the emission already came, the
        # numbers must be the real ones (0), never invented.
        assert (q.messages, q.consumers) in {(None, None), (0, 0)}
        assert q.stuck_polls == 0
    finally:
        await c.aclose()


async def test_nodes_overview_and_live_alarm_check(vb):
    c = make(vb)
    try:
        snap = await c.collect()
    finally:
        await c.aclose()
    assert snap.alarms_checked and snap.alarms == ()
    [node] = snap.nodes
    assert node.running is True and node.partitions == () and node.mem_alarm is False
    assert node.fd_used and node.fd_total and node.fd_used < node.fd_total
    assert snap.rabbitmq_version and snap.rabbitmq_version.startswith("3.")
    assert snap.node == node.name
    assert snap.fetch["requests"] == 4 and snap.fetch["bytes"] > 0


def _watermark() -> str:
    out = subprocess.run(["rabbitmqctl", "eval", "vm_memory_monitor:get_vm_memory_high_watermark()."],
                         capture_output=True, text=True, check=True).stdout.strip()
    try:
        float(out)
    except ValueError:
        return "0.4"
    return out


async def test_memory_alarm_within_one_poll(vb):
    c = make(vb)
    poll = Poller(c)
    before = _watermark()
    try:
        snap, findings = await poll()
        assert [f for f in findings if f.kind == "rabbitmq.alarm"] == []
        subprocess.run(["rabbitmqctl", "set_vm_memory_high_watermark", "0.0001"], check=True,
                       capture_output=True)
        # The broker raises the alarm at its next memory check (~1 s); the first poll after that has it.
        snap, findings = await poll_until(poll, lambda res: bool(res[0].alarms), deadline_s=15, every_s=0.5,
                                          what="memory alarm in local-alarms")
        [f] = [f for f in findings if f.kind == "rabbitmq.alarm"]
        assert f.severity == "critical" and f.subject == snap.node
        assert "memory" in f.evidence["resources"] and "local-alarms" in f.evidence["seen_by"]
    finally:
        subprocess.run(["rabbitmqctl", "set_vm_memory_high_watermark", before], check=True, capture_output=True)
        await c.aclose()
    c2 = Poller(make(vb))
    try:
        await poll_until(c2, lambda res: not res[0].alarms, deadline_s=15, every_s=0.5, what="alarm cleared")
    finally:
        await c2.c.aclose()


async def test_wrong_password_is_one_401_line(vb):
    c = RabbitMQCollector(vb.mgmt_url, vb.user, "not-the-password", vhosts=[vb.vhost],
                          password_key="[rabbitmq] password_env ($RABBIT_PW)")
    try:
        with pytest.raises(SourceError) as err:
            await c.collect()
        line = str(err.value)
        assert "\n" not in line and "401" in line
        assert vb.mgmt_url in line
        assert "[rabbitmq] user" in line and "[rabbitmq] password_env ($RABBIT_PW)" in line
        assert "not-the-password" not in line
        obs = await CollectorRunner(c).run_once()
        assert obs.error == line and not obs.ok
    finally:
        await c.aclose()


async def test_unreachable_and_unknown_vhost(vb):
    down = RabbitMQCollector("http://127.0.0.1:1", "guest", "guest")
    try:
        with pytest.raises(SourceError, match=r"http://127\.0\.0\.1:1 unreachable \(connection refused\) - "
                                              r"check \[rabbitmq\] management_url"):
            await down.collect()
    finally:
        await down.aclose()
    missing = make(vb, f"{vb.vhost}-missing")
    try:
        with pytest.raises(SourceError, match=r"does not exist - check \[rabbitmq\] vhosts"):
            await missing.collect()
    finally:
        await missing.aclose()


def consumed_service_queues() -> int:
    """The queues of openstack_like() a light poll watches besides compute-02: the service topics with a
    consumer (tui.collectors.rabbitmq MAX_SERVICE_WATCH)."""
    from tui.rules.queue_names import classify_queue

    return sum(1 for n in OPENSTACK_QUEUES if n != "compute.compute-02" and classify_queue(n).cls == "service")


async def test_light_polls_judge_filling_queues_on_fresh_statistics(vb, amqp):
    """Between full listings (full_every) a poll lists every queue without statistics and asks statistics by
    name only for the queues that hold messages, are new or had no consumer, and the service queues that have a
    consumer: the stopped compute is found and cleared on light polls, every consumer count is fresh."""
    openstack_like(amqp)
    poll = Poller(make(vb, full_every=10**6))  # the first poll is full, every later one light
    try:
        snap, _ = await poll()
        assert snap.fetch["queues"]["mode"] == "full"
        # wait for every consumer to show in the statistics too (an emission between declare and consume says 0)
        snap, findings = await poll_until(poll, lambda res: len(no_consumer(res[1])) == 1
                                          and all(q.consumers == (0 if q.name == "compute.compute-02" else 1)
                                                  for q in res[0].queues),
                                          what="compute-02 finding and every other consumer on light polls")
        snap, findings = await poll()  # every queue has statistics now: compute-02 needs fresh ones, and the
        info = snap.fetch["queues"]  # service queues with a consumer (a lost consumer is news at once)
        assert info["mode"] == "light"
        assert info["detail_queues"] == 1 + consumed_service_queues(), info
        [f] = no_consumer(findings)
        assert f.subject == f"{vb.vhost}/compute.compute-02" and f.evidence["messages"] == 3
        others = [snap.queue(n) for n in OPENSTACK_QUEUES if n != "compute.compute-02"]
        assert all(q is not None and q.consumers == 1 for q in others), others

        # compute-01's consumer goes away and it fills: a light poll sees it on fresh numbers
        for consumer in list(amqp._consumers):
            if consumer.queue == "compute.compute-01":
                consumer.stop()
        amqp.publish("compute.compute-01", 2)
        snap, _ = await poll_until(poll, suspect_seen("compute.compute-01"), what="compute-01 stuck (light)")
        assert snap.fetch["queues"]["mode"] == "light"
        assert snap.queue("compute.compute-01").consumers == 0

        amqp.consume("compute.compute-02")
        snap, _ = await poll_until(poll, lambda res: not no_consumer(res[1], "compute-02"),
                                   what="compute-02 cleared (light)")
        assert snap.fetch["queues"]["mode"] == "light" and snap.queue("compute.compute-02").consumers == 1
    finally:
        await poll.c.aclose()


async def test_an_unchanged_broker_keeps_the_last_light_judgement_and_the_next_change_is_seen(vb, amqp):
    """A light poll whose listings come back byte for byte as last time keeps that poll's merge and parse (no
    2,000 rows decoded and compared for nothing): the same queues, the streaks still advance; the first
    change the broker shows makes the next light poll judge again."""
    openstack_like(amqp)
    poll = Poller(make(vb, full_every=10**6))  # the first poll is full, every later one light
    try:
        await poll()
        snap, findings = await poll_until(poll, lambda res: res[0].fetch["queues"].get("unchanged") is True
                                          and len(no_consumer(res[1])) == 1,
                                          what="a light poll of an unchanged broker, compute-02 reported")
        stuck = snap.queue("compute.compute-02")
        assert stuck.messages == 3 and stuck.consumers == 0, stuck
        again, findings = await poll()
        assert again.fetch["queues"] == {**snap.fetch["queues"]}, again.fetch["queues"]
        assert [q.key for q in again.queues] == [q.key for q in snap.queues]
        assert again.queue("compute.compute-02").stuck_polls == stuck.stuck_polls + 1  # streaks go on
        [f] = no_consumer(findings)
        assert f.subject == f"{vb.vhost}/compute.compute-02"

        amqp.publish("compute.compute-02", 2)
        changed, _ = await poll_until(poll, lambda res: res[0].queue("compute.compute-02").messages == 5,
                                      what="compute-02's new messages on a light poll")
        info = changed.fetch["queues"]
        assert info["mode"] == "light" and not info.get("unchanged"), info
    finally:
        await poll.c.aclose()


async def test_a_light_poll_that_failed_half_way_leaves_no_judgement_standing(vb, amqp, monkeypatch):
    """A light poll that stored the broker's new light listing and then failed (its statistics request) must not
    let the next poll, which gets that same listing, keep the judgement made from the older one."""
    from urllib.parse import quote

    import httpx

    from tui.collectors.rabbitmq_payload import LIGHT_QUEUE_COLUMNS

    openstack_like(amqp)
    poll = Poller(make(vb, full_every=10**6))
    try:
        await poll()
        # settled: every consumer in the statistics, so a light poll asks statistics for compute-02 alone
        settled, _ = await poll_until(poll, lambda res: res[0].fetch["queues"].get("unchanged") is True
                                      and all(q.consumers == (0 if q.name == "compute.compute-02" else 1)
                                              for q in res[0].queues),
                                      what="a light poll of an unchanged, settled broker")
        assert settled.fetch["queues"]["detail_queues"] == 1 + consumed_service_queues(), settled.fetch["queues"]
        amqp.publish("scheduler", 2)  # its consumer never acks: 2 messages unacknowledged
        light = {"columns": ",".join(LIGHT_QUEUE_COLUMNS), "disable_stats": "true", "enable_queue_totals": "true"}

        async def listed() -> int:
            async with httpx.AsyncClient(base_url=vb.mgmt_url, auth=(vb.user, vb.password), timeout=10) as http:
                rows = (await http.get(f"/api/queues/{quote(vb.vhost, safe='')}", params=light)).json()
            return next(r.get("messages") or 0 for r in rows if r["name"] == "scheduler")

        await poll_until(listed, lambda n: n == 2, what="scheduler's 2 messages in the light listing")
        detail_rows = poll.c._detail_rows

        async def failing(keys):  # the light listing is read, the statistics request fails
            raise SourceError("statistics request failed")

        monkeypatch.setattr(poll.c, "_detail_rows", failing)
        with pytest.raises(SourceError):
            await poll()
        monkeypatch.setattr(poll.c, "_detail_rows", detail_rows)
        snap, _ = await poll()
        info = snap.fetch["queues"]
        # judged again on the listing that shows scheduler's messages (scheduler, a consumed service queue, is
        # among those asked statistics on every light poll)
        assert not info.get("unchanged") and info["detail_queues"] == 1 + consumed_service_queues(), info
        await poll_until(poll, lambda res: res[0].queue("scheduler").messages == 2,
                         what="scheduler's 2 messages once the statistics show them")
    finally:
        await poll.c.aclose()
