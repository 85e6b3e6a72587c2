"""`stacktop replay JOURNAL`: play a recorded journal back through the same panes, as collectors.

The journal's snapshot events are written and decoded by tui.journal_codec. Replay: a ReplayClock runs from
the journal's first event at `speed` x real time, pauses, and stops at its last; one ReplayCollector per
recorded source answers each poll with the source's state at the clock's time, stamped with the time that
snapshot was recorded (so ages are counted from the recorded poll): the snapshot and the findings as recorded (not
re-evaluated: a replay shows what was seen, in the same order), or a SourceError with the recorded error while
the source was failing. The app runs them through its usual runners and panes (a collector, not a second UI
path).
"""

from __future__ import annotations

import dataclasses
import itertools
import time
import typing
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from tui.collectors.base import BaseCollector
from tui.errors import SourceAbsent, SourceError
from tui.journal_codec import BadSnapshot, absolute, apply, decode, duplicate_id, load_class
from tui.models.finding import Finding


# ------------------------------------------------------------------------------------------------ timeline
@dataclasses.dataclass
class _Entry:
    at: float
    kind: str  # "snapshot" | "failed" | "recovered"
    event: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class SourceState:
    snapshot: Any
    findings: tuple[Finding, ...]
    error: str | None
    at: float | None


def _epoch(event: Mapping[str, Any]) -> float | None:
    at = event.get("at")
    if isinstance(at, (int, float)):
        return float(at)
    ts = event.get("ts")
    if isinstance(ts, str):
        try:
            return datetime.fromisoformat(ts).timestamp()
        except ValueError:
            return None
    return None


def _why(exc: Exception) -> str:
    """A few words on why a recorded snapshot cannot be rebuilt: a ValueError's own text, else its type."""
    return str(exc)[:200] if isinstance(exc, ValueError) and str(exc) else type(exc).__name__


def journal_files(path: str | Path) -> list[Path]:
    """The journal and its rotated predecessors, oldest first (journal.jsonl.3, .2, .1, journal.jsonl)."""
    base = Path(path)
    older = []
    for candidate in base.parent.glob(base.name + ".*"):
        suffix = candidate.name[len(base.name) + 1:]
        if suffix.isdigit():
            older.append((int(suffix), candidate))
    return [p for _, p in sorted(older, reverse=True)] + [base]


