"""The observation journal: every change stacktop sees, appended as JSON lines for the post-incident review.

What is recorded (each line has `schema_version`, `ts`, `type`):
- source_failed / source_recovered: a source's transitions (not every failed poll);
- finding_raised / finding_cleared: by (kind, subject), with the finding's full text when raised; many of one
  kind are one (tui.rules.grouping), raised with the count and first subjects of when they were;
- state_changed: an object's semantic state moved (a server's task_state, a service's state...). A snapshot
  opts in by offering `journal_states() -> {object_key: {field: value}}`; the first poll of a source is a
  `baseline` line (a count), not one line per object;
- note: a line the engineer typed, attached to an object or to the session;
- exercise: a finished exercise's result (boot trace, compute-down lag, request trace);
- snapshot (schema 2): a source's snapshot and findings whenever either changed, in full or as a patch against
  the previous one (tui.journal_codec.SnapshotEncoder), so `stacktop replay` can show the panes as they were.

Lines are written (and snapshots encoded) by a thread, never on the UI loop, and flushed one by one, so a
crash loses at most the line being written. Known secrets (config passwords) are replaced by `***` before a
line is written. The file rotates at `max_bytes` (journal.jsonl -> journal.jsonl.1.gz ... .keep.gz, each file
standing alone: it starts with full snapshots); rotated files are gzipped by the writer thread, and every
journal of the directory together stays under `max_total_bytes` (the oldest files go first, never the one
being written). Readers (export, replay) read a gzipped journal as they read a plain one.

What the engineer recorded (notes, exercise results, silences, screenshots) is never rotated away by snapshot
volume: those lines are carried into each new file on rotation (`"carried": true`, at most a quarter of a file,
the oldest left behind first), so the newest file always holds them. No line is longer than half a file
(line_max): a snapshot that would be is written cut (tui.journal_codec.SnapshotEncoder.shrink, marked `cut`),
any other line has its long texts shortened, so a cloud of huge snapshots rotates no faster than a file per
two polls.

Reading is bounded whatever the file holds (load_journal): lines longer than MAX_LINE_BYTES are skipped unread,
a file of more than MAX_JOURNAL_BYTES (decompressed, or more than GZIP_RATIO times its gzip) is refused before
any line is parsed, texts are kept to TEXT_MAX characters, and times, findings and classes of the wrong shape
make a line one that is not an entry.
"""

from __future__ import annotations

import json
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.jsonable import to_jsonable
from tui.models.finding import SEVERITY_ORDER
from tui.models.observation import Observation
from tui.records import record
from tui.redact import redact_userinfo
from tui.safetext import clean

SCHEMA_VERSION = 2  # 2: snapshot events
DEFAULT_MAX_BYTES = 20 * 1024 * 1024
# a snapshot's encoding (a diff over 10,000 rows) waits while the engineer types (Journal.hold), at most so long
HOLD_MAX_S = 2.0
HOLD_STEP_S = 0.02
DEFAULT_KEEP = 5
DEFAULT_MAX_TOTAL_BYTES = 1024 * 1024 * 1024
NOTE_MAX_CHARS = 2000  # the longest note kept (the dashboard's note line takes no more)
JOURNAL_GLOB = "stacktop-*.jsonl*"  # every session's journal in a directory (and its rotated files)
# the longest line written and read (a longer one is skipped unread): a full snapshot of 100,000 servers is ~46 MB
MAX_LINE_BYTES = 64 * 1024 * 1024
# the most one journal file (decompressed) may hold to be read: [recorder] max_file_mb at most (512) and a line
MAX_JOURNAL_BYTES = 512 * 1024 * 1024 + 2 * MAX_LINE_BYTES
GZIP_RATIO = 64  # ... and a gzipped one at most this many times its own size (past GZIP_FLOOR): a gzip bomb
GZIP_FLOOR = 64 * 1024 * 1024
MAX_SKIPPED = 100_000  # a file with more lines that are not entries is not a journal (read no further)
NOTE_MAX = 4000  # characters of a note (longer: cut, marked)
TEXT_MAX = 16 * 1024  # characters of any other text of a journal entry read back (exercise markdown: MARKDOWN_MAX)
MARKDOWN_MAX = 256 * 1024
TIME_MAX = 32503680000.0  # 3000-01-01: a journal time past it (or before 1970, or not finite) is not an entry
# what Recorder carries into each new file (Journal.write(carry=True)), and readers of several files read once
CARRIED_TYPES = ("note", "exercise", "silence", "unsilence", "screenshot")
log = logging.getLogger(__name__)


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


