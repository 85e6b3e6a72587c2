"""How fresh a source's data is, in the words a pane border shows: `ok · every 10s`, `STALE 47s`, `ERROR ...`."""

from __future__ import annotations

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


def freshness(obs: Observation | None, now: float, interval: float, *, configured: bool = True) -> tuple[str, str]:
    """Return (text, level) where level is one of: off, loading, ok, stale, error."""
    if not configured:
        return "not configured", "off"
    if obs is None or obs.tried_at is None:
        return "loading...", "loading"
    if obs.error is not None:
        last = f"last ok {human_age(obs.age(now))} ago" if obs.ok_at is not None else "never ok"
        return f"ERROR {obs.error} - {last}", "error"
    if obs.is_stale(now, interval):
        return f"STALE {human_age(obs.age(now))}", "stale"
    # no ticking age while fresh: the border (and so the terminal) changes only when the state does
    return f"ok · every {human_age(interval)}", "ok"
