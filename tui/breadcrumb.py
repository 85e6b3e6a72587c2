"""Where the engineer is: `instances > 7f01ec30 > compute-02` (no Textual here).

With several clouds ([[clouds]]) the cloud on screen comes first (`demo-east > instances /BUILD`). The next part
is the focused pane of the dashboard (named like its `:` command) with its active filter; each
screen pushed on top adds its own part (a screen says it with a `crumb` attribute).
"""

from __future__ import annotations

from collections.abc import Iterable

SEPARATOR = " > "
# pane source -> the name the engineer types after `:` to get there
PANE_CRUMB = {"rabbitmq": "queues"}


def pane_crumb(source: str, filter_text: str = "") -> str:
    name = PANE_CRUMB.get(source, source)
    return f"{name} /{filter_text}" if filter_text.strip("!") else name


def join(parts: Iterable[str | None]) -> str:
    return SEPARATOR.join(p for p in parts if p)


def short_id(server_id: str) -> str:
    """Nova ids are UUIDs: the first block is what people say and type (`:server 7f01ec30`)."""
    return server_id.split("-")[0][:8] if len(server_id) > 8 else server_id