def liveness_marks(thresholds: Any = None) -> dict[str, tuple[float, ...]]:
    """By services section, the heartbeat ages where a row turns late and down (tui.rules.liveness)."""
    from tui.config import Thresholds
    from tui.rules.liveness import LATE_FRACTION, down_time_for

    th = thresholds or Thresholds()
    return {section: (down_time_for(section, th) * LATE_FRACTION, down_time_for(section, th))
            for section in ("compute", "network", "volume")}


class ChangeTracker:
    """Turns consecutive Observations of each source into journal events (pure bookkeeping, no I/O)."""

    def __init__(self) -> None:
        self._last: dict[str, Observation] = {}
        self._findings: dict[str, dict[tuple[str, str], Any]] = {}
        self._states: dict[str, dict[str, Any]] = {}

    def observe(self, obs: Observation) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        ts = _iso(obs.tried_at if obs.error is not None else obs.ok_at)
        prev = self._last.get(obs.source)
        was_ok = prev is None or prev.error is None
        if obs.error is not None and was_ok:
            events.append({"type": "source_failed", "ts": ts, "source": obs.source, "error": obs.error,
                           "last_ok": _iso(obs.ok_at)})
        elif obs.error is None and prev is not None and prev.error is not None:
            events.append({"type": "source_recovered", "ts": ts, "source": obs.source,
                           "down_s": None if prev.tried_at is None or obs.ok_at is None
                           else round(obs.ok_at - (prev.ok_at or prev.tried_at), 3)})
        if obs.error is None:
            before = self._findings.get(obs.source, {})
            from tui.rules.grouping import group_floods  # with the first poll, after the first paint

            after = {f.key: f for f in group_floods(obs.findings)}  # a flood: one line (tui.rules.grouping)
            self._findings[obs.source] = after
            for key, finding in after.items():
                if key not in before:
                    events.append({"type": "finding_raised", "ts": ts, "source": obs.source,
                                   "finding": finding.to_dict()})
            for key, finding in before.items():
                if key not in after:
                    events.append({"type": "finding_cleared", "ts": ts, "source": obs.source,
                                   "kind": finding.kind, "subject": finding.subject,
                                   "severity": finding.severity})
            events.extend(self._state_events(obs, ts))
        self._last[obs.source] = obs
        return events

    def _state_events(self, obs: Observation, ts: str | None) -> list[dict[str, Any]]:
        getter = getattr(obs.snapshot, "journal_states", None)
        if not callable(getter):
            return []
        states = {str(k): dict(v) for k, v in getter().items()}
        previous = self._states.get(obs.source)
        self._states[obs.source] = states
        if previous is None:
            return [{"type": "baseline", "ts": ts, "source": obs.source, "objects": len(states)}]
        events = []
        for key, state in states.items():
            old = previous.get(key)
            if old != state:
                events.append({"type": "state_changed", "ts": ts, "source": obs.source, "object": key,
                               "before": old, "after": state})
        for key, old in previous.items():
            if key not in states:
                events.append({"type": "state_changed", "ts": ts, "source": obs.source, "object": key,
                               "before": old, "after": None})
        return events


def shorten(text: str, limit: int) -> str:
    """text kept to `limit` characters, its head and tail, the middle replaced by `… [N characters cut] …`."""
    if len(text) <= limit:
        return text
    head = limit // 2
    return f"{text[:head]}… [{len(text) - limit} characters cut] …{text[len(text) - (limit - head):]}"


