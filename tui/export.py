"""`stacktop export JOURNAL --markdown`: a review-ready report from a journal."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui.recorder import read_journal
from tui.safetext import clean, markdown, no_html

CELL_MAX = 200  # characters of one table cell; the whole text stays in the journal
_BRACKET = re.compile(r"([\[\]])")  # what opens a link, an image or a link reference definition


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


def _exercise_markdown(text: str) -> str:
    """An exercise's report section as recorded (stacktop escapes the values it holds): controls made visible and,
    outside code blocks, no raw HTML and no link or image (every bracket escaped: `[x](javascript:...)` stays
    text), whatever the journal holds; a code block left open is closed where the section ends."""
    out: list[str] = []
    fence = ""
    for line in (clean(x) for x in text.split("\n")):
        stripped = line.lstrip()
        if fence and stripped.startswith(fence):
            fence = ""
        elif not fence and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif not fence:
            line = _BRACKET.sub(r"\\\1", no_html(line))
        out.append(line)
    if fence:
        out.append(fence)
    return "\n".join(out)


def _destination(shot: str) -> str:
    """A link destination that a file name cannot break out of."""
    return quote(clean(shot), safe="/._-~:")


def _describe(event: dict[str, Any]) -> str:
    kind = event.get("type")
    if kind == "finding_raised":
        f = event.get("finding", {})
        return f"{str(f.get('severity', '?')).upper()} {f.get('kind')} {f.get('subject')}: {f.get('summary')}"
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
    """Raised findings with when they cleared (None: still open at the end of the journal)."""
    open_: dict[tuple[str | None, str, str], dict[str, Any]] = {}
    done: list[dict[str, Any]] = []
    for event in events:
        cloud = event.get("cloud")  # a session with several clouds: the same subject may be in two of them
        if event.get("type") == "finding_raised":
            f = dict(event.get("finding", {}))
            key = (cloud, f.get("kind"), f.get("subject"))
            if cloud:
                f["subject"] = f"{cloud}: {f.get('subject')}"
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
