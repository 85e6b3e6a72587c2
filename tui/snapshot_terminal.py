"""`stacktop snapshot` text on a terminal: the triage row, the sources, then each finding as a block, every line
wrapped at the terminal's width between tokens only, never inside one, so that a kind, a subject, a request id
or a command copied from the screen pastes whole:

    triage  catalog 6/6  |  compute 1 down  |  ...
    Sources  services ok 0.41s  ·  rabbitmq ERROR <error>  ·  ...
    Findings
    CRITICAL  nova.service_down  compute-01
        <summary, wrapped>
        next: <next step, wrapped>

A token wider than the terminal stands alone on its line, whole (the terminal folds it, as it folds any long
line; copied, it is one token). Without a terminal the report is one line per item (tui.snapshot_plain).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.text import Text

from tui.models.observation import Observation
from tui.safetext import clean
from tui.snapshot import all_findings, triage_row

INDENT = 4  # a finding's summary and next step, under its severity, kind and subject
LEVEL_STYLES = {"ok": "green", "warning": "yellow", "critical": "bold red", "unknown": "dim"}
SEVERITY_STYLES = {"critical": "bold red", "warning": "yellow", "info": "cyan"}

Token = tuple[str, str]  # a word and its style; a line breaks only between two tokens


def words(text: str, style: str = "") -> list[Token]:
    """The words of a text from outside (made safe first), each a token."""
    return [(word, style) for word in clean(text).split()]


def wrap(tokens: Iterable[Token], width: int, indent: int = 0, first: int = 0) -> list[Text]:
    """The tokens on lines of at most `width` cells, one space apart, broken only between tokens; the first
    line starts `first` cells in, the next ones `indent`. A token too wide for any line stands alone on its
    own, whole."""
    lines: list[Text] = []
    line, used, empty = Text(" " * first, no_wrap=True, overflow="ignore"), first, True
    for word, style in tokens:
        size = cell_len(word)
        if not empty and used + 1 + size > width:
            lines.append(line)
            line, used, empty = Text(" " * indent, no_wrap=True, overflow="ignore"), indent, True
        if not empty:
            line.append(" ")
            used += 1
        line.append(word, style=style)
        used, empty = used + size, False
    lines.append(line)
    return lines


@dataclass
class TerminalReport:
    """The report as a rich renderable, wrapped for the width it is printed at. Print it with crop=False, so
    that a token wider than the terminal is not cut."""

    observations: list[Observation]
    thresholds: Any = None
    now: float | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        yield from self.lines(max(options.max_width, 20))

    def lines(self, width: int) -> Iterator[Text]:
        observations = self.observations
        if not observations:
            yield from wrap(words("No source is configured: see config.example.toml, or try --demo.", "yellow"),
                            width)
        row = triage_row(observations, self.thresholds, self.now)
        if row is not None:
            tokens: list[Token] = [("triage", "bold")]
            for i, cell in enumerate(row.cells):
                if i:
                    tokens.append(("|", "dim"))
                tokens += words(cell.label, "bold") + words(cell.text, LEVEL_STYLES.get(cell.level, ""))
            yield from wrap(tokens, width, INDENT)
        if observations:
            tokens = [("Sources", "bold")]
            for i, obs in enumerate(observations):
                if i:
                    tokens.append(("·", "dim"))
                tokens += words(obs.source)
                tokens += [("ok", "green")] if obs.ok else [("ERROR", "bold red"), *words(obs.error or "no answer")]
                if obs.duration_s is not None:
                    tokens.append((f"{obs.duration_s:.2f}s", "dim"))
            yield from wrap(tokens, width, INDENT)
        findings = all_findings(observations)
        if findings:
            yield Text("Findings", style="bold")
        elif observations:
            yield Text("No findings.", style="green")
        for f in findings:
            head = [(f.severity.upper(), SEVERITY_STYLES[f.severity]), *words(f.kind), *words(f.subject)]
            yield from wrap(head, width, INDENT)
            yield from wrap(words(f.summary), width, INDENT, INDENT)
            if f.next_step:
                yield from wrap([("next:", "dim"), *words(f.next_step)], width, INDENT, INDENT)
