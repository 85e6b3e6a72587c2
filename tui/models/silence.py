"""Silenced findings: a known finding acknowledged for a while (Alertmanager's silences, per finding).

A silence is keyed by the finding's identity (kind, subject) and ends at a wall-clock time. While it lasts the
finding stays in the findings pane (dimmed, saying until when) but no longer colours the cloud's badge, counts in
the pane's header or raises a toast. Silences belong to one cloud and one session; the journal records each one
(and its end when lifted early), so the review sees what was acknowledged and when. Pure: no Textual here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui.models.finding import Finding

Key = tuple[str, str]  # (kind, subject): Finding.key

DEFAULT_S = 3600.0  # `x` silences for an hour
MIN_S = 60.0
MAX_S = 7 * 86400.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.I)


def parse_duration(text: str) -> float:
    """"90s", "30m", "2h", "1d" (a bare number is minutes) -> seconds, between a minute and a week. Raises
    ValueError with one line that says what to type."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text[:40]!r} - give e.g. 30m, 2h or 1d")
    seconds = float(m.group(1)) * _UNITS[(m.group(2) or "m").lower()]
    if not MIN_S <= seconds <= MAX_S:
        raise ValueError(f"{text.strip()[:40]}: a silence lasts between 1m and 7d")
    return seconds


class Silences:
    """The silences of one cloud: (kind, subject) -> until (epoch seconds). Expired ones drop out when read."""

    def __init__(self, until_by_key: dict[Key, float] | None = None) -> None:
        self.until_by_key: dict[Key, float] = {} if until_by_key is None else until_by_key

    def add(self, key: Key, until: float) -> None:
        self.until_by_key[key] = until

    def remove(self, key: Key) -> bool:
        return self.until_by_key.pop(key, None) is not None

    def until(self, key: Key, now: float) -> float | None:
        """When the silence on `key` ends, or None (no silence, or it has ended)."""
        end = self.until_by_key.get(key)
        if end is None:
            return None
        if end <= now:
            del self.until_by_key[key]
            return None
        return end

    def silenced(self, finding: Finding, now: float) -> bool:
        return self.until(finding.key, now) is not None

    def active(self, now: float) -> dict[Key, float]:
        for key in [k for k, end in self.until_by_key.items() if end <= now]:
            del self.until_by_key[key]
        return dict(self.until_by_key)
