"""Run Python code in a fresh interpreter at the repository's root: what a module imports, and when, can only be
seen before anything else imported it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fresh_python(code: str, timeout: float = 120) -> str:
    """stdout of `python -c code`; fails the test with its stderr if it exits non-zero."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout
