"""Each config key is declared once (tui.config_schema): the reader, the example file and every default in the
code come from that declaration."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import SECTIONS, ConfigError, parse_config
from tui.config_example import render, section
from tui.config_keys import Bounds, declared, default_of, setting, toml_names
from tui.config_reader import Reader
from tui.config_schema import CloudConfig, Config, LogSource
from tui.records import record

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "tui" / "config_schema.py"


def _records() -> list[tuple[str, type]]:
    """(where, record) of every table the file may hold."""
    return [*SECTIONS.items(), ("clouds", CloudConfig), ("recorder.log_sources", LogSource)]


def test_config_example_toml_is_the_schema_written_out() -> None:
    text = (ROOT / "config.example.toml").read_text(encoding="utf-8")
    assert text == render(), "config.example.toml differs from the schema: run `stacktop config example > " \
                             "config.example.toml`"


def test_stacktop_config_example_prints_the_schema_written_out() -> None:
    done = subprocess.run([sys.executable, "-m", "tui", "config", "example"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "") and done.stdout == render()


def test_every_key_the_reader_accepts_is_in_the_example() -> None:
    text = render()
    missing = [f"{where}.{name}" for where, cls in _records() for name in toml_names(cls) - {"stuck", "log_sources"}
               if not re.search(rf"\b{name}( = |\]|`)", text)]
    assert missing == []
    assert "[thresholds.stuck]" in text and "[[recorder.log_sources]]" in text and "# [[clouds]]" in text


def test_every_number_key_is_bounded_and_its_default_within() -> None:
    for where, cls in _records():
        for f, key in declared(cls):
            if f.type == "float":
                assert key.bounds is not None, f"{where}.{f.name} declares no bounds"
                assert key.bounds.low <= default_of(f) <= key.bounds.high, f"{where}.{f.name}"


def _literal(value: float) -> str:
    """A regex for a number as code writes it: 16, 16.0, 16.00."""
    whole = f"{value:g}"
    return re.escape(whole) + (r"(?:\.0+)?" if "." not in whole else "")


def test_each_default_is_written_once_in_the_code() -> None:
    """A key's name next to its default value (`max_body_mb: float = 16.0`, `"max_body_mb", 16.0`,
    `max_body_mb=16`) appears in the schema only: the reader, the clients and the collectors take the schema's.
    Keys named by one plain word (interval, timeout, ...) are left out: that word is every poller's parameter;
    so is the simulated cloud, whose settings (nova's service_down_time) are the cloud's own."""
    sources = {p: p.read_text(encoding="utf-8") for p in (ROOT / "tui").rglob("*.py")
               if p != SCHEMA and "sim" not in p.relative_to(ROOT).parts}
    repeated, checked = [], 0
    for where, cls in _records():
        for f, _key in declared(cls):
            default = default_of(f)
            if "_" not in f.name or isinstance(default, bool) or not isinstance(default, int | float):
                continue
            checked += 1
            pattern = re.compile(rf"""\b{f.name}\b["']?\s*(?::\s*[\w.| ]+)?\s*[=,]\s*{_literal(default)}\b""")
            repeated += [f"{where}.{f.name} in {p.relative_to(ROOT)}" for p, text in sources.items()
                         if pattern.search(text)]
    assert checked >= 12 and repeated == []


def test_megabytes_become_bytes_one_way() -> None:
    """A `*_mb` value is turned into bytes by tui.config_keys.mb_bytes only (the records' `*_bytes`)."""
    pattern = re.compile(r"\w_mb\)?\s*\*")
    found = [f"{p.relative_to(ROOT)}:{i}" for p in (ROOT / "tui").rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == []


@record
class _Look:
    """A section as a new key would be added to one: one field each."""

    theme: str | None = setting(None, choices=("dark", "light"), example="dark", commented=True,
                                doc="The colour theme.")
    refresh: float = setting(2.0, bounds=Bounds(0.5, 60), doc="Seconds between redraws.")


def _read_look(table: dict[str, object]) -> dict[str, object]:
    r = Reader("c.toml", 0o600, {})
    return r.keys(r.table({"look": table}, "look", _Look), "look", _Look)


def test_a_new_key_is_one_declaration() -> None:
    """A field added to a section record is read, refused when mistyped or out of bounds, and written to the
    example, with no other change."""
    assert _read_look({}) == {"theme": None, "refresh": 2.0}
    assert _read_look({"theme": "light", "refresh": 5}) == {"theme": "light", "refresh": 5.0}
    bad = [({"them": "dark"}, "c.toml: look.them: unknown key - did you mean 'theme'?"),
           ({"theme": "drak"}, "c.toml: look.theme: 'drak' is not one of dark, light - did you mean 'dark'?"),
           ({"theme": 3}, 'c.toml: look.theme: must be a string, got an integer - quote it: theme = "..."'),
           ({"refresh": 0}, "c.toml: look.refresh: must be between 0.5 and 60 seconds, got 0 - e.g. refresh = 2")]
    for table, line in bad:
        with pytest.raises(ConfigError) as err:
            _read_look(table)
        assert str(err.value) == line
    assert section("look", _Look) == ["[look]", "# The colour theme.", '# theme = "dark"',
                                      "# Seconds between redraws.", "refresh = 2"]


def test_a_key_without_a_reader_is_refused_at_once() -> None:
    """A declaration naming no reader stacktop has (a typo) fails when read, never reads as its default."""

    @record
    class Typo:
        refresh: float = setting(2.0, read="numbr", bounds=Bounds(0.5, 60))

    r = Reader("c.toml", 0o600, {})
    with pytest.raises(TypeError, match=re.escape("Typo.refresh: no reader for 'numbr'")):
        r.keys({"refresh": 5}, "look", Typo)


def test_the_default_config_is_the_records_defaults() -> None:
    parsed = parse_config({}, file="(none)", mode=None, env={})
    assert parsed == Config()
