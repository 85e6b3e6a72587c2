"""The screen as the driver would write it to the terminal, checked to be inert (hostile-input tests)."""

from __future__ import annotations

from typing import Any

from tui.safetext import has_unsafe


def rendered(app: Any) -> str:
    """Render the current screen to segments and return its text, asserting that every segment is inert: no
    control character in the text, no hyperlink, no click action (what a tenant's name could smuggle in)."""
    lines = []
    for strip in app.screen._compositor.render_strips():
        line = []
        for segment in strip:
            assert not has_unsafe(segment.text), f"control character reaches the terminal: {segment.text!r}"
            style = segment.style
            if style is not None:
                assert not style.link, f"a hyperlink on {segment.text!r}: {style.link}"
                assert "@click" not in style.meta, f"a click action on {segment.text!r}: {style.meta}"
            line.append(segment.text)
        lines.append("".join(line))
    return "\n".join(lines)
