"""How fresh a source's data is, in the words a pane border shows: `ok · every 10s`, `STALE 47s`, `ERROR ...`,
`PAUSED · read 12:03:04`."""

from __future__ import annotations

import time

from tui.models.observation import Observation


def human_age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    if seconds < 86400:
        hours, rest = divmod(seconds, 3600)
        return f"{hours}h{rest // 60:02d}m"
    return f"{seconds // 86400}d"


def coarse_age(seconds: float | None) -> str:
    """An age that changes at most once a minute: `<1m`, `5m`, `2h05m`, `3d`. Tables and finding summaries
    show these, so a state that holds (a service down for an hour) does not repaint the terminal every poll;
    the exact seconds stay in the evidence."""
    if seconds is not None and seconds < 60:
        return "<1m"
    return human_age(seconds)


TIME_ZONE = "UTC"  # every time on screen is UTC (the header says so); drill-downs and exports write a Z


def clock_time(epoch: float) -> str:
    """HH:MM:SS of an epoch in UTC: the panes' times (the header labels them UTC)."""
    return time.strftime("%H:%M:%S", time.gmtime(epoch))


def table_time(epoch: float, now: float | None, ages: bool = False) -> str:
    """A moment in a table cell: HH:MM:SS UTC, or with `ages` (the `t` toggle) how long ago, coarse (`5m ago`)."""
    if ages and now is not None:
        return f"{coarse_age(now - epoch)} ago"
    return clock_time(epoch)


def utc_clock_time(epoch: float) -> str:
    """HH:MM:SS of an epoch in UTC, labelled: `14:13:20 UTC` (the drill-down screens' read-at times)."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(epoch))


def read_at(obs: Observation | None, now: float, interval: float, *, paused: bool = False,
            what: str = "") -> tuple[str, str]:
    """What a drill-down screen says about the observation it shows, and its level (ok, stale, loading):
    `read 14:13:20 UTC`; `STALE · read 14:13:20 UTC (47s ago)` when the source's last attempt failed or its
    data is older than ~3 intervals (Observation.is_stale), with the error; `PAUSED · read ...` while refresh
    is paused (old on purpose, not stale). what: the source's name, put before `read` (`instances read ...`)."""
    name = f"{what} " if what else ""
    if obs is None or obs.ok_at is None:
        if obs is not None and obs.error is not None:
            return f"STALE · {name}never read: {obs.error}", "stale"
        return f"{name}not read yet", "loading"
    read = f"{name}read {utc_clock_time(obs.ok_at)}"
    if paused:
        return f"PAUSED · {read}", "ok"
    if obs.is_stale(now, interval):
        error = f" · {obs.error}" if obs.error is not None else ""
        return f"STALE · {read} ({human_age(obs.age(now))} ago){error}", "stale"
    return read, "ok"


def freshness(obs: Observation | None, now: float, interval: float, *, configured: bool = True,
              paused: bool = False) -> tuple[str, str]:
    """Return (text, level) where level is one of: off, loading, ok, stale, error. paused: refresh is paused,
    so the data is as old as it is on purpose: the border says when it was read, not that it is stale."""
    if not configured:
        return "not configured", "off"
    if paused:
        read = f"read {clock_time(obs.ok_at)}" if obs is not None and obs.ok_at is not None else "not read yet"
        failing = obs is not None and obs.error is not None
        return (f"PAUSED · {read}" + (f" · ERROR {obs.error}" if failing and obs else ""),
                "error" if failing else "ok")
    if obs is None or obs.tried_at is None:
        return "loading...", "loading"
    if obs.error is not None:
        last = f"last ok {human_age(obs.age(now))} ago" if obs.ok_at is not None else "never ok"
        return f"ERROR {obs.error} - {last}", "error"
    if obs.is_stale(now, interval):
        return f"STALE {human_age(obs.age(now))}", "stale"
    # no ticking age while fresh: the border (and so the terminal) changes only when the state does
    return f"ok · every {human_age(interval)}", "ok"
