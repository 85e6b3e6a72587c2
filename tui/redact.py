"""URL passwords out of text: `scheme://user:secret@host` -> `scheme://user:***@host`.

For a password that came inside a URL no configured secret names (a Keystone catalog entry, an error line
quoting it): the journal, the log file, the snapshot output and the endpoint checks all pass through here.
Config URLs with credentials are refused outright (tui.config).
"""

from __future__ import annotations

import re

# `scheme://user:` (the user part holds no `:`, `/`, `@`, space, quote or backslash); the password follows
_START = re.compile(r"://[^:/\s@\"'<>\\]*:")
# what ends a URL in text: spaces, quotes (JSON, prose), angle brackets, backslashes
_STOP = re.compile(r"[\s\"'<>\\]")


def redact_userinfo(text: str) -> str:
    """The text with the password of every `scheme://user:password@` replaced by `***`.

    The password runs to the URL's last `@`: it may hold `@`, `/`, `?` or `#`, which a URL parser would read as
    the end of the authority (cutting the password into a host, a port and a path); an `@` in the URL's path
    then hides a little more than the password, never less. One pass, linear in the text: every search starts
    past the previous one's end."""
    if "://" not in text or "@" not in text:
        return text
    out: list[str] = []
    done = 0  # text[:done] is handled
    stop = -1  # the end of the URL holding the current start (cached while starts stay before it)
    first_at = -1
    for match in _START.finditer(text):
        begin = match.end()
        if match.start() < done:
            continue  # inside a password already cut out
        if stop < begin:
            found = _STOP.search(text, begin)
            stop = found.start() if found else len(text)
        if first_at < begin:
            first_at = text.find("@", begin)
            if first_at < 0:
                break  # no `@` left: no password either
        if first_at >= stop or first_at == begin:
            continue  # no `@` in this URL, or an empty password
        out += [text[done:begin], "***"]
        done = text.rfind("@", first_at, stop)
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)
