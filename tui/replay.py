"""`stacktop replay JOURNAL`: play a recorded journal back through the same panes, as collectors.

The recorder writes, per source, a `snapshot` event whenever a poll's snapshot or findings changed: the first
one (and every FULL_EVERY-th, and the first after a rotation) in full, the others as a compact patch against
the previous one (SnapshotEncoder; lists of objects are patched by identity: a server by id, a queue by
vhost+name). Each event names the snapshot's class so replay can rebuild the frozen dataclass (decode()).

Replay: a ReplayClock runs from the journal's first event at `speed` x real time and pauses; one
ReplayCollector per recorded source answers each poll with the source's state at the clock's time: the
snapshot and the findings as recorded (not re-evaluated: a replay shows what was seen, in the same order), or
a SourceError with the recorded error while the source was failing. The app runs them through its usual
runners and panes (a collector, not a second UI path).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import time
import types
import typing
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

from tui.collectors.base import BaseCollector, SourceError
from tui.models.finding import Finding

FULL_EVERY = 200  # a full snapshot after this many patches of one source (bounds the cost of a seek)
IDENTITY_KEYS: tuple[tuple[str, ...], ...] = (("id",), ("vhost", "name"), ("address",), ("section", "binary", "host"),
                                              ("service_type", "url"), ("name",), ("key",), ("event",))


# ------------------------------------------------------------------------------------------------ encoding
class Encoder:
    """to_jsonable for snapshots, remembering the JSON of each frozen dataclass instance it saw last time:
    the instances collector reuses unchanged Server objects, so a 10,000-server snapshot costs one dict
    lookup per unchanged server, and the diff sees the very same dict (an `is` test)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Any]] = {}
        self._next: dict[int, tuple[Any, Any]] = {}

    def encode(self, value: Any) -> Any:
        self._next = {}
        try:
            return self._enc(value)
        finally:
            self._memo, self._next = self._next, {}

    def _enc(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, (datetime, date)):
            return value.isoformat()
        if isinstance(value, enum.Enum):
            return self._enc(value.value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            key = id(value)
            hit = self._memo.get(key) or self._next.get(key)
            if hit is not None and hit[0] is value:
                self._next[key] = hit
                return hit[1]
            out = {f.name: self._enc(getattr(value, f.name)) for f in dataclasses.fields(value)}
            self._next[key] = (value, out)
            return out
        if isinstance(value, Mapping):
            return {str(k): self._enc(v) for k, v in value.items()}
        if isinstance(value, (list, tuple, set, frozenset)):
            return [self._enc(v) for v in value]
        if hasattr(value, "to_dict") and callable(value.to_dict):
            return self._enc(value.to_dict())
        return str(value)


def _identity(old: list[Any], new: list[Any]) -> tuple[str, ...] | None:
    """The first IDENTITY_KEYS naming every element of both lists uniquely (None: patch the list whole)."""
    if not old or not new or not all(isinstance(e, dict) for e in old) or not all(isinstance(e, dict) for e in new):
        return None
    for keys in IDENTITY_KEYS:
        ok = True
        for items in (old, new):
            idents = [_ident(e, keys) for e in items]
            if None in idents or len(set(idents)) != len(idents):
                ok = False
                break
        if ok:
            return keys
    return None


def _ident(e: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    if len(keys) == 1:
        v = e.get(keys[0])
        return None if v is None or v == "" or isinstance(v, (dict, list)) else str(v)
    parts = []
    for k in keys:
        v = e.get(k)
        if v is None or v == "" or isinstance(v, (dict, list)):
            return None
        parts.append(str(v))
    return "\x1f".join(parts)


def diff(old: Any, new: Any) -> dict[str, Any] | None:
    """A patch turning old into new (None when equal). {"=": v} replaces; {"d": {k: patch}, "x": [gone]}
    patches a dict; {"L": keys, "u": {id: patch}, "n": {id: v}, "o": [ids]} patches a list by identity
    ("o", the new order, only when membership or order changed)."""
    if old is new:
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        d: dict[str, Any] = {}
        for k, v in new.items():
            if k not in old:
                d[k] = {"=": v}
            else:
                p = diff(old[k], v)
                if p is not None:
                    d[k] = p
        gone = [k for k in old if k not in new]
        if not d and not gone:
            return None
        patch: dict[str, Any] = {"d": d}
        if gone:
            patch["x"] = gone
        return patch
    if isinstance(old, list) and isinstance(new, list):
        keys = _identity(old, new)
        if keys is not None and len(new) > 4:
            old_ids = [_ident(e, keys) for e in old]
            by_id = dict(zip(old_ids, old, strict=True))
            ids = [_ident(e, keys) for e in new]
            upd: dict[str, Any] = {}
            add: dict[str, Any] = {}
            for ident, e in zip(ids, new, strict=True):
                assert ident is not None
                if ident in by_id:
                    p = diff(by_id[ident], e)
                    if p is not None:
                        upd[ident] = p
                else:
                    add[ident] = e
            same_order = ids == old_ids
            if not upd and not add and same_order:
                return None
            lp: dict[str, Any] = {"L": list(keys), "u": upd, "n": add}
            if not same_order:
                lp["o"] = ids
            return lp
    if old == new:
        return None
    return {"=": new}


def apply(old: Any, patch: Mapping[str, Any]) -> Any:
    if "=" in patch:
        return patch["="]
    if "d" in patch:
        base = dict(old) if isinstance(old, dict) else {}
        for k in patch.get("x", ()):
            base.pop(k, None)
        for k, p in patch["d"].items():
            base[k] = apply(base.get(k), p)
        return base
    if "L" in patch:
        keys = tuple(patch["L"])
        by_id = {_ident(e, keys): e for e in old or ()}
        ids = patch.get("o") or list(by_id)
        upd, add = patch.get("u", {}), patch.get("n", {})
        return [add[i] if i in add else apply(by_id[i], upd[i]) if i in upd else by_id[i] for i in ids]
    raise ValueError(f"not a snapshot patch: {sorted(patch)[:3]}")


def class_name(value: Any) -> str | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return f"{cls.__module__}:{cls.__qualname__}"
    return None


class SnapshotEncoder:
    """Per source: the last JSON written, to emit full snapshots or patches. Used by the journal's writer
    thread (the encoding of a big snapshot never runs on the UI loop)."""

    def __init__(self, full_every: int = FULL_EVERY) -> None:
        self.full_every = full_every
        self._last: dict[str, tuple[Any, Any, int]] = {}  # source -> (json, findings json, patches since full)
        self._encoders: dict[str, Encoder] = {}

    def reset(self) -> None:
        """The next snapshot of every source is written in full (after a rotation: each file stands alone)."""
        self._last.clear()

    def event(self, source: str, at: float | None, snapshot: Any, findings: Iterable[Finding]) -> dict[str, Any] | None:
        """The `snapshot` event for this poll, or None when nothing changed since the last one written."""
        encoder = self._encoders.setdefault(source, Encoder())
        body = encoder.encode(snapshot)
        found = [f.to_dict() for f in findings]
        last = self._last.get(source)
        event: dict[str, Any] = {"type": "snapshot", "source": source, "at": at, "class": class_name(snapshot)}
        if last is None or last[2] >= self.full_every:
            event["full"] = body
            event["findings"] = found
            self._last[source] = (body, found, 0)
            return event
        patch = diff(last[0], body)
        if patch is None and found == last[1]:
            return None
        event["delta"] = patch
        if found != last[1]:
            event["findings"] = found
        self._last[source] = (body, found, last[2] + 1)
        return event


# ------------------------------------------------------------------------------------------------ decoding
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:
        return {f.name: Any for f in dataclasses.fields(cls)}


def decode(tp: Any, value: Any) -> Any:
    """Rebuild a value of type `tp` (frozen dataclasses, datetimes, tuples, mappings...) from its JSON."""
    if value is None or tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        for option in options:
            if _fits(option, value):
                return decode(option, value)
        return value
    if origin is typing.Literal:
        return value
    if origin in (tuple,):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in value)
        if args:
            return tuple(decode(a, v) for a, v in zip(args, value, strict=False))
        return tuple(value)
    if origin in (list, set, frozenset) or (origin is not None and origin.__name__ in ("Sequence", "Iterable")):
        inner = args[0] if args else Any
        items = [decode(inner, v) for v in value]
        return origin(items) if origin in (set, frozenset) else (items if origin is list else tuple(items))
    if origin in (dict,) or (origin is not None and getattr(origin, "__name__", "") in ("Mapping", "MutableMapping")):
        inner = args[1] if len(args) == 2 else Any
        return {k: decode(inner, v) for k, v in value.items()}
    if isinstance(tp, type):
        if tp is datetime and isinstance(value, str):
            return datetime.fromisoformat(value)
        if tp is date and isinstance(value, str):
            return date.fromisoformat(value)
        if issubclass(tp, enum.Enum):
            return tp(value)
        if tp is float and isinstance(value, int):
            return float(value)
        if dataclasses.is_dataclass(tp) and isinstance(value, dict):
            hints = _hints(tp)
            kwargs = {f.name: decode(hints.get(f.name, Any), value[f.name])
                      for f in dataclasses.fields(tp) if f.init and f.name in value}
            return tp(**kwargs)
    return value


def _fits(tp: Any, value: Any) -> bool:
    origin = typing.get_origin(tp) or tp
    if origin is typing.Literal:
        return value in typing.get_args(tp)
    if origin is Any:
        return True
    if isinstance(value, dict):
        return (isinstance(origin, type) and dataclasses.is_dataclass(origin)) or origin in (dict,) or \
            getattr(origin, "__name__", "") in ("Mapping", "MutableMapping")
    if isinstance(value, list):
        return origin in (tuple, list, set, frozenset) or getattr(origin, "__name__", "") in ("Sequence", "Iterable")
    if isinstance(value, str):
        if origin in (datetime, date):
            try:
                (datetime if origin is datetime else date).fromisoformat(value)
            except ValueError:
                return False
            return True
        return origin is str or (isinstance(origin, type) and issubclass(origin, enum.Enum))
    if isinstance(value, bool):
        return origin is bool
    if isinstance(value, (int, float)):
        return origin in (int, float) and not (origin is int and isinstance(value, float))
    return False


def load_class(name: str | None) -> type | None:
    if not name:
        return None
    module, _, qual = name.partition(":")
    if not module.startswith("tui."):
        return None  # only stacktop's own snapshot types are rebuilt
    try:
        obj: Any = importlib.import_module(module)
        for part in qual.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    return obj if isinstance(obj, type) else None


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


def journal_files(path: str | Path) -> list[Path]:
    """The journal and its rotated predecessors, oldest first (journal.jsonl.3, .2, .1, journal.jsonl)."""
    base = Path(path)
    older = []
    for candidate in base.parent.glob(base.name + ".*"):
        suffix = candidate.name[len(base.name) + 1:]
        if suffix.isdigit():
            older.append((int(suffix), candidate))
    return [p for _, p in sorted(older, reverse=True)] + [base]


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
        for e in self.events:
            at = _epoch(e)
            if at is None:
                continue
            times.append(at)
            kind = e.get("type")
            source = e.get("source")
            if e.get("cloud") is not None and e.get("cloud") != cloud and kind != "note":
                continue  # another cloud's sources
            if kind == "snapshot" and source:
                self.per_source.setdefault(source, []).append(_Entry(at, "snapshot", e))
            elif kind in ("source_failed", "source_recovered") and source:
                self.per_source.setdefault(source, []).append(_Entry(at, kind[7:], e))
            elif kind in ("note", "exercise"):
                self.notes.append((at, e))
        self.start = min(times) if times else time.time()
        self.end = max(times) if times else self.start
        self._cursor: dict[str, tuple[int, Any, Any, tuple[Finding, ...], str | None, float | None]] = {}

    @classmethod
    def from_journal(cls, path: str | Path) -> Timeline:
        from tui.recorder import read_journal

        events: list[dict[str, Any]] = []
        for file in journal_files(path):
            if file.exists():
                events.extend(read_journal(file))
        return cls(events)

    @property
    def sources(self) -> list[str]:
        return [s for s, entries in self.per_source.items() if any(e.kind == "snapshot" for e in entries)]

    def state_at(self, source: str, t: float) -> SourceState | None:
        """The source's state at time t (None before its first recorded snapshot)."""
        entries = self.per_source.get(source, [])
        index, body, snap, findings, error, ok_at = self._cursor.get(source, (0, None, None, (), None, None))
        if index > 0 and entries[index - 1].at > t:  # went back in time: start over
            index, body, snap, findings, error, ok_at = 0, None, None, (), None, None
        dirty, cls_name = False, None
        while index < len(entries) and entries[index].at <= t:
            entry = entries[index]
            e = entry.event
            if entry.kind == "snapshot":
                if "full" in e:
                    body = e["full"]
                elif body is not None and e.get("delta") is not None:
                    body = apply(body, e["delta"])
                elif body is None:  # a patch without its base (file cut by rotation): wait for a full one
                    index += 1
                    continue
                if "findings" in e:
                    findings = tuple(Finding.from_dict(f) for f in e["findings"])
                cls_name, dirty = e.get("class"), True
                error, ok_at = None, entry.at
            elif entry.kind == "failed":
                error = str(e.get("error") or "failed")
            elif entry.kind == "recovered":
                error = None
            index += 1
        if dirty:  # decoded once per poll that moved, however many patches it applied
            cls = load_class(cls_name)
            snap = decode(cls, body) if cls is not None else body
        self._cursor[source] = (index, body, snap, findings, error, ok_at)
        if snap is None and error is None:
            return None
        return SourceState(snap, findings, error, ok_at)

    def notes_between(self, t0: float, t1: float) -> list[dict[str, Any]]:
        return [e for at, e in self.notes if t0 < at <= t1]


# ------------------------------------------------------------------------------------------ clock, collectors
class ReplayClock:
    """Virtual time: starts at `start`, runs at `speed` x real time, pauses, can jump."""

    def __init__(self, start: float, speed: float = 1.0, *, real: typing.Callable[[], float] = time.monotonic) -> None:
        self._real = real
        self._base = start
        self._anchor = real()
        self.speed = speed
        self.paused = False

    def now(self) -> float:
        if self.paused:
            return self._base
        return self._base + (self._real() - self._anchor) * self.speed

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
    """Answers each poll with one source's recorded state at the replay clock's time."""

    def __init__(self, timeline: Timeline, source: str, clock: ReplayClock, interval: float = 0.25) -> None:
        self.timeline = timeline
        self.name = source
        self.clock = clock
        self.interval = interval
        self.timeout = 10.0
        self._findings: tuple[int, tuple[Finding, ...]] = (0, ())

    async def collect(self) -> Any:
        try:
            state = self.timeline.state_at(self.name, self.clock.now())
        except Exception as exc:  # a hand-edited or damaged journal: this source's pane says so, replay goes on
            raise SourceError(f"replay: the recorded snapshot of {self.name} cannot be read "
                              f"({type(exc).__name__}) - the journal is damaged at this point") from None
        if state is None:
            raise SourceError(f"replay: {self.name} was not recorded yet at this point of the journal")
        if state.error is not None:
            raise SourceError(state.error)
        self._findings = (id(state.snapshot), state.findings)
        return state.snapshot

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        key, found = self._findings
        return list(found) if key == id(snapshot) else []


class Player:
    """What `stacktop replay` runs: the timeline, its clock and one collector per recorded source."""

    def __init__(self, timeline: Timeline, speed: float = 1.0, interval: float = 0.25) -> None:
        self.timeline = timeline
        self.clock = ReplayClock(timeline.start, speed)
        self.collectors = [ReplayCollector(timeline, s, self.clock, interval) for s in timeline.sources]

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
