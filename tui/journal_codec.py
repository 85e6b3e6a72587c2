"""The journal's snapshot codec: how a poll's snapshot is written to the journal and read back.

The recorder writes, per source, a `snapshot` event whenever a poll's snapshot or findings changed: the first
one (and the first after a rotation, and one whenever the patches written since the last full one outweigh it)
in full, the others as a compact patch against what a reader has rebuilt so far (SnapshotEncoder). Lists of
objects are patched by identity (a server by id, a queue by vhost+name) and their order as runs of the previous
order. Heartbeats (the fields a model lists in JOURNAL_HEARTBEATS: a service's `updated_at`, an agent's
`heartbeat`) are written as their age at the snapshot's `taken_at` ("@12": 12 s before), and an age that moved
by less than HEARTBEAT_S is not rewritten unless it crossed one of the ages where its row's liveness changes
(SnapshotEncoder's marks: late, down): a healthy cloud's heartbeats (ages of a few seconds, poll after poll)
rewrite no row, a stopped one's every HEARTBEAT_S and as it turns late and down, and a replayed age is off by
less than HEARTBEAT_S, on the same side of each mark as recorded (absolute() turns ages back into times before
decode()). A field at its class's default is left out of a row's
JSON, and decode() gives it back. Each event names the snapshot's class so replay can rebuild the frozen
dataclass (decode()); only the classes in SNAPSHOT_CLASSES are rebuilt, and JSON that does not fit its class
(a list where a record goes, NaN where a number goes) is BadSnapshot, never a value of the wrong type.

A snapshot whose line would not fit the journal's line budget (tui.recorder: half a file) is written cut
(SnapshotEncoder.shrink): long texts shortened to their head and tail with `… [N characters cut] …` between,
then every list (and big mapping) kept to its first rows; the event then carries `"cut": {"rows": dropped,
"texts": shortened}`, which replay and export show. A source stays cut, its patches made between cut snapshots,
until the next file.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from itertools import compress
from operator import is_not, itemgetter
from typing import Any

from tui.models.finding import Finding
from tui.models.galera import GaleraSnapshot
from tui.models.instances import InstancesSnapshot
from tui.models.placement import AuditDigest
from tui.models.rabbitmq import RabbitSnapshot
from tui.models.services import ServicesSnapshot

FULL_EVERY = 5000  # a full snapshot after this many patches of one source at the latest (bounds a seek)
HEARTBEAT_S = 60.0  # a heartbeat-only change is written once it moved this far (seconds)
# fields that move with every heartbeat: ages in seconds, and the JOURNAL_HEARTBEATS of the models (as "@age")
AGE_FIELDS = frozenset({"age_at_read_s", "age_s", "elapsed_s"})
HEARTBEAT_FIELDS = AGE_FIELDS | {"updated_at", "heartbeat", "compute_updated_at"}
_AGE = re.compile(r"@-?\d+(\.\d+)?(e-?\d+)?")
_ABSENT = object()
# the snapshot classes replay rebuilds (module:qualname); any other `class` in a journal is refused, never imported
SNAPSHOT_CLASSES: dict[str, type] = {  # the journal's `class` of a snapshot -> the class it rebuilds
    f"{cls.__module__}:{cls.__qualname__}": cls
    for cls in (GaleraSnapshot, InstancesSnapshot, AuditDigest, RabbitSnapshot, ServicesSnapshot)
}
CUT_TEXT = 512  # a cut snapshot's longest text (characters): its head and tail, the middle replaced by a marker
CUT_TEXT_MIN = 128  # the shortest a text is cut to when rows alone do not make a snapshot fit
CUT_ROWS_MIN = 32  # a cut snapshot keeps at least this many rows of each list (and entries of each mapping)
IDENTITY_KEYS: tuple[tuple[str, ...], ...] = (("id",), ("vhost", "name"), ("address",), ("section", "binary", "host"),
                                              ("service_type", "url"), ("name",), ("key",), ("event",))


# ------------------------------------------------------------------------------------------------ encoding
_SCALARS = frozenset({type(None), bool, int, float, str})  # exact types written as they are (the common case)
# how _enc writes a value of each type (Encoder._kind): the isinstance tests in their order, done once a type
_SCALAR, _TIME, _ENUM, _DATACLASS, _MAPPING, _SEQUENCE, _OTHER = range(7)


class Encoder:
    """to_jsonable for snapshots, remembering the JSON of each frozen dataclass instance it saw last time:
    the instances collector reuses unchanged Server objects, so a 10,000-server snapshot costs one dict
    lookup per unchanged server, and the diff sees the very same dict (an `is` test)."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Any]] = {}
        self._next: dict[int, tuple[Any, Any]] = {}
        self._ref: datetime | None = None
        # per type: how it is written, and a dataclass's field names and heartbeat fields
        self._kinds: dict[type, tuple[int, tuple[str, ...], tuple[str, ...], tuple[Any, ...]]] = {}

    def encode(self, value: Any) -> Any:
        self._next = {}
        ref = getattr(value, "taken_at", None)
        self._ref = ref if isinstance(ref, datetime) else None
        try:
            return self._enc(value)
        finally:
            self._memo, self._next = self._next, {}

    def _kind(self, tp: type) -> tuple[int, tuple[str, ...], tuple[str, ...], tuple[Any, ...]]:
        kind = self._kinds.get(tp)
        if kind is not None:
            return kind
        names: tuple[str, ...] = ()
        heartbeats: tuple[str, ...] = ()
        defaults: tuple[Any, ...] = ()
        if tp in _SCALARS or issubclass(tp, (bool, int, float, str)):
            code = _SCALAR
        elif issubclass(tp, (datetime, date)):
            code = _TIME
        elif issubclass(tp, enum.Enum):
            code = _ENUM
        elif dataclasses.is_dataclass(tp) and not issubclass(tp, type):
            code = _DATACLASS
            fields = dataclasses.fields(tp)
            names = tuple(f.name for f in fields)
            heartbeats = tuple(getattr(tp, "JOURNAL_HEARTBEATS", ()) or ())
            defaults = tuple(_default(f) for f in fields)
        elif issubclass(tp, Mapping):
            code = _MAPPING
        elif issubclass(tp, (list, tuple, set, frozenset)):
            code = _SEQUENCE
        else:
            code = _OTHER
        kind = self._kinds[tp] = (code, names, heartbeats, defaults)
        return kind

    def _heartbeats(self, value: Any, names: tuple[str, ...], heartbeats: tuple[str, ...],
                    defaults: tuple[Any, ...]) -> dict[str, Any]:
        """A dataclass with heartbeat fields: those as their age at the snapshot's taken_at ("@12")."""
        out: dict[str, Any] = {}
        for name, default in zip(names, defaults, strict=True):
            v = getattr(value, name)
            if v is default or (type(v) is type(default) and v == default):
                continue  # left out: decode() gives the field its default
            if name in heartbeats and isinstance(v, datetime) and self._ref is not None:
                try:
                    out[name] = f"@{(self._ref - v).total_seconds()!r}"
                    continue
                except TypeError:  # naive against aware: written as it is
                    pass
            out[name] = v if type(v) in _SCALARS else self._enc(v)
        return out

    def _enc(self, value: Any) -> Any:
        tp = type(value)
        if tp in _SCALARS:
            return value
        code, names, heartbeats, defaults = self._kind(tp)
        if code == _DATACLASS:
            if heartbeats:  # its JSON depends on this snapshot's time: never from the memo
                return self._heartbeats(value, names, heartbeats, defaults)
            key = id(value)
            hit = self._memo.get(key) or self._next.get(key)
            if hit is not None and hit[0] is value:
                self._next[key] = hit
                return hit[1]
            out = {}
            for name, default in zip(names, defaults, strict=True):
                v = getattr(value, name)
                if v is default or (type(v) is type(default) and v == default):
                    continue  # left out: decode() gives the field its default (a smaller row, held and written)
                out[name] = v if type(v) in _SCALARS else self._enc(v)
            self._next[key] = (value, out)
            return out
        if code == _SEQUENCE:
            # a memo hit without a call: a 10,000-server tuple whose servers did not change
            memo, nxt = self._memo, self._next
            items = []
            for v in value:
                if type(v) in _SCALARS:
                    items.append(v)
                    continue
                hit = memo.get(id(v))
                if hit is not None and hit[0] is v:
                    nxt[id(v)] = hit
                    items.append(hit[1])
                else:
                    items.append(self._enc(v))
            return items
        if code == _SCALAR:
            return value
        if code == _TIME:
            return value.isoformat()
        if code == _ENUM:
            return self._enc(value.value)
        if code == _MAPPING:
            return {str(k): self._enc(v) for k, v in value.items()}
        if hasattr(value, "to_dict") and callable(value.to_dict):
            return self._enc(value.to_dict())
        return str(value)


