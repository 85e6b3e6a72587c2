"""A suspect queue judged from the broker's own sample history, in one GET (`stacktop snapshot`).

`GET /api/queues/{vhost}/{name}` with HISTORY_PARAMS answers the queue's current `consumers` and, for the last
HISTORY_AGE_S seconds on a HISTORY_INCR_S grid, `messages_details.samples` (its length) and
`message_stats.deliver_get_details.samples` (its deliveries counter: deliver, deliver_no_ack, get, get_no_ack),
each a list of `{"sample": n, "timestamp": ms}`, newest first. The broker pads a window longer than the queue's
life with zero lengths, and carries its last value forward to the current interval; a counter it has never
counted (no delivery yet) is left out of `message_stats`.

judge_history() reads that answer as the second sample of the 2-poll rule (tui.rules.queues):

- "held": no consumer now, and messages held with no delivery for at least `window_s` of the samples' own
  timestamps (at least two statistics ticks apart): confirmed.
- "clear": the answer contradicts the listing (a consumer now, or no message in the newest sample): not
  confirmed, as a second poll that no longer sees the queue stuck.
- "short": the history does not show `window_s` (a queue younger than the window, messages or deliveries that
  began inside it) or cannot be read (missing, hostile or odd samples): the caller falls back to a second
  sample after the broker's next statistics tick.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from tui.collectors.rabbitmq_payload import MAX_COUNT

HISTORY_AGE_S = 60
HISTORY_INCR_S = 5
HISTORY_WINDOW_S = 10.0  # how long the history must show the queue held with nobody taking messages
HISTORY_PARAMS: dict[str, Any] = {
    "lengths_age": HISTORY_AGE_S, "lengths_incr": HISTORY_INCR_S,
    "msg_rates_age": HISTORY_AGE_S, "msg_rates_incr": HISTORY_INCR_S,
    "columns": "consumers,messages,messages_details,message_stats",
}
MAX_SAMPLES = 1000  # more samples than a 60 s window holds at any grid: the answer is not the broker's

Verdict = Literal["held", "clear", "short"]


@dataclass(frozen=True, slots=True)
class HistoryVerdict:
    """What one queue's history says; held_s: how long it shows messages held with no delivery (seconds)."""

    kind: Verdict
    held_s: float = 0.0
    reason: str = ""


def _samples(details: Any) -> list[tuple[int, int]] | None:
    """(timestamp ms, sample) newest first, or None when the samples are missing or not the broker's shape
    (a non-integer sample or timestamp, a negative count, a number beyond MAX_COUNT, too many entries, one
    timestamp twice)."""
    if not isinstance(details, dict):
        return None
    raw = details.get("samples")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_SAMPLES:
        return None
    out: dict[int, int] = {}
    for entry in raw:
        if not isinstance(entry, dict):
            return None
        ts, value = entry.get("timestamp"), entry.get("sample")
        if type(ts) is not int or type(value) is not int or value < 0 or ts in out:
            return None
        if abs(ts) > MAX_COUNT or value > MAX_COUNT:  # absurd: no arithmetic on a 400-digit number
            return None
        out[ts] = value
    return sorted(out.items(), reverse=True)


def _quiet_since(deliveries: list[tuple[int, int]]) -> int:
    """The oldest timestamp from which the deliveries counter stays at its newest value (no delivery since)."""
    newest = deliveries[0][1]
    since = deliveries[0][0]
    for ts, value in deliveries:
        if value != newest:
            break
        since = ts
    return since


def judge_history(payload: Any, window_s: float = HISTORY_WINDOW_S) -> HistoryVerdict:
    """The verdict on one suspect queue from its GET with HISTORY_PARAMS (see the module docstring)."""
    if not isinstance(payload, dict):
        return HistoryVerdict("short", reason="not a queue object")
    consumers = payload.get("consumers")
    if type(consumers) is not int or consumers < 0:
        return HistoryVerdict("short", reason="consumers not told")
    if consumers > 0:
        return HistoryVerdict("clear", reason=f"{consumers} consumer(s) now")
    lengths = _samples(payload.get("messages_details"))
    if lengths is None:
        return HistoryVerdict("short", reason="no length samples")
    if lengths[0][1] == 0:
        return HistoryVerdict("clear", reason="no message in the newest sample")
    newest_ts = lengths[0][0]
    held_from = newest_ts
    for ts, value in lengths:
        if value == 0:
            break
        held_from = ts
    stats = payload.get("message_stats")
    if not isinstance(stats, dict):
        # no message statistics at all: whether anything was delivered is not told
        return HistoryVerdict("short", reason="no message statistics")
    if "deliver_get_details" in stats or "deliver_get" in stats:
        deliveries = _samples(stats.get("deliver_get_details"))
        if deliveries is None:
            return HistoryVerdict("short", reason="no delivery samples")
        held_from = max(held_from, _quiet_since(deliveries))
    held_s = max(0, newest_ts - held_from) / 1000.0
    if held_s >= window_s:
        return HistoryVerdict("held", held_s)
    return HistoryVerdict("short", held_s, reason=f"held {held_s:g}s of the {window_s:g}s window")
