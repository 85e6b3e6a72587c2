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