def _default(field: dataclasses.Field[Any]) -> Any:
    """A field's default value (a default_factory's, made once), or _ABSENT when it has none: a value equal to
    it is left out of the field's JSON."""
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        try:
            return field.default_factory()
        except Exception:
            return _ABSENT
    return _ABSENT


def _identity(old: list[Any], new: list[Any]) -> tuple[tuple[str, ...], list[str], list[str]] | None:
    """The first IDENTITY_KEYS naming every element of both lists uniquely, with the ids of old's and new's
    elements under it (None: patch the list whole)."""
    if not old or not new or not _all_dicts(old) or not _all_dicts(new):
        return None
    for keys in IDENTITY_KEYS:
        found: list[list[str]] = []
        for items in (old, new):
            idents = _idents(items, keys)
            if idents is None or len(set(idents)) != len(idents):
                break
            found.append(idents)
        else:
            return keys, found[0], found[1]
    return None


def _all_dicts(items: list[Any]) -> bool:
    return set(map(type, items)) == {dict} or all(isinstance(e, dict) for e in items)


def _idents(items: list[dict[str, Any]], keys: tuple[str, ...]) -> list[str] | None:
    """[_ident(e, keys) for e in items], None when one has no id; string ids (nearly all) without a call each."""
    if len(keys) == 1:
        try:  # in C: a list of 10,000 servers is patched every poll
            values = list(map(itemgetter(keys[0]), items))
        except KeyError:
            return None
        if set(map(type, values)) == {str} and "" not in values:
            return values
    elif len(keys) == 2:
        first, second = keys
        pairs = [(e.get(first), e.get(second)) for e in items]
        if all(type(a) is str and a and type(b) is str and b for a, b in pairs):
            return [f"{a}\x1f{b}" for a, b in pairs]
    idents = []
    for e in items:
        ident = _ident(e, keys)
        if ident is None:
            return None
        idents.append(ident)
    return idents


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


