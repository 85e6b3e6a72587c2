"""A RabbitMQ user blind to some vhosts: the finding names them and the fix, and the triage row never says
"service queues consumed" about queues it cannot see."""

from __future__ import annotations

from datetime import UTC, datetime

from tui.config import Thresholds
from tui.models.observation import Observation
from tui.models.rabbitmq import NodeInfo, QueueInfo, RabbitSnapshot
from tui.rules.queues import rabbitmq_findings
from tui.rules.triage import triage_summary

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


def snap(unreadable: tuple[str, ...], vhosts: tuple[str, ...] = (), total: int = 40) -> RabbitSnapshot:
    return RabbitSnapshot("http://mq:15672", NOW, queues=(QueueInfo(vhost="/", name="q", messages=0, consumers=1),),
                          nodes=(NodeInfo(name="rabbit@a", running=True),), vhosts=vhosts,
                          object_totals={"queues": total}, unreadable_vhosts=unreadable, user="monitoring")


def cell(s: RabbitSnapshot):
    obs = Observation("rabbitmq", snapshot=s, ok_at=NOW.timestamp(), findings=tuple(rabbitmq_findings(s, NOW)))
    row = triage_summary({"rabbitmq": obs}, NOW, Thresholds(), configured={"rabbitmq"})
    return next(c for c in row.cells if c.name == "rabbitmq")


def test_the_finding_names_the_vhosts_the_hidden_queues_and_the_least_grant() -> None:
    [f] = [f for f in rabbitmq_findings(snap(("/nova", "/neutron")), NOW) if f.kind == "rabbitmq.vhost_not_readable"]
    assert f.severity == "warning" and f.subject == "/nova, /neutron"
    assert f.summary == ("RabbitMQ user 'monitoring' may not read vhosts /nova, /neutron: their queues (39 of the "
                         "broker's 40 queues) are neither shown nor judged")
    assert "rabbitmqctl set_permissions -p /nova monitoring '' '' ''; rabbitmqctl set_permissions -p /neutron " \
           "monitoring '' '' ''" in f.next_step
    assert f.evidence["vhosts"] == ["/nova", "/neutron"]


def test_with_configured_vhosts_no_count_is_claimed() -> None:
    [f] = [f for f in rabbitmq_findings(snap(("/nova",), vhosts=("/nova", "/")), NOW)
           if f.kind == "rabbitmq.vhost_not_readable"]
    assert "of the broker's" not in f.summary and "queues_on_broker" not in f.evidence


def test_nothing_blind_no_finding() -> None:
    assert not [f for f in rabbitmq_findings(snap(()), NOW) if f.kind == "rabbitmq.vhost_not_readable"]


def test_triage_cell_says_blind_not_consumed() -> None:
    seeing, blind = cell(snap(())), cell(snap(("/nova",)))
    assert "service queues consumed" in seeing.text and seeing.level == "ok"
    assert "service queues consumed" not in blind.text
    assert "vhost not readable: /nova" in blind.text and blind.level == "warning"
