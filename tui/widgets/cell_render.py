"""A table cell of one line of plain text, rendered straight to its segments.

DataTable renders every cell through Rich's general machinery: `Styled(Padding(cell))` handed to
`Console.render_lines`, which goes through Padding, Text wrapping, a join, and two passes that split and crop
lines. For a one-line Text without spans that fits its column (most cells of a big table: names, states,
hosts, ids), the result is always the same few segments: the left padding, the text in its style, the filler
to the column's width, the right padding, each with the row's style before and the component's style after.
`one_line` makes those segments directly (what a terminal shows is the same; tests/ui/test_cell_render.py
compares it with DataTable's rendering over many cells); anything else (spans, wider than the column, tabs,
another justification) returns None and takes DataTable's way.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text


def one_line(content: object, width: int, padding: int, pre: Style, post: Style,
             console: Console) -> list[list[Segment]] | None:
    """The lines DataTable's _render_cell returns for `content` in a cell `width` wide (padding included),
    with `pre` (the row's style, its meta and the component's style) and `post` (the cursor's colours when the
    CSS has priority); None when the cell is not one that can be rendered this way."""
    if type(content) is not Text or content._spans or content.justify not in (None, "default"):
        return None
    plain = content.plain
    inner = width - 2 * padding
    if inner < 1 or "\n" in plain or "\t" in plain or cell_len(plain) > inner:
        return None
    edge = _styled(pre, None, post)  # the padding and the filler: no style of their own
    segments = [Segment(" " * padding, edge)] if padding else []
    if plain:
        base = content.style
        own = console.get_style(base, default=Style.null()) if base else None
        segments.append(Segment(plain, _styled(pre, own, post)))
    filler = inner - cell_len(plain)
    if filler:
        segments.append(Segment(" " * filler, edge))
    if padding:
        segments.append(Segment(" " * padding, edge))
    return [segments]


def _styled(pre: Style, own: Style | None, post: Style) -> Style:
    """Segment.apply_style(style=pre, post_style=post) on one segment, as Styled applies it."""
    style = pre + own
    return style + post if style else post