def _moved_little(key: str, old: Any, new: Any, marks: tuple[float, ...] = ()) -> bool:
    """A heartbeat's change not worth a line: an age ("@12", or seconds in an AGE_FIELDS field) that moved by
    less than HEARTBEAT_S without crossing one of `marks` (ages where its row's liveness changes: late, down),
    so that a replay judges each recorded poll's rows as the live session did."""
    if isinstance(old, str) and isinstance(new, str) and _AGE.fullmatch(old) and _AGE.fullmatch(new):
        a, b = float(old[1:]), float(new[1:])
    elif key in AGE_FIELDS and isinstance(old, (int, float)) and isinstance(new, (int, float)) \
            and not isinstance(old, bool) and not isinstance(new, bool):
        a, b = float(old), float(new)
    else:
        return False
    return abs(b - a) < HEARTBEAT_S and all((a > m) == (b > m) for m in marks)


def _order_runs(old_ids: list[Any], ids: list[Any]) -> list[Any]:
    """The new order as runs of the old one: [start, length] pairs (old positions) and, for an element the
    old list did not have, its id (a string)."""
    where = {ident: i for i, ident in enumerate(old_ids)}
    runs: list[Any] = []
    for ident in ids:
        pos = where.get(ident)
        if pos is None:
            runs.append(ident)
        elif runs and isinstance(runs[-1], list) and runs[-1][0] + runs[-1][1] == pos:
            runs[-1][1] += 1
        else:
            runs.append([pos, 1])
    return runs


