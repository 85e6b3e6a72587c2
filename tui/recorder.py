"""The observation journal: every change stacktop sees, appended as JSON lines for the post-incident review.

What is recorded (each line has `schema_version`, `ts`, `type`):
- source_failed / source_recovered: a source's transitions (not every failed poll);
- finding_raised / finding_cleared: by (kind, subject), with the finding's full text when raised;
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
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tui.jsonable import to_jsonable
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
log = logging.getLogger(__name__)


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, UTC).isoformat()


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
            after = {f.key: f for f in obs.findings}
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
    steer the terminal; the record's own line breaks stay."""

    def __init__(self, fmt: str, *, secrets: Iterable[str | None] = ()) -> None:
        super().__init__(fmt)
        self.redact = Redactor(secrets)

    def format(self, record: logging.LogRecord) -> str:
        text = self.redact(super().format(record))
        return "\n".join(clean(line) for line in text.split("\n"))


class Journal:
    """Append-only JSON-lines journal with a writer thread, per-line flush and size-bounded rotation."""

    def __init__(self, directory: str | Path, *, name: str | None = None, secrets: Iterable[str | None] = (),
                 max_bytes: int = DEFAULT_MAX_BYTES, keep: int = DEFAULT_KEEP,
                 max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES) -> None:
        self.directory = Path(directory).expanduser()
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.path = self.directory / (name or f"stacktop-{stamp}.jsonl")
        self.redact = Redactor(secrets)
        self.max_bytes = max_bytes
        self.keep = keep
        self.max_total_bytes = max_total_bytes
        self._queue: queue.Queue[str | Observation | tuple[str, Observation] | None] = queue.Queue()
        self._snapshots: Any = None  # tui.journal_codec.SnapshotEncoder, made by the writer thread
        # True while keys are being typed (the app's): the writer thread then puts off encoding a snapshot, which
        # would hold the interpreter in turns with the key's own work (at most HOLD_MAX_S)
        self.hold: Callable[[], bool] | None = None
        self._closing = threading.Event()
        self._file = self.path.open("a", encoding="utf-8")
        self._thread = threading.Thread(target=self._write_loop, name="stacktop-journal", daemon=True)
        self._thread.start()

    def write(self, event: Mapping[str, Any]) -> None:
        """Queue one event (thread-safe, never blocks on disk)."""
        record = {"schema_version": SCHEMA_VERSION, **to_jsonable(dict(event))}
        record.setdefault("ts", datetime.now(UTC).isoformat())
        self._queue.put(self.redact(json.dumps(record, sort_keys=False)))

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
        if self._snapshots is None:
            from tui.journal_codec import SnapshotEncoder

            self._snapshots = SnapshotEncoder()
        key = obs.source if cloud is None else f"{cloud}/{obs.source}"
        try:
            event = self._snapshots.event(key, obs.ok_at, obs.snapshot, obs.findings)
        except Exception:  # a snapshot that cannot be encoded must not stop the journal
            return None
        if event is None:
            return None
        record = {"schema_version": SCHEMA_VERSION, "ts": _iso(obs.ok_at), **event}
        if cloud is not None:
            record.update(source=obs.source, cloud=cloud)
        line = self.redact(json.dumps(record))
        self._snapshots.written(key, len(line) + 1, full="full" in event)
        return line

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
            self._file.write(line + "\n")
            self._file.flush()
            if self._file.tell() >= self.max_bytes:
                self._rotate()

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

    def warning(self, path: str | Path) -> str | None:
        """The one stderr line about skipped lines, or None."""
        if not self.skipped:
            return None
        lines = "1 line that is not a journal entry" if self.skipped == 1 else \
            f"{self.skipped} lines that are not journal entries"
        return clean(f"{path}: skipped {lines}")


