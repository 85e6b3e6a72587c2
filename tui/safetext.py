"""Strings from outside (APIs, broker, database, logs, journals, config values echoed back) are data.

They are never markup, never an action or a link, never a terminal control. Every widget, screen, toast and
text output takes them through here:

- `clean(s)`: C0/C1 controls, DEL, zero-width and bidirectional formatting characters become visible escapes
  (`\\x1b`, `\\u202e`), so the exact characters can be read and none reaches the terminal;
- `escape(s)`: `clean`, then safe inside Textual markup (Static, border titles, help lines);
- `rich_escape(s)`: `clean`, then safe inside Rich console markup (`snapshot` text output);
- `text(s, style)` / `cell(value)`: a `rich.text.Text`, which neither Textual nor Rich parse as markup;
- `strip_controls(s)`: every such character removed;
- `markdown(s)`: `clean`, then inert in Markdown and HTML (the review export).

JSON output is not touched: the JSON encoder escapes every control already.
"""

from __future__ import annotations

import re
from typing import Any

from rich.markup import escape as _rich_escape
from rich.text import Text

# Cc (C0, DEL, C1), zero-width and bidirectional formatting, line/paragraph separators, BOM.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                     "\ufff9-\ufffb]")
_MD_SPECIAL = re.compile(r"([\\`\[\]|])")  # code spans, links and images, table cells
_HTML_START = re.compile(r"<(?=[A-Za-z/!?])")  # what can open a raw HTML tag, comment or declaration
_ENTITY = re.compile(r"&(?=#?\w+;)")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(value: object) -> str:
    """The string with every control or invisible formatting character written out as an escape."""
    s = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub(_visible, s) if _UNSAFE.search(s) else s


def strip_controls(value: object) -> str:
    """The string without any control or invisible formatting character."""
    s = value if isinstance(value, str) else str(value)
    return _UNSAFE.sub("", s)


def has_unsafe(s: str) -> bool:
    return _UNSAFE.search(s) is not None


def escape(value: object) -> str:
    """Safe inside Textual markup: Textual's parser reads `\\[` as a literal `[` (and nothing else)."""
    return clean(value).replace("[", "\\[")


def rich_escape(value: object) -> str:
    """Safe inside Rich console markup."""
    return _rich_escape(clean(value))


def text(value: object, style: str = "", **kwargs: Any) -> Text:
    return Text(clean(value), style=style, **kwargs)


def cell(value: Any) -> Any:
    """A table cell that cannot be parsed as markup: str -> Text; a Text holding controls -> cleaned."""
    if isinstance(value, str):
        return Text(clean(value))
    if isinstance(value, Text) and _UNSAFE.search(value.plain):
        return Text(clean(value.plain), style=value.style, justify=value.justify, overflow=value.overflow)
    return value


def markdown(value: object) -> str:
    """Inert in Markdown and in HTML: no link, image, code span, table break, tag or entity survives; the rest
    stays as typed (`nova.service_down`, `<= 1.5 s`, a redacted `***`), so the raw report reads well too.
    Emphasis is left alone: it changes how a name looks, never what it does."""
    return _MD_SPECIAL.sub(r"\\\1", no_html(value))


def no_html(value: object) -> str:
    """`clean`, and nothing that Markdown would pass through as a raw HTML tag or an entity."""
    return _HTML_START.sub("&lt;", _ENTITY.sub("&amp;", clean(value)))