def _expand_runs(old_ids: list[Any], runs: list[Any]) -> list[Any]:
    """The new order from its runs (_order_runs). Each old position is used at most once, so the order is at
    most as long as the old list and the new ids together: runs that repeat rows (a crafted patch that would
    expand a few KB into GBs) are a ValueError before anything is expanded."""
    if not isinstance(runs, list):
        raise ValueError("a patch's order is not a list of runs")
    kept = 0  # old rows the runs take
    for run in runs:
        if isinstance(run, list):
            if len(run) != 2 or not all(type(x) is int and x >= 0 for x in run):
                raise ValueError("a patch's order run is not [start, length]")
            kept += max(0, min(run[1], len(old_ids) - run[0]))
    if kept > len(old_ids):
        raise ValueError(f"a patch's order runs repeat rows ({kept} rows from a list of {len(old_ids)})")
    out: list[Any] = []
    for run in runs:
        if isinstance(run, list):
            out.extend(old_ids[run[0]:run[0] + run[1]])
        else:
            out.append(run)
    return out


def diff(old: Any, new: Any, marks: Mapping[str, tuple[float, ...]] | None = None) -> dict[str, Any] | None:
    """A patch turning old into new (None when equal, or when only heartbeats moved by less than
    HEARTBEAT_S; marks: by a row's `section`, the ages its heartbeats are written again when they cross, see
    _moved_little). {"=": v} replaces; {"d": {k: patch}, "x": [gone]} patches a dict; {"L": keys, "u": {id:
    patch}, "n": {id: v}, "r": runs} patches a list by identity ("r", the new order as runs of the old
    order, only when membership or order changed; journals written before runs carry "o", every id);
    {"i": {index: patch}} patches a list of the same length element by element."""
    if old is new:
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        if old == new:  # in C, and what the walk below would conclude
            return None
        d: dict[str, Any] = {}
        heartbeats_only = True
        section = new.get("section") if marks else None
        crossing = marks.get(section, ()) if marks and isinstance(section, str) else ()
        for k, v in new.items():
            if k not in old:
                d[k] = {"=": v}
                heartbeats_only = False
            else:
                was = old[k]
                if was is v or (type(v) in _SCALARS and type(was) in _SCALARS and was == v):
                    continue
                p = diff(was, v, marks)
                if p is not None:
                    d[k] = p
                    if k not in HEARTBEAT_FIELDS or not _moved_little(k, was, v, crossing):
                        heartbeats_only = False
        gone = [k for k in old if k not in new]
        if not d and not gone:
            return None
        if heartbeats_only and not gone:
            return None
        patch: dict[str, Any] = {"d": d}
        if gone:
            patch["x"] = gone
        return patch
    if isinstance(old, list) and isinstance(new, list):
        if old == new:  # in C (an element that is the same dict compares by identity): nothing to patch
            return None
        identity = _identity(old, new) if len(new) > 4 else None
        if identity is not None:
            keys, old_ids, ids = identity
            upd: dict[str, Any] = {}
            add: dict[str, Any] = {}
            same_order = ids == old_ids
            if same_order:  # the common poll: only the rows that are not the very same dict are looked at
                for at in compress(range(len(new)), map(is_not, old, new)):
                    p = diff(old[at], new[at], marks)
                    if p is not None:
                        upd[ids[at]] = p
            else:  # rows came, went or moved: each new row against its old one by id, in C up to the changes
                was_at = list(map(dict(zip(old_ids, old, strict=True)).get, ids))
                for at in compress(range(len(new)), map(is_not, was_at, new)):
                    was, e = was_at[at], new[at]
                    if was is None:
                        add[ids[at]] = e
                    else:
                        p = diff(was, e, marks)
                        if p is not None:
                            upd[ids[at]] = p
            if not upd and not add and same_order:
                return None
            lp: dict[str, Any] = {"L": list(keys), "u": upd, "n": add}
            if not same_order:
                lp["r"] = _order_runs(old_ids, ids)
            return lp
        if len(old) == len(new):  # a short list, or one without identities: patched element by element
            patched = {str(i): p for i, (a, b) in enumerate(zip(old, new, strict=True))
                       if (p := diff(a, b, marks)) is not None}
            return {"i": patched} if patched else None
    if old == new:
        return None
    return {"=": new}