def _shorten_all(value: Any, limit: int, depth: int = 0) -> Any:
    """value (JSON) with every text longer than `limit` shortened (containers nested deeper than 64: None); a
    container with nothing to shorten is returned as it is."""
    if isinstance(value, str):
        return shorten(value, limit)
    if not isinstance(value, (dict, list)):
        return value
    if depth > 64:
        return None
    if isinstance(value, dict):
        out = {k: _shorten_all(v, limit, depth + 1) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    items = [_shorten_all(v, limit, depth + 1) for v in value]
    return value if all(a is b for a, b in zip(items, value, strict=True)) else items


@dataclass(frozen=True)
class _Carried:
    """A line the writer writes and carries into every new file on rotation (`again`: its carried form)."""

    line: str
    again: str


class Redactor:
    """Replaces every known secret (and its URL-quoted and JSON forms) and every URL password in a line."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        from urllib.parse import quote

        found = {s for s in secrets if s and len(s) >= 3}
        self._needles = sorted(found | {quote(s, safe="") for s in found} | {json.dumps(s)[1:-1] for s in found},
                               key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for needle in self._needles:
            if needle in text:
                text = text.replace(needle, "***")
        return redact_userinfo(text)


class RedactingFormatter(logging.Formatter):
    """The log file's formatter: each formatted record (message and traceback) through a Redactor, and every
    control character from outside (a tenant's name in an error) written out, so `tail -f` of the log cannot
    steer the terminal. The message is one line whatever its arguments hold (a line break in an endpoint's
    error is written `\\x0a`: no text from outside can start a record of its own); the lines of a traceback
    that follow it are indented, so every line that starts at the margin is a record's first."""

    def __init__(self, fmt: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(fmt)
        self.redact = Redactor(secrets)

    def formatMessage(self, record: logging.LogRecord) -> str:
        return clean(self.redact(super().formatMessage(record)))

    def format(self, record: logging.LogRecord) -> str:
        head, *rest = super().format(record).split("\n")
        tail = [clean(self.redact(line)) for line in rest]
        return "\n".join([head, *(line if line[:1] in (" ", "\t") else "  " + line for line in tail)])


def _create(directory: Path, name: str | None) -> tuple[Path, Any]:
    """A journal file of this session's own, created here (never one another session writes): `name`, or
    stacktop-<UTC time>-<pid>.jsonl, with -2, -3 ... after it should that exist (two sessions started in the
    same second, a pid reused). FileExistsError when a given `name` exists."""
    if name is not None:
        path = directory / name
        return path, path.open("x", encoding="utf-8")
    base = f"stacktop-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{os.getpid()}"
    for attempt in range(1, 1000):
        path = directory / (f"{base}.jsonl" if attempt == 1 else f"{base}-{attempt}.jsonl")
        if path.with_name(path.name + ".1.gz").exists():
            continue  # a journal of that name was written and rotated: not this session's
        try:
            return path, path.open("x", encoding="utf-8")
        except FileExistsError:
            continue
    raise FileExistsError(f"every journal name {base}*.jsonl is taken in {directory}")


class Journal:
    """Append-only JSON-lines journal with a writer thread, per-line flush and size-bounded rotation."""

    def __init__(self, directory: str | Path, *, name: str | None = None, secrets: Iterable[str | None] = (),
                 max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP,
                 max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES, thresholds: Any = None) -> None:
        """thresholds: tui.config.Thresholds the session judges heartbeats with (default: the defaults); a
        heartbeat's age is written again whenever it crosses their late or down mark (tui.journal_codec)."""
        self.thresholds = thresholds
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.redact = Redactor(secrets)
        self.max_bytes = max_bytes
        # no line longer than half a file: a file holds two of the longest snapshots (no rotation per poll)
        self.line_max = max(1024, min(max_bytes // 2, MAX_LINE_BYTES))
        self.keep = keep
        self.max_total_bytes = max_total_bytes
        self._carried: list[str] = []  # the lines carried into each new file, oldest first (writer thread)
        self._carried_bytes = 0
        self._queue: queue.Queue[str | _Carried | Observation | tuple[str, Observation] | None] = queue.Queue()
        self._snapshots: Any = None  # tui.journal_codec.SnapshotEncoder, made by the writer thread
        # True while keys are being typed (the app's): the writer thread then puts off encoding a snapshot, which
        # would hold the interpreter in turns with the key's own work (at most HOLD_MAX_S)
        self.hold: Callable[[], bool] | None = None
        self._closing = threading.Event()
        self.path, self._file = _create(self.directory, name)
        # the file's first line names this session: a reader tells two sessions' lines in one file apart
        self.session = f"{os.getpid()}-{os.urandom(4).hex()}"
        self._queue.put(json.dumps({"schema_version": SCHEMA_VERSION, "type": "session", "session": self.session}))
        self._thread = threading.Thread(target=self._write_loop, name="stacktop-journal", daemon=True)
        self._thread.start()

    def write(self, event: Mapping[str, Any], *, carry: bool = False) -> None:
        """Queue one event (thread-safe, never blocks on disk). carry: the line is written again at the top of
        every new file on rotation (what the engineer recorded: never rotated away by snapshot volume)."""
        record = {"schema_version": SCHEMA_VERSION, **to_jsonable(dict(event))}
        record.setdefault("ts", datetime.now(UTC).isoformat())
        line = self.redact(json.dumps(record, sort_keys=False))
        if len(line) >= self.line_max:  # an event with huge texts: shortened to fit a line
            record = _shorten_all(record, max(64, self.line_max // 64))
            line = self.redact(json.dumps(record, sort_keys=False))
            if len(line) >= self.line_max:
                log.warning("journal: a %s event of %d bytes does not fit a line (%d): not written",
                            record.get("type"), len(line), self.line_max)
                return
        if carry:
            self._queue.put(_Carried(line, self.redact(json.dumps({**record, "carried": True}, sort_keys=False))))
        else:
            self._queue.put(line)

    def write_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        for event in events:
            self.write(event)

    def write_snapshot(self, obs: Observation, *, cloud: str | None = None) -> None:
        """Queue a good observation: the writer thread records its snapshot and findings if they changed.
        cloud: in a session with several clouds, which one (patches follow that cloud's previous snapshot)."""
        if obs.error is None and obs.snapshot is not None:
            self._queue.put(obs if cloud is None else (cloud, obs))

    def pending(self) -> int:
        """Lines (and snapshots) queued and not yet taken by the writer thread."""
        return self._queue.qsize()

    def _snapshot_line(self, obs: Observation, cloud: str | None = None) -> str | None:
        """The snapshot line of this observation (None: nothing changed), cut until it fits line_max; a
        snapshot that cannot be cut to fit is a `snapshot_omitted` line."""
        if self._snapshots is None:
            from tui.journal_codec import SnapshotEncoder

            self._snapshots = SnapshotEncoder(marks=liveness_marks(self.thresholds))
        key = obs.source if cloud is None else f"{cloud}/{obs.source}"
        where = {"source": obs.source, "cloud": cloud} if cloud is not None else {}
        for _ in range(16):
            try:
                event = self._snapshots.event(key, obs.ok_at, obs.snapshot, obs.findings)
            except Exception:  # a snapshot that cannot be encoded must not stop the journal
                return None
            if event is None:
                return None
            line = self.redact(json.dumps({"schema_version": SCHEMA_VERSION, "ts": _iso(obs.ok_at), **event,
                                           **where}))
            if len(line) < self.line_max:
                self._snapshots.written(key, len(line) + 1, full="full" in event)
                return line
            size = len(line)
            del line, event
            if not self._snapshots.shrink(key, size, self.line_max):
                break
        self._snapshots.forget(key)
        log.warning("journal: the %s snapshot does not fit a line of %d bytes even cut: not written", key,
                    self.line_max)
        return self.redact(json.dumps({"schema_version": SCHEMA_VERSION, "ts": _iso(obs.ok_at),
                                       "type": "snapshot_omitted", "source": obs.source, "bytes": size,
                                       "limit": self.line_max, **({"cloud": cloud} if cloud is not None else {})}))

    def _write_loop(self) -> None:
        while True:
            line = self._queue.get()
            if line is None:
                break
            if isinstance(line, tuple | Observation):
                self._wait_for_quiet()
            if isinstance(line, tuple):
                line = self._snapshot_line(line[1], line[0])
                if line is None:
                    continue
            elif isinstance(line, Observation):
                line = self._snapshot_line(line)
                if line is None:
                    continue
            elif isinstance(line, _Carried):
                self._carry(line.again)
                line = line.line
            self._file.write(line + "\n")
            self._file.flush()
            if self._file.tell() >= self.max_bytes:
                self._rotate()

    def _carry(self, line: str) -> None:
        """Keep a line to write at the top of each new file: at most a quarter of a file of them, the oldest
        left behind first (they stay in the older files)."""
        self._carried.append(line)
        self._carried_bytes += len(line) + 1
        while self._carried_bytes > self.max_bytes // 4 and self._carried:
            self._carried_bytes -= len(self._carried.pop(0)) + 1

    def _wait_for_quiet(self) -> None:
        hold = self.hold
        if hold is None:
            return
        until = time.monotonic() + HOLD_MAX_S
        while time.monotonic() < until and not self._closing.is_set() and hold():
            self._closing.wait(HOLD_STEP_S)

    def _rotate(self) -> None:
        import gzip  # here, as in load_journal: the dashboard opens its journal before its first frame
        import shutil

        self._file.close()
        name = self.path.name
        for index in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{name}.{index}.gz")
            if older.exists():
                older.replace(self.path.with_name(f"{name}.{index + 1}.gz"))
        rotated = self.path.with_name(f"{name}.1")
        self.path.replace(rotated)
        self._file = self.path.open("a", encoding="utf-8")
        for line in self._carried:  # what the engineer recorded comes first in every file
            self._file.write(line + "\n")
        self._file.flush()
        if self._snapshots is not None:
            self._snapshots.reset()  # each file starts with full snapshots
        try:
            with rotated.open("rb") as src, gzip.open(rotated.with_name(f"{name}.1.gz"), "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1024 * 1024)
            rotated.unlink()
        except OSError as exc:  # a full disk: the plain file stays, the journal goes on
            log.warning("journal: could not gzip %s: %s", rotated, exc)
        self.prune()

    def prune(self) -> list[Path]:
        """Delete the oldest journal files of the directory until all of them together fit max_total_bytes
        (never the file being written). Returns what was deleted."""
        try:
            files = [(f.stat().st_mtime, f.stat().st_size, f) for f in self.directory.glob(JOURNAL_GLOB)
                     if f.is_file() and f != self.path]
            total = sum(size for _, size, _ in files) + self.path.stat().st_size
        except OSError:
            return []
        deleted: list[Path] = []
        for _, size, f in sorted(files, key=lambda item: (item[0], str(item[2]))):
            if total <= self.max_total_bytes:
                break
            try:
                f.unlink()
            except OSError:
                continue
            total -= size
            deleted.append(f)
        if deleted:
            log.info("journal: deleted %d oldest file(s) to stay under %d MB", len(deleted),
                     self.max_total_bytes // (1024 * 1024))
        return deleted

    def close(self) -> None:
        """Write everything queued, then close."""
        self._closing.set()
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=10)
        self._file.close()


READABLE_SCHEMAS = (1, 2)  # the journal schemas this stacktop reads (export, replay)


class JournalError(Exception):
    """A journal that cannot be read at all: str() is the one line shown (`JOURNAL: problem - fix`)."""


@record
class JournalContents:
    """The events of a journal that are journal entries, and how many lines were not (skipped)."""

    events: list[dict[str, Any]]
    skipped: int = 0
    first: str | None = None  # the first line skipped and why: "line 3: `at` is not a time from 1970 to 3000"

    def warning(self, path: str | Path) -> str | None:
        """The one stderr line about skipped lines, or None."""
        if not self.skipped:
            return None
        lines = "1 line that is not a journal entry" if self.skipped == 1 else \
            f"{self.skipped} lines that are not journal entries"
        why = f" ({self.first})" if self.first else ""
        return clean(f"{path}: skipped {lines}{why}")


_FINDING_TEXTS = ("kind", "subject", "summary", "next_step", "source")


def _finding_wrong(finding: Any) -> str | None:
    """What is wrong with a finding of a journal entry as the readers use it (a known severity, texts that are
    texts), or None."""
    if not isinstance(finding, dict):
        return "a finding is not an object"
    if finding.get("severity") not in SEVERITY_ORDER:
        return "a finding's severity is not critical, warning or info"
    for key in _FINDING_TEXTS:
        if finding.get(key) is not None and not isinstance(finding[key], str):
            return f"a finding's {key} is not a text"
    if finding.get("evidence") is not None and not isinstance(finding["evidence"], dict):
        return "a finding's evidence is not an object"
    return None


def _time_wrong(event: dict[str, Any]) -> str | None:
    """What is wrong with `at` (epoch seconds) or `ts` (ISO 8601), when given: each must be a time between 1970
    and TIME_MAX; or None."""
    at = event.get("at")
    if at is not None and (isinstance(at, bool) or not isinstance(at, (int, float)) or not math.isfinite(at)
                           or not 0 <= at <= TIME_MAX):
        return "`at` is not a time from 1970 to 3000"
    ts = event.get("ts")
    if ts is not None:
        try:
            epoch = datetime.fromisoformat(ts).timestamp()
        except (ValueError, OverflowError, OSError):
            epoch = -1.0
        if not 0 <= epoch <= TIME_MAX:
            return "`ts` is not an ISO 8601 time from 1970 to 3000"
    return None


def _bounded_texts(event: dict[str, Any]) -> dict[str, Any]:
    """An entry's own texts (not a snapshot's) kept to NOTE_MAX (a note's), MARKDOWN_MAX (an exercise's
    report) or TEXT_MAX characters, the middle cut and marked."""
    if event["type"] == "snapshot":
        found = event.get("findings")
        if found:
            event["findings"] = [_shorten_all(f, TEXT_MAX) for f in found]
        return event
    for key, value in event.items():
        limit = NOTE_MAX if event["type"] == "note" and key == "text" else \
            MARKDOWN_MAX if key == "markdown" else TEXT_MAX
        if isinstance(value, str):
            if len(value) > limit:
                event[key] = shorten(value, limit)
        elif isinstance(value, (dict, list)):
            event[key] = _shorten_all(value, limit)
    return event


_TEXT_FIELDS = frozenset({"ts", "source", "cloud", "subject", "kind", "name", "class", "text", "error", "summary",
                          "severity", "path", "screenshot"})


def _entry(line: bytes) -> dict[str, Any] | str:
    """One journal line as an event, or what makes it not one (a few words): not UTF-8, not JSON, not an object,
    no `type`, or fields of the wrong shape (the readers then never meet a finding that is a number, a source
    that is a list, a kind that is a dict, a time that is NaN, before 1970 or past TIME_MAX...). Texts are kept
    to their limits."""
    try:
        event = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8"
    except RecursionError:
        return "nested too deep"
    except ValueError:
        return "not JSON"
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "not a JSON object with a type"
    version = event.get("schema_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        return "schema_version is not a number"
    for key in event.keys() & _TEXT_FIELDS:
        if event[key] is not None and not isinstance(event[key], str):
            return f"`{key}` is not a text"
    wrong = _finding_wrong(event["finding"]) if "finding" in event else None
    found = event.get("findings")
    if found is not None:
        if not isinstance(found, list):
            return "`findings` is not a list"
        wrong = wrong or next((w for f in found if (w := _finding_wrong(f)) is not None), None)
    if event.get("delta") is not None and not isinstance(event["delta"], dict):
        wrong = wrong or "`delta` is not an object"
    cut = event.get("cut")
    if cut is not None and not (isinstance(cut, dict) and all(type(v) is int for v in cut.values())):
        wrong = wrong or "`cut` is not an object of counts"
    wrong = wrong or _time_wrong(event)
    if wrong is not None:
        return wrong
    if len(line) <= NOTE_MAX:  # no text of it can be longer than the line
        return event
    try:
        return _bounded_texts(event)
    except RecursionError:
        return "nested too deep"


def _too_big(path: Path, what: str) -> JournalError:
    return JournalError(clean(f"{path}: {what} - not a journal stacktop wrote (its files rotate at [recorder] "
                              "max_file_mb, at most 512 MB); give a file from [recorder] dir"))


def _gzip_size(handle: Any, cap: int) -> int:
    """The size of a gzip file's content, counted (never held) up to cap + 1 bytes."""
    import gzip

    total = 0
    with gzip.GzipFile(fileobj=handle, mode="rb") as stream:
        while total <= cap:
            chunk = stream.read(1024 * 1024)
            if not chunk:
                break
            total += len(chunk)
    return total


def _lines(stream: Any) -> Iterator[tuple[int, bytes | None]]:
    """The lines of a stream that are not blank, with their numbers, read 1 MB at a time; None for a line longer
    than MAX_LINE_BYTES (skipped unread, never held); a megabyte of blank lines passes without a look at each."""
    pending = bytearray()  # the line read so far (it goes on in the next chunk)
    overlong = False  # the line read so far is longer than MAX_LINE_BYTES: skipped to its end
    number = 1  # of the line being read
    while chunk := stream.read(1024 * 1024):
        if not pending and not overlong and not chunk.strip():
            number += chunk.count(b"\n")
            continue
        parts = chunk.split(b"\n")
        for part in parts[:-1]:  # each ends a line
            if overlong:
                yield number, None
                overlong = False
            elif pending:
                yield number, None if len(pending) + len(part) > MAX_LINE_BYTES else bytes(pending + part)
                pending = bytearray()
            elif part.strip():
                yield number, part
            number += 1
        if not overlong:
            if len(pending) + len(parts[-1]) > MAX_LINE_BYTES:  # never held past the limit
                pending, overlong = bytearray(), True
            else:
                pending += parts[-1]
    if overlong:
        yield number, None
    elif pending.strip():
        yield number, bytes(pending)


def load_journal(path: str | Path, *, strict: bool = True) -> JournalContents:
    """A journal's entries, oldest first, and the count of lines skipped (binary, not JSON, not an entry, longer
    than MAX_LINE_BYTES; a torn last line after a crash is one of them). Bounded: a file over
    MAX_JOURNAL_BYTES, a gzip that would decompress past GZIP_RATIO times its size, or more than MAX_SKIPPED
    lines that are not entries is a JournalError. strict: JournalError when an entry has a schema this
    stacktop does not read, or when lines were there and none was an entry."""
    import gzip
    import stat
    import zlib

    from tui.config import NotRegularFile, file_kind

    path = Path(path)
    events: list[dict[str, Any]] = []
    skipped = 0
    first: str | None = None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device is refused before open, never read
            raise NotRegularFile(file_kind(st.st_mode))
        with open(path, "rb") as handle:
            if handle.read(2) == b"\x1f\x8b":  # a rotated journal, gzipped: its size counted first
                cap = min(MAX_JOURNAL_BYTES, max(GZIP_FLOOR, GZIP_RATIO * st.st_size))
                handle.seek(0)
                if _gzip_size(handle, cap) > cap:
                    if cap == MAX_JOURNAL_BYTES:
                        raise _too_big(path, f"a gzip file that decompresses past the {cap // (1024 * 1024)} MB "
                                             "a journal file is read to")
                    raise JournalError(clean(
                        f"{path}: a gzip file of {st.st_size:,} bytes that decompresses past {cap // (1024 * 1024)} "
                        f"MB, more than {GZIP_RATIO} times its size - a gzip bomb, not a journal as stacktop writes "
                        "them; if it is one, give it gunzipped"))
                handle.seek(0)
                stream: Any = gzip.GzipFile(fileobj=handle, mode="rb")
            else:
                if st.st_size > MAX_JOURNAL_BYTES:
                    raise _too_big(path, f"{st.st_size // (1024 * 1024)} MB, over the "
                                         f"{MAX_JOURNAL_BYTES // (1024 * 1024)} MB a journal file is read to")
                handle.seek(0)
                stream = handle
            for number, line in _lines(stream):
                event = f"longer than {MAX_LINE_BYTES // (1024 * 1024)} MB" if line is None else _entry(line)
                if isinstance(event, str):
                    skipped += 1
                    first = first or f"line {number}: {event}"
                    if skipped > MAX_SKIPPED:
                        raise JournalError(clean(f"{path}: not a stacktop journal (more than {MAX_SKIPPED:,} "
                                                 f"lines are not journal entries; {first}) - give a file from "
                                                 "[recorder] dir"))
                    continue
                if strict and event.get("schema_version", 1) not in READABLE_SCHEMAS:
                    readable = ", ".join(str(v) for v in READABLE_SCHEMAS)
                    raise JournalError(clean(f"{path}: journal schema {event['schema_version']} - this stacktop "
                                             f"reads schemas {readable}; use the stacktop version that recorded it"))
                events.append(event)
    except NotRegularFile as exc:
        raise JournalError(clean(f"{path}: is {exc.kind}, not a journal - give a file from [recorder] dir")) \
            from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise JournalError(clean(f"{path}: a damaged gzip file ({exc}) - give an intact journal from "
                                 "[recorder] dir")) from None
    except OSError as exc:
        raise JournalError(clean(f"{path}: cannot be read: {exc.strerror} - check the path and permissions")) \
            from None
    if strict and skipped and not events:
        lines = "its line is" if skipped == 1 else f"all {skipped} lines are"
        raise JournalError(clean(f"{path}: not a stacktop journal ({lines} not journal entries; {first}) - give a "
                                 "file from [recorder] dir"))
    return JournalContents(events, skipped, first)


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    """Every entry of a journal, oldest first; lines that are not entries (a torn last line) are skipped."""
    return load_journal(path, strict=False).events


def journal_problem(events: Iterable[Mapping[str, Any]]) -> str | None:
    """Why these events cannot be replayed or exported as one session, in a few words, or None: two sessions'
    lines interleaved in one file (two `session` lines, or what one session never writes: a finding raised
    again before it cleared, a source failing again before it recovered), or a recorded snapshot with two rows
    of one id."""
    from tui.journal_codec import duplicate_id

    sessions: list[Any] = []
    raised: dict[tuple[Any, ...], Any] = {}  # a finding raised and not cleared since: raised again, two sessions
    failing: dict[tuple[Any, Any], Any] = {}
    two = "two sessions interleaved in one file"
    for event in events:
        kind = event.get("type")
        where = f" of cloud {event.get('cloud')}" if event.get("cloud") else ""
        source = (event.get("cloud"), event.get("source"))
        if kind == "session":
            sessions.append(event.get("session"))
            if len(set(sessions)) > 1:
                return f"{two} (sessions {sessions[0]} and {event.get('session')})"
        elif kind == "finding_raised" and isinstance(event.get("finding"), dict):
            f = event["finding"]
            key = (*source, f.get("kind"), f.get("subject"))
            if key in raised:
                return (f"{two} ({f.get('kind')} {f.get('subject')}{where} raised at {raised[key]} and again at "
                        f"{event.get('ts')}, never cleared between)")
            raised[key] = event.get("ts")
        elif kind == "finding_cleared":
            raised.pop((*source, event.get("kind"), event.get("subject")), None)
        elif kind == "source_failed":
            if source in failing:
                return (f"{two} (the {event.get('source')} source{where} failed at {failing[source]} and again at "
                        f"{event.get('ts')}, never recovered between)")
            failing[source] = event.get("ts")
        elif kind == "source_recovered":
            failing.pop(source, None)
        elif kind == "snapshot" and isinstance(event.get("full"), (dict, list)):
            twice = duplicate_id(event["full"])
            if twice is not None:
                return f"duplicate row keys in a recorded {event.get('source')} snapshot{where} ({twice})"
    return None


class Recorder:
    """What the app holds: a tracker feeding a journal, plus notes."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.tracker = ChangeTracker()
        self._trackers: dict[str, ChangeTracker] = {}  # per cloud, when the session has several
        self.cloud: str | None = None  # the cloud on screen (several clouds): notes and exercises name it

    def observe(self, obs: Observation, *, cloud: str | None = None) -> None:
        """cloud: which cloud the observation is of, in a session with several (every event then says so)."""
        if cloud is None:
            self.journal.write_all(self.tracker.observe(obs))
            self.journal.write_snapshot(obs)
            return
        events = self._trackers.setdefault(cloud, ChangeTracker()).observe(obs)
        self.journal.write_all({**event, "cloud": cloud} for event in events)
        self.journal.write_snapshot(obs, cloud=cloud)

    def _tag(self, event: dict[str, Any]) -> dict[str, Any]:
        return {**event, "cloud": self.cloud} if self.cloud is not None else event

    def note(self, text: str, *, subject: str | None = None, source: str | None = None) -> None:
        """A note typed by the engineer: at most NOTE_MAX_CHARS (what the note line takes); a longer one (an
        exercise's, a script's) keeps its head and tail, its middle cut and marked."""
        self.journal.write(self._tag({"type": "note", "text": shorten(text, NOTE_MAX_CHARS),
                                      "subject": subject or "session", "source": source}), carry=True)

    def silence(self, kind: str, subject: str, *, severity: str, for_s: float, until: float) -> None:
        """A finding acknowledged (`x`) until the epoch `until`: the review sees what was silenced, when."""
        self.journal.write(self._tag({"type": "silence", "kind": kind, "subject": subject, "severity": severity,
                                      "for_s": round(for_s),
                                      "until": datetime.fromtimestamp(until, UTC).isoformat()}), carry=True)

    def unsilence(self, kind: str, subject: str) -> None:
        """A silence lifted before its end (`X`)."""
        self.journal.write(self._tag({"type": "unsilence", "kind": kind, "subject": subject}), carry=True)

    def screenshot(self, path: str) -> None:
        """A screenshot the engineer took (palette), saved beside the journal: the export links it."""
        self.journal.write(self._tag({"type": "screenshot", "path": path}), carry=True)

    def exercise(self, result: Any, *, screenshot: str | None = None) -> None:
        """A finished exercise (tui.exercises.ExerciseResult): name, summary, markdown, data."""
        event = result.to_event()
        if screenshot:
            event["screenshot"] = screenshot
        self.journal.write(self._tag(event), carry=True)

    def close(self) -> None:
        self.journal.close()
