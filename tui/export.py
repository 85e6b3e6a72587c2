"""`stacktop export JOURNAL --markdown`: a review-ready report from a journal."""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui.recorder import read_journal
from tui.safetext import clean, markdown

CELL_MAX = 200  # characters of one table cell; the whole text stays in the journal


def _cell(value: Any, limit: int | None = None) -> str:
    """A value read from the journal: inert in Markdown and HTML, controls made visible; limit: cut there,
    with an ellipsis (table cells)."""
    if value is None:
        return ""
    text = str(value)
    if limit is not None and len(text) > limit:
        text = text[:limit - 1].rstrip() + "…"
    return markdown(text)


def _plain_key(text: str) -> str:
    """A row key of two parts (a RabbitMQ queue: vhost, unit separator, name), as a note's subject may hold
    it, as the name a person reads."""
    if "\x1f" not in text:
        return text
    return text.replace("/\x1f", "").replace("\x1f", " ")


def _epoch(ts: Any) -> float | None:
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


def _time(ts: Any) -> str:
    """A journal time (ISO 8601, microseconds, UTC) as the report shows it: to the second, marked UTC."""
    at = _epoch(ts)
    if at is None:
        return _cell(ts)
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_FENCE = re.compile(r"(`{3,})[^`]*")  # a code fence as stacktop writes it (md_block): at column 0
_ESCAPED_OR_BRACKET = re.compile(r"\\[!-/:-@\[-`{-~]|[\[\]]")
_TILDES = re.compile(r"^(\s*)~~~")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")  # what can open a raw HTML tag, comment or declaration, or an autolink


def _inert_text(text: str) -> str:
    """Text outside code: no raw HTML or autolink, and no `[` or `]` left to open a link, an image or a
    reference (one escaped already stays as it is; an entity such as md_cell's `&lt;` stays text)."""
    text = _TAG_START.sub("&lt;", text)
    return _ESCAPED_OR_BRACKET.sub(lambda m: m.group() if len(m.group()) == 2 else "\\" + m.group(), text)


def _text_line(line: str) -> str:
    """A line outside code blocks: its code spans kept (paired as CommonMark pairs backtick runs, a span never
    crossing a `|`: a table splits its cells first), the rest inert; a backtick run with no partner is escaped,
    so that no span reaches into another line or cell, and no line opens a code block."""
    out: list[str] = []
    plain = i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) and line[i + 1] in string.punctuation:
            i += 2
            continue
        if ch != "`":
            i += 1
            continue
        end = i
        while end < len(line) and line[end] == "`":
            end += 1
        width, closer, j = end - i, None, end
        while j < len(line) and line[j] != "|":
            if line[j] == "`":
                k = j
                while k < len(line) and line[k] == "`":
                    k += 1
                if k - j == width:
                    closer = k
                    break
                j = k
            else:
                j += 1
        out.append(_inert_text(line[plain:i]))
        if closer is None:
            out.append("\\`" * width)
            i = plain = end
        else:
            out.append(line[i:closer])
            i = plain = closer
    out.append(_inert_text(line[plain:]))
    return _TILDES.sub(lambda m: m.group(1) + "\\~~~", "".join(out))


def _exercise_markdown(text: str) -> str:
    """An exercise's report section as recorded, inert whatever the journal holds: controls made visible, and
    no link, image or raw HTML. A code block is kept as stacktop writes it (a fence of backticks at column 0,
    after a blank line that is added if missing, so that it opens a code block wherever it stands; closed at
    the end if the journal leaves it open); every other line goes through _text_line."""
    out: list[str] = []
    fence = ""
    for line in (clean(x) for x in text.split("\n")):
        if fence:
            if re.fullmatch(rf" {{0,3}}{fence}`*[ \t]*", line):
                fence = ""
            out.append(line)
            continue
        opened = _FENCE.fullmatch(line)
        if opened:
            fence = opened.group(1)
            if out and out[-1].strip():
                out.append("")
            out.append(line)
            continue
        out.append(_text_line(line))
    if fence:
        out.append(fence)
    return "\n".join(out)