def apply(old: Any, patch: Mapping[str, Any], new: Any = _ABSENT) -> Any:
    """old with the patch applied. `new`: the value the patch was made from (diff(old, new)), when the caller
    has it: a patched dict equal to its counterpart in `new` is that very object, so the writer's rebuilt
    snapshot shares its dicts with the encoder's memo instead of holding a copy of every row that changed."""
    if "=" in patch:
        return patch["="]
    if "d" in patch:
        base = dict(old) if isinstance(old, dict) else {}
        for k in patch.get("x", ()):
            base.pop(k, None)
        given = new if type(new) is dict else None
        for k, p in patch["d"].items():
            base[k] = apply(base.get(k), p, _ABSENT if given is None else given.get(k, _ABSENT))
        return given if given is not None and base == given else base
    if "L" in patch:
        keys = tuple(patch["L"])
        olds = list(old or ())
        fast = _idents(olds, keys) if olds and set(map(type, olds)) == {dict} else None
        by_id = dict(zip(fast, olds, strict=True)) if fast is not None else {_ident(e, keys): e for e in olds}
        ids = _expand_runs(list(by_id), patch["r"]) if "r" in patch else patch.get("o") or list(by_id)
        upd, add = patch.get("u", {}), patch.get("n", {})
        in_order = type(new) is list and len(new) == len(ids)  # in the order of ids (the patch was made from it)
        out = list(map(by_id.get, ids))  # in C; then only the rows the patch adds or changes
        touched = add.keys() | upd.keys()
        for at in compress(range(len(ids)), map(touched.__contains__, ids)) if touched else ():
            i = ids[at]
            out[at] = add[i] if i in add else apply(by_id[i], upd[i], new[at] if in_order else _ABSENT)
        if None in out and any(e is None and i not in add for i, e in zip(ids, out, strict=True)):
            raise ValueError("a patch names a row the list does not have")
        return out
    if "i" in patch:
        out = list(old or ())
        same = type(new) is list and len(new) == len(out)
        for index, p in patch["i"].items():
            at = int(index)
            out[at] = apply(out[at], p, new[at] if same else _ABSENT)
        return out
    raise ValueError(f"not a snapshot patch: {sorted(patch)[:3]}")


def class_name(value: Any) -> str | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return f"{cls.__module__}:{cls.__qualname__}"
    return None


@dataclasses.dataclass(frozen=True)
class Cut:
    """How a source's snapshots are cut to fit a journal line: texts to `text` characters, lists (and mappings
    of more than CUT_ROWS_MIN entries) to their first `rows` (None: all)."""

    text: int = CUT_TEXT
    rows: int | None = None


@dataclasses.dataclass
class _CutCount:
    rows: int = 0  # rows (and mapping entries) left out
    texts: int = 0  # texts shortened
    longest: int = 0  # the longest list or mapping met, before its cut


def _shorten(text: str, keep: int) -> str:
    head = keep // 2
    tail = keep - head
    return f"{text[:head]}… [{len(text) - keep} characters cut] …{text[len(text) - tail:]}"