def _entry(line: bytes) -> dict[str, Any] | None:
    """One journal line as an event, or None: not UTF-8, not JSON, not an object, no `type`, or fields of
    the wrong shape (the readers then never meet a finding that is a number, a source that is a list...)."""
    try:
        event = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    version = event.get("schema_version")
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        return None
    for key in ("ts", "source", "cloud", "subject", "kind", "name"):
        if event.get(key) is not None and not isinstance(event[key], str):
            return None
    if "finding" in event and not isinstance(event["finding"], dict):
        return None
    found = event.get("findings")
    if found is not None and not (isinstance(found, list) and all(isinstance(f, dict) for f in found)):
        return None
    if event.get("delta") is not None and not isinstance(event["delta"], dict):
        return None
    if event.get("at") is not None and (isinstance(event["at"], bool) or not isinstance(event["at"], (int, float))):
        return None
    return event


def load_journal(path: str | Path, *, strict: bool = True) -> JournalContents:
    """A journal's entries, oldest first, and the count of lines skipped (binary, not JSON, not an entry; a
    torn last line after a crash is one of them). strict: JournalError when an entry has a schema this
    stacktop does not read, or when lines were there and none was an entry."""
    import gzip
    import zlib

    path = Path(path)
    try:
        from tui.config import NotRegularFile, read_regular_file

        raw = read_regular_file(path, limit=None)
        if raw[:2] == b"\x1f\x8b":  # a rotated journal, gzipped
            raw = gzip.decompress(raw)
    except NotRegularFile as exc:
        raise JournalError(clean(f"{path}: is {exc.kind}, not a journal - give a file from [recorder] dir")) \
            from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise JournalError(clean(f"{path}: a damaged gzip file ({exc}) - give an intact journal from "
                                 "[recorder] dir")) from None
    except OSError as exc:
        raise JournalError(clean(f"{path}: cannot be read: {exc.strerror} - check the path and permissions")) \
            from None
    events: list[dict[str, Any]] = []
    skipped = 0
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        event = _entry(line)
        if event is None:
            skipped += 1
            continue
        if strict and event.get("schema_version", 1) not in READABLE_SCHEMAS:
            readable = ", ".join(str(v) for v in READABLE_SCHEMAS)
            raise JournalError(clean(f"{path}: journal schema {event['schema_version']} - this stacktop reads "
                                     f"schemas {readable}; use the stacktop version that recorded it"))
        events.append(event)
    if strict and skipped and not events:
        lines = "its line is" if skipped == 1 else f"all {skipped} lines are"
        raise JournalError(clean(f"{path}: not a stacktop journal ({lines} not journal entries) - give a "
                                 "file from [recorder] dir"))
    return JournalContents(events, skipped)


def read_journal(path: str | Path) -> list[dict[str, Any]]:
    """Every entry of a journal, oldest first; lines that are not entries (a torn last line) are skipped."""
    return load_journal(path, strict=False).events


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
        """An operator's note, up to NOTE_MAX_CHARS (what the note line takes)."""
        if len(text) > NOTE_MAX_CHARS:
            text = text[:NOTE_MAX_CHARS - 1] + "…"
        self.journal.write(self._tag({"type": "note", "text": text, "subject": subject or "session",
                                      "source": source}))

    def silence(self, kind: str, subject: str, *, severity: str, for_s: float, until: float) -> None:
        """A finding acknowledged (`x`) until the epoch `until`: the review sees what was silenced, when."""
        self.journal.write(self._tag({"type": "silence", "kind": kind, "subject": subject, "severity": severity,
                                      "for_s": round(for_s),
                                      "until": datetime.fromtimestamp(until, UTC).isoformat()}))

    def unsilence(self, kind: str, subject: str) -> None:
        """A silence lifted before its end (`X`)."""
        self.journal.write(self._tag({"type": "unsilence", "kind": kind, "subject": subject}))

    def screenshot(self, path: str) -> None:
        """A screenshot the engineer took (palette), saved beside the journal: the export links it."""
        self.journal.write(self._tag({"type": "screenshot", "path": path}))

    def exercise(self, result: Any, *, screenshot: str | None = None) -> None:
        """A finished exercise (tui.exercises.ExerciseResult): name, summary, markdown, data."""
        event = result.to_event()
        if screenshot:
            event["screenshot"] = screenshot
        self.journal.write(self._tag(event))

    def close(self) -> None:
        self.journal.close()