def without_repeats(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events of several files of one journal, oldest first, without the copies of notes (and the other
    lines the recorder carries into each new file: `"carried": true`) already read from an earlier file."""
    import json

    from tui.recorder import CARRIED_TYPES

    seen: set[str] = set()
    out = []
    for e in events:
        if e.get("type") in CARRIED_TYPES:
            key = json.dumps({k: v for k, v in e.items() if k != "carried"}, sort_keys=True, default=str)
            if e.get("carried") and key in seen:
                continue
            seen.add(key)
        out.append(e)
    return out


class Timeline:
    """A journal's events per source, and each source's state at any time."""

    def __init__(self, events: Iterable[Mapping[str, Any]], cloud: str | None = None) -> None:
        """cloud: of a journal of several clouds, the one to play (default: the first with a snapshot)."""
        self.events = [dict(e) for e in events]
        if cloud is None:
            cloud = next((e["cloud"] for e in self.events if e.get("type") == "snapshot" and e.get("cloud")), None)
        self.cloud = cloud
        self.per_source: dict[str, list[_Entry]] = {}
        self.notes: list[tuple[float, dict[str, Any]]] = []
        times = []
        cut: dict[str, bool] = {}  # per source: is its latest snapshot cut (a marker shown when it becomes so)
        for e in self.events:
            at = _epoch(e)
            if at is None:
                continue
            if not e.get("carried"):  # a note carried into this file from an earlier one: not its time span
                times.append(at)
            kind = e.get("type")
            source = e.get("source")
            if e.get("cloud") is not None and e.get("cloud") != cloud and kind != "note":
                continue  # another cloud's sources
            if kind == "snapshot" and source:
                self.per_source.setdefault(source, []).append(_Entry(at, "snapshot", e))
                marked = isinstance(e.get("cut"), dict)
                if marked and not cut.get(source):
                    self.notes.append((at, {"type": "cut", "source": source, "cut": e["cut"]}))
                cut[source] = marked
            elif kind == "snapshot_omitted" and source:
                self.notes.append((at, e))
            elif kind in ("source_failed", "source_recovered") and source:
                self.per_source.setdefault(source, []).append(_Entry(at, kind[7:], e))
            elif kind in ("note", "exercise"):
                self.notes.append((at, e))
        self.start = min(times) if times else time.time()
        self.end = max(times) if times else self.start
        self._cursor: dict[str, tuple[int, Any, Any, tuple[Finding, ...], str | None, float | None]] = {}
        self._damage: dict[str, str | None] = {}  # per source: why its latest snapshot cannot be rebuilt

    @classmethod
    def from_journal(cls, path: str | Path) -> Timeline:
        from tui.recorder import read_journal

        events: list[dict[str, Any]] = []
        for file in journal_files(path):
            if file.exists():
                events.extend(read_journal(file))
        return cls(without_repeats(events))

    @property
    def sources(self) -> list[str]:
        return [s for s, entries in self.per_source.items() if any(e.kind == "snapshot" for e in entries)]

    def recorded_interval(self, source: str) -> float | None:
        """How often the source was polled while recording: the median gap between its recorded snapshots
        (None with fewer than two)."""
        times = [e.at for e in self.per_source.get(source, []) if e.kind == "snapshot"]
        gaps = sorted(b - a for a, b in itertools.pairwise(times) if b > a)
        return gaps[len(gaps) // 2] if gaps else None

    def state_at(self, source: str, t: float) -> SourceState | None:
        """The source's state at time t (None before its first recorded snapshot). A recorded snapshot that cannot
        be rebuilt (a damaged patch, JSON that does not fit its class) is BadSnapshot until the source's next
        full snapshot."""
        entries = self.per_source.get(source, [])
        index, body, snap, findings, error, ok_at = self._cursor.get(source, (0, None, None, (), None, None))
        damage = self._damage.get(source)
        if index > 0 and entries[index - 1].at > t:  # went back in time: start over
            index, body, snap, findings, error, ok_at, damage = 0, None, None, (), None, None, None
        dirty, cls_name = False, None
        while index < len(entries) and entries[index].at <= t:
            entry = entries[index]
            e = entry.event
            index += 1
            if entry.kind == "snapshot":
                try:
                    if "full" in e:
                        body = e["full"]
                    elif body is not None and e.get("delta") is not None:
                        body = apply(body, e["delta"])
                    elif body is None:  # a patch without its base (file cut by rotation): wait for a full one
                        continue
                    if "findings" in e:
                        findings = tuple(Finding.from_dict(f) for f in e["findings"])
                except Exception as exc:  # damaged here: the source waits for its next full snapshot
                    body, snap, dirty, damage = None, None, False, _why(exc)
                    continue
                cls_name, dirty, damage = e.get("class"), True, None
                error, ok_at = None, entry.at
            elif entry.kind == "failed":
                error = str(e.get("error") or "failed")
            elif entry.kind == "recovered":
                error = None
        if dirty:  # decoded once per poll that moved, however many patches it applied
            twice = duplicate_id(body)
            if twice is not None:  # two sessions' patches on one snapshot: no table can show it
                self._cursor.pop(source, None)
                raise ValueError(f"duplicate row keys ({twice})")
            try:
                cls = load_class(cls_name)
                if cls is None:  # a pane is handed the snapshot class it shows, never plain JSON
                    raise BadSnapshot("the snapshot names no class stacktop replays")
                snap = decode(cls, absolute(body))
            except Exception as exc:
                snap, damage = None, _why(exc)
        self._cursor[source] = (index, body, snap, findings, error, ok_at)
        self._damage[source] = damage
        if snap is None and damage is not None:
            raise BadSnapshot(damage)
        if snap is None and error is None:
            return None
        return SourceState(snap, findings, error, ok_at)

    def notes_between(self, t0: float, t1: float) -> list[dict[str, Any]]:
        return [e for at, e in self.notes if t0 < at <= t1]


def cut_message(event: Mapping[str, Any]) -> str:
    """What replay says when it reaches a snapshot the recorder cut to fit its journal file (a `cut` marker of
    the Timeline) or could not write at all (`snapshot_omitted`)."""
    source = event.get("source")
    if event.get("type") == "snapshot_omitted":
        return (f"{source}: a snapshot was not recorded here ({event.get('bytes')} bytes, over the journal's line "
                f"limit of {event.get('limit')}): the pane shows the one before")
    cut = event.get("cut") or {}
    return (f"{source}: recorded cut to fit the journal file ({cut.get('rows', 0)} rows left out, "
            f"{cut.get('texts', 0)} long texts shortened): raise [recorder] max_file_mb to record it whole")


# ------------------------------------------------------------------------------------------ clock, collectors
RECORDED_INTERVAL_DEFAULT = 10.0  # a source recorded once: its staleness interval is at least this (seconds)


class ReplayClock:
    """Virtual time: starts at `start`, runs at `speed` x real time, pauses, can jump, and stops at `end` (the
    journal's last event: past it nothing was recorded, so no age may grow beyond it)."""

    def __init__(self, start: float, speed: float = 1.0, *, real: typing.Callable[[], float] = time.monotonic,
                 end: float | None = None) -> None:
        self._real = real
        self._base = start
        self._anchor = real()
        self.speed = speed
        self.paused = False
        self.end = end

    def now(self) -> float:
        at = self._base if self.paused else self._base + (self._real() - self._anchor) * self.speed
        return at if self.end is None else min(at, self.end)

    def _rebase(self) -> None:
        self._base, self._anchor = self.now(), self._real()

    def pause(self) -> None:
        self._rebase()
        self.paused = True

    def resume(self) -> None:
        self._anchor = self._real()
        self.paused = False

    def set_speed(self, speed: float) -> None:
        self._rebase()
        self.speed = max(0.05, min(1000.0, speed))

    def jump(self, t: float) -> None:
        self._base, self._anchor = t, self._real()


class ReplayCollector(BaseCollector):
    """Answers each poll with one source's recorded state at the replay clock's time.

    interval: how often the source was polled while recording (Timeline.recorded_interval), so that the
    replay judges staleness as the live session did; the replay itself polls every `poll_s` seconds of real
    time (tui.replay_app). recorded_at: when the snapshot of the last answer was recorded, the time its
    observation carries (the runner's ok_at): ages in a replay are counted from the recorded poll, not from the
    moment the replay happened to read it."""

    def __init__(self, timeline: Timeline, source: str, clock: ReplayClock, poll_s: float = 0.25) -> None:
        self.timeline = timeline
        self.name = source
        self.clock = clock
        self.poll_s = poll_s
        recorded = timeline.recorded_interval(source)
        # one recorded poll: no evidence of its cadence, and none that it went stale during the session
        self.interval = recorded if recorded is not None else max(RECORDED_INTERVAL_DEFAULT,
                                                                  timeline.end - timeline.start)
        self.timeout = 10.0
        self.recorded_at: float | None = None
        self._findings: tuple[int, tuple[Finding, ...]] = (0, ())

    async def collect(self) -> Any:
        try:
            state = self.timeline.state_at(self.name, self.clock.now())
        except Exception as exc:  # a hand-edited or damaged journal: this source's pane says so, replay goes on
            raise SourceError(f"replay: the recorded snapshot of {self.name} cannot be read "
                              f"({_why(exc)}) - the journal is damaged at this point") from None
        if state is None:
            raise SourceAbsent(f"replay: {self.name} was not recorded yet at this point of the journal")
        if state.error is not None:
            raise SourceError(state.error)
        self._findings = (id(state.snapshot), state.findings)
        self.recorded_at = state.at
        return state.snapshot

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        key, found = self._findings
        return list(found) if key == id(snapshot) else []


class Player:
    """What `stacktop replay` runs: the timeline, its clock and one collector per recorded source."""

    def __init__(self, timeline: Timeline, speed: float = 1.0, poll_s: float = 0.25, *,
                 real: typing.Callable[[], float] = time.monotonic) -> None:
        self.timeline = timeline
        self.clock = ReplayClock(timeline.start, speed, real=real, end=timeline.end)
        self.poll_s = poll_s
        self.collectors = [ReplayCollector(timeline, s, self.clock, poll_s) for s in timeline.sources]

    @classmethod
    def from_journal(cls, path: str | Path, speed: float = 1.0) -> Player:
        return cls(Timeline.from_journal(path), speed)

    @property
    def finished(self) -> bool:
        return self.clock.now() >= self.timeline.end

    def position(self) -> str:
        now = min(self.clock.now(), self.timeline.end)
        total = self.timeline.end - self.timeline.start
        return f"{now - self.timeline.start:.0f}/{total:.0f} s"