def _cut(value: Any, cut: Cut, count: _CutCount) -> Any:
    """value (a snapshot's JSON) cut by `cut`; a container with nothing to cut is returned as it is (the diff's
    identity test then still skips an unchanged row)."""
    tp = type(value)
    if tp is str:
        if len(value) > cut.text:
            count.texts += 1
            return _shorten(value, cut.text)
        return value
    if tp is list:
        count.longest = max(count.longest, len(value))
        items = value
        if cut.rows is not None and len(value) > cut.rows:
            count.rows += len(value) - cut.rows
            items = value[:cut.rows]
        out = [_cut(v, cut, count) if type(v) in (str, list, dict) else v for v in items]
        return value if items is value and all(a is b for a, b in zip(out, value, strict=True)) else out
    if tp is dict:
        entries: Iterable[tuple[str, Any]] = value.items()
        trimmed = False
        if len(value) > CUT_ROWS_MIN:
            count.longest = max(count.longest, len(value))
            if cut.rows is not None and len(value) > cut.rows:
                count.rows += len(value) - cut.rows
                entries = list(value.items())[:cut.rows]
                trimmed = True
        changed = trimmed
        new: dict[str, Any] = {}
        for k, v in entries:
            c = _cut(v, cut, count) if type(v) in (str, list, dict) else v
            changed = changed or c is not v
            new[k] = c
        return new if changed else value
    return value


class SnapshotEncoder:
    """Per source: what a reader of the journal has rebuilt so far, to emit full snapshots or patches. Used by
    the journal's writer thread (the encoding of a big snapshot never runs on the UI loop).

    A source's snapshot is written in full first, then as patches until the bytes of the patches written since
    (told by written()) outweigh the full one, or after full_every patches: replaying from the last full
    snapshot then reads at most about twice its size, and full snapshots are at most half of a journal.
    A source whose line did not fit (shrink()) is cut (Cut) from then on, until reset()."""

    def __init__(self, full_every: int = FULL_EVERY, marks: Mapping[str, tuple[float, ...]] | None = None) -> None:
        """marks: by section, the heartbeat ages where a row's liveness changes (diff)."""
        self.full_every = full_every
        self.marks = marks
        # source -> (json a reader has, findings json, patches since full)
        self._last: dict[str, tuple[Any, Any, int]] = {}
        self._budget: dict[str, list[int]] = {}  # source -> [bytes of the last full, bytes of patches since]
        self._encoders: dict[str, Encoder] = {}
        self._cuts: dict[str, Cut] = {}
        self._longest: dict[str, int] = {}  # source -> its longest list in the last event (for shrink)

    def reset(self) -> None:
        """The next snapshot of every source is written in full, and measured again (after a rotation: each file
        stands alone)."""
        self._last.clear()
        self._budget.clear()
        self._cuts.clear()

    def written(self, source: str, size: int, *, full: bool) -> None:
        """The size of the line the journal wrote for this source's last event."""
        if full:
            self._budget[source] = [size, 0]
        elif source in self._budget:
            self._budget[source][1] += size

    def shrink(self, source: str, size: int, limit: int) -> bool:
        """The line of this source's last event was `size` bytes, over `limit`: forget it (the next event is in
        full) and cut tighter. False when it cannot be cut further (the event is then not written)."""
        self._last.pop(source, None)
        self._budget.pop(source, None)
        cut = self._cuts.get(source)
        if cut is None:
            self._cuts[source] = Cut()
            return True
        longest = self._longest.get(source, 0)
        rows = cut.rows if cut.rows is not None else longest
        if rows > CUT_ROWS_MIN:
            self._cuts[source] = Cut(cut.text, max(CUT_ROWS_MIN, min(rows - 1, int(rows * limit / size * 0.9))))
            return True
        if cut.text > CUT_TEXT_MIN:
            self._cuts[source] = Cut(CUT_TEXT_MIN, CUT_ROWS_MIN)
            return True
        return False

    def forget(self, source: str) -> None:
        """This source's next event is in full (its last one was not written)."""
        self._last.pop(source, None)
        self._budget.pop(source, None)

    def _full_due(self, source: str, patches: int) -> bool:
        budget = self._budget.get(source)
        return patches >= self.full_every or (budget is not None and budget[1] > max(budget[0], 64 * 1024))

    def event(self, source: str, at: float | None, snapshot: Any, findings: Iterable[Finding]) -> dict[str, Any] | None:
        """The `snapshot` event for this poll, or None when nothing worth a line changed since the last one."""
        encoder = self._encoders.setdefault(source, Encoder())
        body = encoder.encode(snapshot)
        found = [f.to_dict() for f in findings]
        cut = self._cuts.get(source)
        count: _CutCount | None = None
        if cut is not None:
            count = _CutCount()
            body, found = _cut(body, cut, count), _cut(found, cut, count)
            self._longest[source] = count.longest
        last = self._last.get(source)
        event: dict[str, Any] = {"type": "snapshot", "source": source, "at": at, "class": class_name(snapshot)}
        if count is not None:
            event["cut"] = {"rows": count.rows, "texts": count.texts}
        if last is None or self._full_due(source, last[2]):
            event["full"] = body
            event["findings"] = found
            self._last[source] = (body, found, 0)
            return event
        patch = diff(last[0], body, self.marks)
        if patch is None and found == last[1]:
            return None
        event["delta"] = patch
        if found != last[1]:
            event["findings"] = found
        self._last[source] = (last[0] if patch is None else apply(last[0], patch, body), found, last[2] + 1)
        return event


