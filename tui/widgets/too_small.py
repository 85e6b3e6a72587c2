"""What the screen shows below the minimum terminal size: one clear line instead of a mangled dashboard."""

from __future__ import annotations

from textual.widgets import Static

MIN_WIDTH = 60
MIN_HEIGHT = 16


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


def message(width: int, height: int) -> str:
    return (f"Terminal too small: {width}x{height}. stacktop needs at least {MIN_WIDTH}x{MIN_HEIGHT} "
            f"(80x24 or larger is comfortable). Enlarge the window; ctrl+q quits.")


class TooSmall(Static):
    """Shown (and everything else hidden) while the screen has the -too-small class."""

    SCOPED_CSS = False  # the rules below hide the app's other widgets
    DEFAULT_CSS = """
    TooSmall { display: none; width: 1fr; height: 1fr; content-align: center middle; text-style: bold;
               color: $warning; padding: 0 1; }
    Screen.-too-small TooSmall { display: block; }
    Screen.-too-small > * { display: none; }
    Screen.-too-small > TooSmall { display: block; }
    """
