"""The pure parts of live drill-down blocks: what stands beside a block's title, a host read that could not read
a part keeping the last good one, and the instance screen's server state the re-reads follow."""

from __future__ import annotations

from datetime import UTC, datetime

from rich.text import Text

from tui.models.instances import Fault, Server
from tui.models.placement import HostDetail, HostServer
from tui.screens.host import merge_read, server_rows, servers_title
from tui.screens.instance import server_state
from tui.screens.live import own_block_read
from tui.widgets.read_at import block_stamp

T0 = 1_800_000_000.0
WHEN = datetime.fromtimestamp(T0, UTC)


def test_own_block_read_says_its_age_then_stale_then_paused() -> None:
    assert own_block_read(T0, T0 + 5, 30.0) == ("read 08:00:00 UTC (<1m ago)", "ok")
    assert own_block_read(T0, T0 + 91, 30.0) == ("STALE · read 08:00:00 UTC (1m ago)", "stale")
    assert own_block_read(T0, T0 + 10, 30.0, error="refused") == ("STALE · read 08:00:00 UTC (10s ago) · refused",
                                                                  "stale")
    assert own_block_read(T0, T0 + 500, 30.0, paused=True) == ("PAUSED · read 08:00:00 UTC", "ok")
    assert own_block_read(None, T0, 30.0, error="refused") == ("STALE · could not read: refused", "stale")


def test_block_stamp_marks_stale_and_keeps_hostile_text_inert() -> None:
    assert Text.from_markup(block_stamp([("read 08:00:00 UTC", "ok")])).plain == "  read 08:00:00 UTC"
    hostile = "[bold red]x[/] [link=https://evil]y[/link]"
    stamp = block_stamp([("control plane read 08:00:00 UTC", "ok"), (hostile, "stale")])
    assert Text.from_markup(stamp).plain == f"  STALE · control plane read 08:00:00 UTC  ·  {hostile}"
    assert block_stamp([]) == ""


def test_a_part_the_new_read_could_not_read_keeps_the_last_good_one_and_its_time() -> None:
    old = HostDetail(host="c1", taken_at=WHEN, servers=(HostServer(id="s1", name="web", status="ACTIVE"),))
    new = HostDetail(host="c1", taken_at=WHEN, errors={"servers": "connection refused"})
    shown, times, failed = merge_read(old, new, T0 + 30, {"servers": T0, "ports": T0})
    assert shown.servers == old.servers and failed["servers"] == "connection refused"
    assert times["servers"] == T0 and times["ports"] == T0 + 30
    title = servers_title(shown, block_stamp([("STALE · read 08:00:00 UTC", "stale")]))
    plain = Text.from_markup(title).plain
    assert plain == ("Servers on this host (1, 0 in a task state or not ACTIVE/SHUTOFF; enter opens one)  STALE · "
                     "read 08:00:00 UTC")
    assert [(key, [str(c) for c in cells]) for key, cells in server_rows(shown)] == \
        [("s1", ["web", "ACTIVE", "-", "-", "-", "s1"])]
    # never read well: nothing to keep, the failure stands
    shown, times, failed = merge_read(None, new, T0, {})
    assert shown.servers == () and "servers" not in times and failed["servers"] == "connection refused"


def test_server_state_ignores_what_the_listing_and_the_get_report_differently() -> None:
    a = Server(id="s", status="BUILD", task_state="scheduling", updated_at=WHEN)
    b = Server(id="s", status="BUILD", task_state="scheduling", updated_at=None, task_since=WHEN)
    assert server_state(a) == server_state(b)
    err = Server(id="s", status="ERROR", vm_state="error", fault=Fault(code=500, message="No valid host"))
    assert server_state(err) != server_state(a)
