"""A catalog service the policy hides is a finding, never silence: the Keystone catalog gives stacktop's user no
'block-storage' endpoint (so the volume section reads as "not deployed"), while cinder's processes consume their
RabbitMQ topics: triage.catalog_hidden names the service type, how it was seen (the queues with consumers) and
where to look. No hint when cinder's queues have no consumer (leftovers of a removed cinder) or when the catalog
lists block-storage."""

from __future__ import annotations

from dataclasses import replace

from tests.unit.test_triage_rules import NOW, rabbit, services, world
from tui.models.rabbitmq import QueueInfo
from tui.models.services import SectionRead
from tui.rules.finding_detail import owner_of
from tui.rules.triage import jump_target, triage_hints

CINDER_QUEUES = ("cinder-scheduler", "cinder-volume", "cinder-volume.ctl-1@lvm", "cinder-volume_fanout_4f2a9c1e0b")


def hidden_volume() -> object:
    return replace(services(), volume=SectionRead("volume", deployed=False))  # type: ignore[arg-type]


def with_cinder(consumers: int) -> object:
    base = rabbit()
    extra = tuple(QueueInfo("/", name, messages=0, consumers=consumers) for name in CINDER_QUEUES)
    return replace(base, queues=base.queues + extra)


def test_block_storage_hidden_while_cinder_consumes_its_topics_is_a_warning() -> None:
    hints = [h for h in triage_hints(world(svc=hidden_volume(), rmq=with_cinder(1)), NOW)  # type: ignore[arg-type]
             if h.kind == "triage.catalog_hidden"]
    assert len(hints) == 1, hints
    [hint] = hints
    assert hint.severity == "warning" and hint.subject == "block-storage", hint
    assert "lists no 'block-storage' endpoint for stacktop's user" in hint.summary, hint.summary
    assert "cinder-scheduler, cinder-volume run" in hint.summary, hint.summary
    assert "RabbitMQ queues cinder-scheduler, cinder-volume, cinder-volume.ctl-1@lvm" in hint.summary, hint.summary
    assert "cloud 'prod'" in hint.summary and "volume services are not checked" in hint.summary
    assert "openstack endpoint list --service block-storage" in hint.next_step, hint.next_step
    assert hint.evidence["seen_as"] == "rabbitmq consumers" and hint.evidence["service_type"] == "block-storage"
    assert jump_target(hint) == ("pane", "services") and owner_of(hint) == "keystone (the catalog)"


def test_no_hint_when_the_catalog_lists_block_storage_or_cinder_has_no_consumer() -> None:
    listed = triage_hints(world(rmq=with_cinder(1)), NOW)  # type: ignore[arg-type]
    leftover = triage_hints(world(svc=hidden_volume(), rmq=with_cinder(0)), NOW)  # type: ignore[arg-type]
    plain = triage_hints(world(svc=hidden_volume()), NOW)  # type: ignore[arg-type]
    for hints in (listed, leftover, plain):
        assert not [h for h in hints if h.kind == "triage.catalog_hidden"], hints
