"""Names a tenant (or a broken server) can give things: the simulated cloud speaks them with `hostile=True`.

Markup that would close, style, link or bind an action; terminal controls (screen clear, window title, OSC 52
clipboard write, a C1 CSI, BEL); zero-width and right-to-left characters; a 255-character name; a trailing
backslash. Every one is a legal server name in Nova or a legal volume / queue name elsewhere.
"""

from __future__ import annotations

CLEAR_AND_TITLE = "evil\x1b[2J\x1b]0;pwned\x07x"
NAMES: tuple[str, ...] = (
    "close:[/]",
    "[@click=app.quit]z[/]",
    "[link=http://evil.example]y[/link]",
    "[bold red]styled",
    CLEAR_AND_TITLE,
    "clip\x1b]52;c;ZXZpbA==\x07board",
    "c1\x9b31mred",
    "zero\u200bwidth\u200d",
    "rtl\u202eabc\u202c",
    "back\\",
    "<img src=x onerror=alert(1)>[a](http://evil.example)",
    "L" * 255,
)
FAULT = ("No valid host was found. [/] [@click=app.quit]q[/] \x1b[2J\x1b]52;c;ZXZpbA==\x07 "
         "<script>x</script> [a](http://evil.example)")
DISABLED_REASON = "[link=http://evil.example]maintenance[/link] \x1b]0;title\x07 [/]"
HOST_SUFFIXES: tuple[str, ...] = ("[/]", "\x1b[2J", "[@click=app.quit]")


def name(i: int) -> str:
    return NAMES[i % len(NAMES)]
