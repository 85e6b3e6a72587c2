"""`stacktop export JOURNAL --markdown`: a review-ready report from a journal."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tui.recorder import read_journal
from tui.safetext import clean, markdown, no_html


def _cell(value: Any) -> str:
    """A value read from the journal: inert in Markdown and HTML, controls made visible."""
    return "" if value is None else markdown(value)


def _exercise_markdown(text: str) -> str:
    """An exercise's report section as recorded (stacktop escapes the values it holds): controls made visible and,
    outside code blocks, no raw HTML, whatever the journal holds."""
    out: list[str] = []
    fence = ""
    for line in (clean(x) for x in text.split("\n")):
        stripped = line.lstrip()
        if fence and stripped.startswith(fence):
            fence = ""
        elif not fence and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif not fence:
            line = no_html(line)
        out.append(line)
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
        return f"NOTE ({event.get('subject')}): {event.get('text')}"
    if kind == "exercise":
        return f"exercise {event.get('name')}: {event.get('summary', '')}"
    if kind == "cloud_switched":
        return f"switched to cloud {event.get('cloud')} (from {event.get('from')})"
    return str(kind)


def _link(shot: Path, journal: Path) -> str:
    """Relative to the report when the screenshot lies beside the journal (the report is written there)."""
    return shot.name if shot.parent == journal.parent or not shot.is_absolute() else str(shot)


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


def to_markdown(journal: str | Path, events: list[dict[str, Any]] | None = None) -> str:
    """The report of a journal; events: its entries when already read (tui.recorder.load_journal)."""
    path = Path(journal)
    events = read_journal(path) if events is None else events
    lines = [f"# stacktop review: {_cell(path.name)}", ""]
    snapshots = sum(1 for e in events if e.get("type") == "snapshot")
    events = [e for e in events if e.get("type") != "snapshot"]  # for `stacktop replay`, not for reading
    if events:
        lines += [f"From {_cell(events[0].get('ts'))} to {_cell(events[-1].get('ts'))}, {len(events)} events "
                  f"(journal schema {_cell(events[0].get('schema_version'))}; {snapshots} recorded snapshots: "
                  f"stacktop replay {_cell(path.name)} shows the panes as they were).", ""]
    notes = [e for e in events if e.get("type") == "note"]
    lines += ["## Notes", ""]
    note_lines = [f"- {_cell(n.get('ts'))} ({_cell(n.get('subject'))}): {_cell(n.get('text'))}" for n in notes]
    lines += note_lines or ["(none)"]
    lines += ["", "## Findings", "", "| raised | cleared | severity | kind | subject | summary | next step |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in findings_table(events):
        lines.append("| " + " | ".join(_cell(row.get(k)) for k in
                                        ("raised", "cleared", "severity", "kind", "subject", "summary",
                                         "next_step")) + " |")
    exercises = [e for e in events if e.get("type") == "exercise"]
    lines += ["", "## Exercises", ""]
    if not exercises:
        lines.append("(none)")
    for ex in exercises:
        lines += [f"### {_cell(ex.get('name'))} ({_cell(ex.get('ts'))})", "", _cell(ex.get("summary")), ""]
        if ex.get("markdown"):
            lines += [_exercise_markdown(str(ex["markdown"])), ""]
        if ex.get("screenshot"):
            shot = Path(str(ex["screenshot"]))
            lines += [f"Screenshot: [{_cell(shot.name)}]({_destination(_link(shot, path))})", ""]
    lines += ["", "## Timeline", "", "| time | source | event |", "| --- | --- | --- |"]
    for event in events:
        where = "/".join(str(x) for x in (event.get("cloud"), event.get("source")) if x)
        lines.append(f"| {_cell(event.get('ts'))} | {_cell(where)} | {_cell(_describe(event))} |")
    # the screenshots this session took (palette or exercise); else every SVG beside the journal
    recorded = [Path(str(e["path"])) for e in events if e.get("type") == "screenshot" and e.get("path")]
    recorded += [Path(str(e["screenshot"])) for e in exercises if e.get("screenshot")]
    shots = list(dict.fromkeys(recorded)) or sorted(path.parent.glob("*.svg"))
    lines += ["", "## Screenshots", ""]
    lines += [f"- [{_cell(shot.name)}]({_destination(_link(shot, path))})" for shot in shots] or ["(none)"]
    return "\n".join(lines) + "\n"
