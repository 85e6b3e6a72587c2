"""`stacktop --version`: the installed distribution's version, or the source tree's when none is installed."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

import tui

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_installed_version_and_exits_0() -> None:
    proc = subprocess.run([sys.executable, "-m", "tui", "--version"], capture_output=True, text=True, cwd=ROOT,
                          timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"stacktop {importlib.metadata.version('stacktop')}\n",
                                                           "")
    assert importlib.metadata.version("stacktop") == tui.__version__, "pyproject reads the version from tui"


def test_version_falls_back_to_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert tui.version() == tui.__version__


def test_version_prefers_the_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "9.8.7" if name == "stacktop" else "?")
    assert tui.version() == "9.8.7"
