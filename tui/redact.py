"""URL passwords out of text: `scheme://user:secret@host` -> `scheme://user:***@host`.

For a password that came inside a URL no configured secret names (a Keystone catalog entry, an error line
quoting it): the journal, the log file, the snapshot output and the endpoint checks all pass through here.
Config URLs with credentials are refused outright (tui.config).
"""

from __future__ import annotations

import re

# user:password@ in a URL's authority: the password runs up to the `@`; JSON, quotes, spaces and paths end it
_USERINFO = re.compile(r"://([^:/\s@\"'<>\\]*):([^/\s@\"'<>\\]+)@")


def redact_userinfo(text: str) -> str:
    """The text with the password of every `scheme://user:password@` replaced by `***`."""
    return _USERINFO.sub(r"://\1:***@", text) if "://" in text and "@" in text else text