def _destination(shot: str) -> str:
    """A link destination that a file name cannot break out of, always a path: a relative one starts with `./`
    or `../`, so that no name (`javascript:...`) reads as a URL scheme."""
    dest = quote(clean(shot), safe="/._-~:")
    return dest if dest.startswith(("/", "./", "../")) else "./" + dest


def _describe(event: dict[str, Any]) -> str:
    kind = event.get("type")
    if kind == "finding_raised":
        f = event.get("finding", {})
        return f"{str(f.get('severity', '?')).upper()} {f.get('kind')} {f.get('subject')}: {f.get('summary')}"
    if kind == "finding_changed":
        f = event.get("finding", {})
        return f"now {str(f.get('severity', '?')).upper()} {f.get('kind')} {f.get('subject')}: {f.get('summary')}"
    if kind == "finding_cleared":
        return f"cleared {event.get('kind')} {event.get('subject')}"
    if kind == "source_failed":
        return f"source failed: {event.get('error')}"
    if kind == "source_recovered":
        return "source recovered"
    if kind == "state_changed":
        return f"{event.get('object')}: {event.get('before')} -> {event.get('after')}"
    if kind == "baseline":
        return f"first poll: {event.get('objects')} objects"
    if kind == "note":
        return f"NOTE ({_plain_key(str(event.get('subject')))}): {event.get('text')}"
    if kind == "exercise":
        return f"exercise {event.get('name')}: {event.get('summary', '')}"
    if kind == "silence":
        return (f"silenced {event.get('kind')} {event.get('subject')} ({event.get('severity')}) for "
                f"{event.get('for_s')} s, until {event.get('until')}")
    if kind == "unsilence":
        return f"silence lifted: {event.get('kind')} {event.get('subject')}"
    if kind == "snapshot_omitted":
        return (f"snapshot of {event.get('source')} not recorded: {event.get('bytes')} bytes, over the journal's "
                f"line limit of {event.get('limit')} even cut")
    if kind == "cloud_switched":
        return f"switched to cloud {event.get('cloud')} (from {event.get('from')})"
    return str(kind)


def _link(shot: Path, journal: Path, output: Path | None) -> str:
    """Where the report links a screenshot: relative to the report file's folder when the report is written
    to a file, else the absolute path (a report on stdout can be saved anywhere). A relative path in the
    journal is relative to the journal's folder."""
    target = shot if shot.is_absolute() else journal.parent / shot
    target = Path(os.path.abspath(target))
    if output is None:
        return str(target)
    return os.path.relpath(target, Path(os.path.abspath(output)).parent)


