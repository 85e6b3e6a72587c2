"""The colour of the focused pane's border: one that never reads as critical (red) or warning (yellow).

A theme's accent is orange in Textual's default theme, which a 16-colour terminal (TERM=xterm) shows as bright
red: the focused pane looked like a failing one. The border takes the theme's primary colour instead (blue in
most themes), unless that too reads as red or yellow, in true colour or once reduced to 16 colours; then a plain
blue. The app sets it as the CSS variable $stacktop-focus (a theme may set that variable itself).
"""

from __future__ import annotations

from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.color import Color

FALLBACK = "#3a7bd5"  # blue: in 16 colours, blue
ALARM_ANSI = {1, 9, 3, 11}  # red, bright red, yellow, bright yellow (the 16-colour palette)


def ansi16(colour: Color) -> int:
    """The 16-colour palette index a terminal limited to 16 colours shows for `colour`."""
    if colour.ansi is not None and 0 <= colour.ansi < 16:
        return colour.ansi
    return RichColor.from_rgb(colour.r, colour.g, colour.b).downgrade(ColorSystem.STANDARD).number or 0


def reads_as_alarm(value: str) -> bool:
    """Red, orange or yellow (hue within 70 degrees above red, or 25 below it), in true colour or in 16 colours."""
    try:
        colour = Color.parse(value)
    except Exception:
        return True
    if ansi16(colour) in ALARM_ANSI:
        return True
    hue, saturation, _ = colour.hsl
    degrees = hue * 360
    return saturation > 0.25 and (degrees < 70 or degrees > 335)


def focus_colour(primary: str | None) -> str:
    """The theme's primary colour when it does not read as an alarm, else FALLBACK."""
    return primary if primary and not reads_as_alarm(primary) else FALLBACK
