"""When nothing changes, the panes' rows do not either: a new poll in which only heartbeats arrived (ages
reset), a down service aged by one poll, a server one poll longer in its task_state give the same cells, so
the tables (and the terminal) stay still. A service going late or down is a change and shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tui.config import Thresholds
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.judge import assess_services
from tui.widgets.services_pane import build_rows

TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60)
T0 = datetime(2026, 12, 2, 21, 0, 0, tzinfo=UTC)


def snapshot(read_at: datetime, ages: dict[str, float]) -> ServicesSnapshot:
    rows = tuple(ServiceRow(section="compute", binary="nova-compute", host=host, id=host, zone="nova",
                            updated_at=read_at - timedelta(seconds=age), age_at_read_s=age,
                            state="down" if age > 60 else "up")
                 for host, age in ages.items())
    return ServicesSnapshot(taken_at=read_at, keystone=KeystoneCheck("http://ks:5000/v3", "c", ok=True),
                            compute=SectionRead("compute", rows, read_at), network=SectionRead("network", (), read_at),
                            volume=SectionRead("volume", (), read_at))


def cells(snap: ServicesSnapshot, at: datetime) -> list[tuple[str, tuple[str, ...]]]:
    """The pane's rows for the poll at `at`, judged as the runner judges it (assess_services)."""
    return [(key, tuple(getattr(c, "plain", str(c)) for c in row))
            for key, row in build_rows(assess_services(snap, at, TH), at, at)]


def test_heartbeats_arriving_and_a_down_service_aging_change_no_cell() -> None:
    first = snapshot(T0, {"c1": 2, "c2": 9, "c3": 130})
    second = snapshot(T0 + timedelta(seconds=10), {"c1": 7, "c2": 1, "c3": 140})
    assert cells(first, T0) == cells(second, T0 + timedelta(seconds=10))
    by_key = dict(cells(first, T0))
    assert by_key["compute:c1"][3] == "≤ 30s"  # within the late mark (half of service_down_time)
    assert by_key["compute:c3"][3] == "2m ago"


def test_a_service_going_late_then_down_is_a_change() -> None:
    healthy = dict(cells(snapshot(T0, {"c1": 20}), T0))
    late = dict(cells(snapshot(T0 + timedelta(seconds=15), {"c1": 35}), T0 + timedelta(seconds=15)))
    down = dict(cells(snapshot(T0 + timedelta(seconds=45), {"c1": 65}), T0 + timedelta(seconds=45)))
    assert healthy["compute:c1"][2:4] == ("up", "≤ 30s")
    assert late["compute:c1"][2:4] == ("LATE", "35s · down in 25s")
    assert down["compute:c1"][2:4] == ("DOWN", "1m ago")