def findings_table(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Raised findings with when they cleared (None: still open at the end of the journal). A finding whose
    judgement changed (severity, owner or host: `finding_changed`) is a row until then and a new row from then."""
    open_: dict[tuple[str | None, str | None, str | None], dict[str, Any]] = {}
    done: list[dict[str, Any]] = []
    for event in events:
        cloud = event.get("cloud")  # a session with several clouds: the same subject may be in two of them
        if event.get("type") in ("finding_raised", "finding_changed"):
            f = dict(event.get("finding", {}))
            key = (cloud, f.get("kind"), f.get("subject"))
            if cloud:
                f["subject"] = f"{cloud}: {f.get('subject')}"
            before = open_.pop(key, None)
            if before is not None:
                before["cleared"] = event.get("ts")
                done.append(before)
            open_[key] = {"raised": event.get("ts"), "cleared": None, **f}
        elif event.get("type") == "finding_cleared":
            row = open_.pop((cloud, event.get("kind"), event.get("subject")), None)
            if row is not None:
                row["cleared"] = event.get("ts")
                done.append(row)
    return done + list(open_.values())


def to_markdown(journal: str | Path, events: list[dict[str, Any]] | None = None, *,
                output: str | Path | None = None) -> str:
    """The report of a journal; events: its entries when already read (tui.recorder.load_journal); output:
    the file the report is written to (screenshot links are relative to it), None: links are absolute."""
    path = Path(journal)
    out = Path(output) if output is not None else None
    events = read_journal(path) if events is None else events
    lines = [f"# stacktop review: {_cell(path.name)}", ""]
    snapshots = sum(1 for e in events if e.get("type") == "snapshot")
    cut = [e["cut"] for e in events if e.get("type") == "snapshot" and isinstance(e.get("cut"), dict)]
    # snapshots are for `stacktop replay`, the session line for the readers' checks: neither for reading
    events = [e for e in events if e.get("type") not in ("snapshot", "session")]
    # in time order: the journal's writer thread may write an observation's events after a later note
    events = sorted(events, key=lambda e: (_epoch(e.get("ts")) is None, _epoch(e.get("ts")) or 0.0))
    if events:
        lines += [f"From {_time(events[0].get('ts'))} to {_time(events[-1].get('ts'))}, {len(events)} events "
                  f"(journal schema {_cell(events[0].get('schema_version'))}; {snapshots} recorded snapshots: "
                  f"stacktop replay {_cell(path.name)} shows the panes as they were).", ""]
    if cut:
        rows = max((c.get("rows") for c in cut if isinstance(c.get("rows"), int)), default=0)
        texts = max((c.get("texts") for c in cut if isinstance(c.get("texts"), int)), default=0)
        lines += [f"**{len(cut)} recorded snapshots were cut** to fit the journal file (up to {rows} rows left out "
                  f"and {texts} long texts shortened in one): raise [recorder] max_file_mb to record them whole.", ""]
    notes = [e for e in events if e.get("type") == "note"]
    lines += ["## Notes", ""]
    note_lines = [f"- {_time(n.get('ts'))} ({_cell(_plain_key(str(n.get('subject'))))}): {_cell(n.get('text'))}"
                  for n in notes]
    lines += note_lines or ["(none)"]
    silences = [e for e in events if e.get("type") in ("silence", "unsilence")]
    if silences:
        lines += ["", "## Silenced findings", ""]
        lines += [f"- {_time(e.get('ts'))}: {_cell(_describe(e))}" for e in silences]
    lines += ["", "## Findings", "", "| raised | cleared | severity | kind | subject | summary | next step |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in findings_table(events):
        lines.append("| " + " | ".join([_time(row.get("raised")), _time(row.get("cleared")) if row.get("cleared")
                                        else ""] + [_cell(row.get(k), CELL_MAX) for k in
                                                    ("severity", "kind", "subject", "summary", "next_step")]) + " |")
    exercises = [e for e in events if e.get("type") == "exercise"]
    lines += ["", "## Exercises", ""]
    if not exercises:
        lines.append("(none)")
    for ex in exercises:
        lines += [f"### {_cell(ex.get('name'))} ({_time(ex.get('ts'))})", "", _cell(ex.get("summary")), ""]
        if ex.get("markdown"):
            lines += [_exercise_markdown(str(ex["markdown"])), ""]
        if ex.get("screenshot"):
            shot = Path(str(ex["screenshot"]))
            lines += [f"Screenshot: [{_cell(shot.name)}]({_destination(_link(shot, path, out))})", ""]
    lines += ["", "## Timeline", "", "| time | source | event |", "| --- | --- | --- |"]
    for event in events:
        where = "/".join(str(x) for x in (event.get("cloud"), event.get("source")) if x)
        lines.append(f"| {_time(event.get('ts'))} | {_cell(where)} | {_cell(_describe(event), CELL_MAX)} |")
    # the screenshots this session took (palette or exercise); else every SVG beside the journal
    recorded = [Path(str(e["path"])) for e in events if e.get("type") == "screenshot" and e.get("path")]
    recorded += [Path(str(e["screenshot"])) for e in exercises if e.get("screenshot")]
    shots = list(dict.fromkeys(recorded)) or sorted(path.parent.glob("*.svg"))
    lines += ["", "## Screenshots", ""]
    lines += [f"- [{_cell(shot.name)}]({_destination(_link(shot, path, out))})" for shot in shots] or ["(none)"]
    return "\n".join(lines) + "\n"