# ------------------------------------------------------------------------------------------------ decoding
def absolute(body: Any, ref: datetime | None = None) -> Any:
    """A snapshot's JSON with its heartbeat ages ("@12" under a heartbeat field) back as ISO times, counted
    from its `taken_at`. Returns new containers where something changed; the input is left as it is."""
    if ref is None and isinstance(body, dict) and isinstance(body.get("taken_at"), str):
        try:
            ref = datetime.fromisoformat(body["taken_at"])
        except ValueError:
            return body
    if ref is None:
        return body
    if isinstance(body, dict):
        out = {}
        for k, v in body.items():
            if k in HEARTBEAT_FIELDS and isinstance(v, str) and _AGE.fullmatch(v):
                out[k] = (ref - timedelta(seconds=float(v[1:]))).isoformat()
            elif isinstance(v, (dict, list)):
                out[k] = absolute(v, ref)
            else:
                out[k] = v
        return out
    if isinstance(body, list):
        return [absolute(v, ref) if isinstance(v, (dict, list)) else v for v in body]
    return body


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:
        return {f.name: Any for f in dataclasses.fields(cls)}


# a number in a replayed snapshot beyond these (or not finite) is the journal's damage: an integer past 64 bits
# (MySQL's unsigned -1 is one), a float past 1e15 (31 million years in seconds, a petabyte in bytes)
INT_MAX = 2 ** 64
FLOAT_MAX = 1e15


class BadSnapshot(ValueError):
    """A recorded snapshot whose JSON does not fit its class (a crafted or damaged journal): replay shows it as
    that source's error instead of handing a pane a value of the wrong type."""


_JSON_KINDS = {bool: "true/false", int: "a number", float: "a number", str: "a text", list: "a list",
               dict: "an object", type(None): "null"}


def _bad(tp: Any, value: Any) -> BadSnapshot:
    name = getattr(tp, "__name__", None) or str(tp)
    return BadSnapshot(f"{_JSON_KINDS.get(type(value), 'a value')} where the snapshot has {name[:60]}")


def _optional(tp: Any) -> bool:
    return tp is Any or tp is object or tp is type(None) or (
        typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in typing.get_args(tp))


