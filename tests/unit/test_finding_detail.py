"""What the finding screen says beside a finding (tui.rules.finding_detail), the read-at words of the drill-down
screens (tui.freshness.read_at) and what goes to the clipboard (tui.safetext.strip_controls)."""

from __future__ import annotations

import pytest

from tui.freshness import read_at, utc_clock_time
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.rules.finding_detail import command_of, finding_detail
from tui.safetext import strip_controls

AT = 1_790_000_000.0  # 14:13:20 UTC


def finding(kind: str = "nova.service_enabled_but_down", subject: str = "compute-02", next_step: str = "",
            **evidence: object) -> Finding:
    return Finding("critical", kind, subject, "summary", evidence, next_step=next_step, source="services")


@pytest.mark.parametrize(("argv", "command"), [
    (["openstack", "compute", "service", "set", "--disable", "compute-02", "nova-compute"],
     "openstack compute service set --disable compute-02 nova-compute"),
    (("openstack", "server", "show", "fe31866f"), "openstack server show fe31866f"),
    (["grep", "req-20283b56-7d00"], "grep req-20283b56-7d00"),
    (["openstack", "compute", "service", "set", "--enable", "hx | touch /tmp/x #", "nova-compute"],
     "openstack compute service set --enable 'hx | touch /tmp/x #' nova-compute"),
    (["grep", "--", "-e"], "grep -- -e"),
])
def test_the_command_is_the_rules_argv_quoted_for_a_shell(argv: list[str], command: str) -> None:
    assert command_of(finding(next_step="whatever the prose says", command=argv)) == command


@pytest.mark.parametrize("next_step", [
    "If it runs, its reports do not arrive. Until fixed: openstack compute service set --disable hx | touch /tmp/x "
    "# nova-compute",
    "Confirm before anything changes: `openstack server show fe31866f; touch /tmp/x`",
    "start it, then its log (grep $(touch /tmp/x))",
    "",
])
def test_no_command_is_cut_out_of_the_prose(next_step: str) -> None:
    assert command_of(finding(next_step=next_step)) is None


@pytest.mark.parametrize("given", ["openstack compute service list --host x", [], ["openstack", 3], "x" * 10])
def test_a_command_that_is_not_a_list_of_words_is_none(given: object) -> None:
    detail = finding_detail(finding(next_step="openstack compute service list", command=given))
    assert detail.command is None and not detail.uncopyable


def test_owner_host_and_log() -> None:
    stuck = finding("instance.stuck", "7f01", owner="nova-compute", host="compute-01",
                    first_log="nova-compute on compute-01", then="libvirt on compute-01")
    detail = finding_detail(stuck)
    assert (detail.owner, detail.host) == ("nova-compute", "compute-01")
    assert detail.log == "nova-compute on compute-01, then libvirt on compute-01"

    down = finding_detail(finding(binary="nova-compute", host="compute-02"))
    assert (down.owner, down.host, down.log) == ("nova-compute", "compute-02", "nova-compute on compute-02")

    queue = finding_detail(finding("rabbitmq.queue_no_consumer", "notifications.info"))
    assert (queue.owner, queue.host, queue.log) == ("RabbitMQ", None, None)

    hint = finding_detail(finding("triage.compute_down", "compute-01", host="compute-01"))
    assert (hint.owner, hint.host, hint.log) == ("nova-compute", "compute-01", "nova-compute on compute-01")


def test_read_at_words() -> None:
    fresh = Observation("instances", snapshot=1, ok_at=AT, tried_at=AT)
    assert utc_clock_time(AT) == "14:13:20 UTC"
    assert read_at(fresh, AT + 5, 10.0) == ("read 14:13:20 UTC", "ok")
    assert read_at(fresh, AT + 5, 10.0, what="instances") == ("instances read 14:13:20 UTC", "ok")
    assert read_at(fresh, AT + 47, 10.0) == ("STALE · read 14:13:20 UTC (47s ago)", "stale")
    assert read_at(fresh, AT + 47, 10.0, paused=True) == ("PAUSED · read 14:13:20 UTC", "ok")
    failed = Observation("instances", snapshot=1, ok_at=AT, tried_at=AT + 10, error="connection refused")
    assert read_at(failed, AT + 12, 10.0) == ("STALE · read 14:13:20 UTC (12s ago) · connection refused", "stale")
    never = Observation("instances", error="401 Unauthorized", tried_at=AT)
    assert read_at(never, AT, 10.0) == ("STALE · never read: 401 Unauthorized", "stale")
    assert read_at(None, AT, 10.0) == ("not read yet", "loading")


def test_the_clipboard_gets_no_control_character() -> None:
    assert strip_controls("openstack server show \x1b]52;c;ZWNobw==\x07x\u202e\u200b") == \
        "openstack server show ]52;c;ZWNobw==x"
