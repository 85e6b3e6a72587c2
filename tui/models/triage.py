"""The triage row: the five triage commands at a glance, one cell per answer.

Checking the whole control plane: the three service listings, the two dependencies underneath
them (RabbitMQ, Galera), then the catalog. Each cell is what one of those commands would have told the
on-call engineer, with a level the UI colours:

- "ok": nothing wrong; "warning" / "critical": something is, the text says what;
- "unknown": the source is not configured, has not answered yet, or is failing (the text then says
  STALE / not configured, and shows the last values read, if any, so they are not mistaken for live ones).
"""

from __future__ import annotations

from typing import Literal

from tui.records import record

Level = Literal["ok", "warning", "critical", "unknown"]
LEVEL_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "unknown": 2, "ok": 3}

# Cell names in triage order (listings, then the bus and the database, then the catalog). The row shows
# the catalog first because "can anything authenticate at all" is the first thing to see.
CELL_NAMES: tuple[str, ...] = ("catalog", "compute", "agents", "volume", "rabbitmq", "galera", "placement")


@record
class TriageCell:
    """One answer. name: one of CELL_NAMES; label: what the row prints first ("compute", "RabbitMQ");
    text: the answer ("2/2 up"); source: the collector it rests on; stale: text shows last-good values."""

    name: str
    label: str
    text: str
    level: Level = "ok"
    source: str = ""
    stale: bool = False

    @property
    def line(self) -> str:
        return f"{self.label} {self.text}"


@record
class TriageSummary:
    """The whole row, cells in CELL_NAMES order."""

    cells: tuple[TriageCell, ...] = ()

    def cell(self, name: str) -> TriageCell | None:
        for c in self.cells:
            if c.name == name:
                return c
        return None

    @property
    def worst(self) -> Level:
        if not self.cells:
            return "unknown"
        return min((c.level for c in self.cells), key=lambda lv: LEVEL_ORDER[lv])

    @property
    def line(self) -> str:
        """Plain one-line form (snapshot text output, logs)."""
        return "  |  ".join(c.line for c in self.cells)


# the clauses a RabbitMQ cell says when all is well: left out of the brief form (brief_text)
REASSURANCES = frozenset({"no alarms", "no partitions", "service queues consumed"})


def brief_text(cell: TriageCell) -> str:
    """A shorter answer for a narrow terminal, where the whole row must still fit: an ok cell says only its
    first clause without its parenthesis ("7/7 up", "3/3 running", "ok"); any other cell drops the clauses that
    say all is well ("no partitions") and keeps the rest."""
    clauses = _clauses(cell.text)
    if cell.level == "ok":
        first = clauses[0] if clauses else cell.text
        head, paren, _ = first.partition(" (")
        return head if paren else first
    kept = [c for c in clauses if c not in REASSURANCES]
    return ", ".join(kept) if kept else cell.text


def _clauses(text: str) -> list[str]:
    """The text split at ", " outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and text.startswith(", ", i):
            out.append(text[start:i])
            start = i + 2
    out.append(text[start:])
    return [c for c in out if c]


TRIAGE_SOURCES = ("services", "rabbitmq", "galera")


def not_configured() -> TriageSummary:
    """The row of a dashboard that runs none of the triage row's sources (nothing to judge, ever)."""
    cells = [TriageCell(name, label, "not configured", "unknown", source) for name, label, source in (
        ("catalog", "catalog", "services"), ("compute", "compute", "services"), ("agents", "agents", "services"),
        ("volume", "volume", "services"), ("rabbitmq", "RabbitMQ", "rabbitmq"), ("galera", "Galera", "galera"))]
    return TriageSummary(tuple(cells))