def decode(tp: Any, value: Any) -> Any:
    """Rebuild a value of type `tp` (frozen dataclasses, datetimes, tuples, mappings...) from its JSON. A value
    that does not fit its type (a text where a number goes, a list where a dataclass goes, a number that is not
    finite or beyond INT_MAX / FLOAT_MAX, null where the field is not optional and has no default) is BadSnapshot."""
    if tp is Any or tp is object:
        return value
    if value is None:
        if _optional(tp):
            return None
        raise _bad(tp, value)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        for option in options:
            if _fits(option, value):
                return decode(option, value)
        raise _bad(tp, value)
    if origin is typing.Literal:
        if value in args:
            return value
        raise _bad(tp, value)
    if origin in (tuple,):
        if not isinstance(value, list):
            raise _bad(tp, value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in value)
        if args:
            return tuple(decode(a, v) for a, v in zip(args, value, strict=False))
        return tuple(value)
    if origin in (list, set, frozenset) or (origin is not None and origin.__name__ in ("Sequence", "Iterable")):
        if not isinstance(value, list):
            raise _bad(tp, value)
        inner = args[0] if args else Any
        items = [decode(inner, v) for v in value]
        return origin(items) if origin in (set, frozenset) else (items if origin is list else tuple(items))
    if origin in (dict,) or (origin is not None and getattr(origin, "__name__", "") in ("Mapping", "MutableMapping")):
        if not isinstance(value, dict):
            raise _bad(tp, value)
        inner = args[1] if len(args) == 2 else Any
        return {k: decode(inner, v) for k, v in value.items()}
    if isinstance(tp, type):
        if tp is datetime or tp is date:
            if not isinstance(value, str):
                raise _bad(tp, value)
            when = tp.fromisoformat(value)
            if not 1900 <= when.year < 3000:  # a pane's arithmetic on year 1 or 9999 overflows
                raise BadSnapshot(f"a time in the year {when.year}")
            return when
        if issubclass(tp, enum.Enum):
            return tp(value)
        if tp is bool or tp is int or tp is float:  # a number (a live model may hold 3.0 in an int field)
            if not isinstance(value, (int, float)) or not abs(value) <= (INT_MAX if type(value) is int else FLOAT_MAX):
                raise _bad(tp, value)
            return float(value) if tp is float and type(value) is int else value
        if tp is str:
            if not isinstance(value, str):
                raise _bad(tp, value)
            return value
        if dataclasses.is_dataclass(tp):
            if not isinstance(value, dict):
                raise _bad(tp, value)
            hints = _hints(tp)
            kwargs = {}
            for f in dataclasses.fields(tp):
                if not f.init or f.name not in value:
                    continue
                hint = hints.get(f.name, Any)
                if value[f.name] is None and not _optional(hint) and _default(f) is not _ABSENT:
                    continue  # null where the field is not optional: its default
                try:
                    kwargs[f.name] = decode(hint, value[f.name])
                except BadSnapshot as exc:
                    raise BadSnapshot(f"{tp.__name__}.{f.name}: {exc}"[:200]) from None
            try:
                return tp(**kwargs)
            except TypeError as exc:  # a field without a default left out
                raise BadSnapshot(str(exc)[:200]) from None
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
        return origin in (int, float)
    return False


class UnknownClass(ValueError):
    """A journal's `class` that is not one of SNAPSHOT_CLASSES."""


def load_class(name: str | None) -> type | None:
    """The snapshot class a journal event names (None: no class, the snapshot stays plain JSON). Only the
    SNAPSHOT_CLASSES are rebuilt: any other name, a module of stacktop's included, is UnknownClass."""
    if not name:
        return None
    if name not in SNAPSHOT_CLASSES:
        raise UnknownClass(f"the journal names a snapshot class stacktop does not replay: {name[:80]!r}")
    return SNAPSHOT_CLASSES[name]


def duplicate_id(body: Any, path: str = "") -> str | None:
    """The first list of rows in a snapshot's JSON with two rows of one `id` (a server twice), as "path id",
    else None: what a journal two sessions wrote at once rebuilds, and no table can show. The lists reached
    through objects (a snapshot's rows, a section's rows), not those inside rows: one pass over 10,000 servers'
    ids, not over their fields."""
    if isinstance(body, dict):
        for k, v in body.items():
            if isinstance(v, (dict, list)):
                found = duplicate_id(v, f"{path}.{k}" if path else str(k))
                if found is not None:
                    return found
    elif isinstance(body, list) and body and all(isinstance(e, dict) for e in body):
        ids = _idents(body, ("id",))
        if ids is not None and len(set(ids)) != len(ids):
            seen: set[str] = set()
            for ident in ids:
                if ident in seen:
                    return f"{path} {ident}"
                seen.add(ident)
    return None
