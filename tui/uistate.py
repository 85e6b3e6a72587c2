"""What the dashboard remembers between runs of its own choices: the theme picked in the palette (ctrl+p).

stacktop never writes its config file (it may be shared, managed, or read-only), so the choice goes into a small
state file of its own beside the user's config: `$XDG_CONFIG_HOME/stacktop/state.toml`, else
`~/.config/stacktop/state.toml`, holding only

    [ui]
    theme = "nord"

It is read at start (an unreadable or malformed file is ignored: the default theme) and written atomically (a
temporary file beside it, then renamed), with only that key.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

STATE_NAME = "state.toml"
MAX_BYTES = 64 * 1024  # a state file is a few lines: a larger one is not ours

log = logging.getLogger("stacktop")


def state_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the state file is: beside the user's own config file."""
    env = os.environ if env is None else env
    base = Path(env["XDG_CONFIG_HOME"]).expanduser() if env.get("XDG_CONFIG_HOME") else Path("~/.config").expanduser()
    return base / "stacktop" / STATE_NAME


class UIState:
    """The state file at `path`: read_theme() at start, save_theme() when the engineer picks one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read_theme(self) -> str | None:
        """The theme saved last, or None (no file, or one that is not a small TOML file with [ui] theme)."""
        import tomllib

        try:
            with self.path.open("rb") as f:
                raw = f.read(MAX_BYTES + 1)
        except OSError:
            return None
        if len(raw) > MAX_BYTES:
            log.warning("%s: larger than a state file, ignored", self.path)
            return None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            log.warning("%s: not a TOML file (%s), ignored", self.path, exc)
            return None
        ui = data.get("ui")
        theme = ui.get("theme") if isinstance(ui, dict) else None
        return theme if isinstance(theme, str) and theme else None

    def save_theme(self, theme: str) -> str | None:
        """Write `theme` as [ui] theme, atomically; None when written, else one line saying why not."""
        text = f"# stacktop's remembered choices (the theme picked in the palette); safe to delete\n[ui]\n" \
               f"theme = {json.dumps(theme)}\n"  # a TOML basic string is a JSON string
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".state-", suffix=".toml", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            return f"theme not remembered: {self.path}: {exc.strerror or exc}"
        return None
