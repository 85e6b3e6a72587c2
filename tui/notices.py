"""Notices (what a toast would say) on one status line: the breadcrumb line's right side, never over a pane.

Every notice of the app (a key's answer, a saved note, a new critical finding, a command's error) goes to this
line, newest first; it stays until it expires (its timeout) or a newer one takes its place. No Textual here:
the app keeps the notices, tui.widgets.breadcrumb draws them.
"""

from __future__ import annotations

from rich.cells import cell_len, set_cell_size

GAP = 3  # cells between the crumbs and the notice
MIN_NOTICE = 24  # a notice keeps at least this many cells (the crumbs are cut first, down to MIN_CRUMBS)
MIN_CRUMBS = 12

# severity -> the style of the notice on the line
STYLES = {"error": "bold red", "warning": "bold yellow", "information": "bold"}


def cut(text: str, width: int) -> str:
    """`text` in at most `width` cells, cut with `…` when it does not fit."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"


def notice_text(message: str, title: str = "") -> str:
    """One line: the title (what kind of notice) before the message; line breaks become spaces."""
    text = f"{title}: {message}" if title else message
    return " ".join(text.split())


def fit(crumbs: str, notice: str, width: int) -> tuple[str, str]:
    """(crumbs, notice) cut to share one line of `width` cells: the notice on the right, the crumbs on the left
    with at least GAP cells between them. The notice takes what the crumbs leave, and at least MIN_NOTICE cells
    (the crumbs are cut for it, down to MIN_CRUMBS)."""
    if not notice:
        return cut(crumbs, width), ""
    crumb_room = max(min(cell_len(crumbs), width - GAP - MIN_NOTICE), min(MIN_CRUMBS, cell_len(crumbs)))
    crumbs = cut(crumbs, crumb_room)
    room = width - cell_len(crumbs) - (GAP if crumbs else 0)
    return crumbs, cut(notice, room)
