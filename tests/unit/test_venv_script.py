"""scripts/_venv.sh, as scripts/demo and scripts/test source it on a fresh clone: the demo installs only the
runtime dependencies (no pytest, hypothesis or ruff before its first screen), the test command the test
extra, and each installs again only when it must. Run on a copy of the scripts whose .venv/bin holds
stand-ins that write down how they were called (no package is installed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STAND_IN = '#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\n'


def clone(tmp: Path) -> Path:
    """The scripts, a pyproject.toml and a .venv of stand-ins, as a fresh clone right after `python -m venv`."""
    root = tmp / "clone"
    (root / "scripts").mkdir(parents=True)
    for name in ("_venv.sh", "demo", "test"):
        shutil.copy2(ROOT / "scripts" / name, root / "scripts" / name)
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    bin_dir = root / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("python", "stacktop", "ruff"):
        (bin_dir / name).write_text(STAND_IN.format(log=tmp / "calls.log"))
        (bin_dir / name).chmod(0o755)
    return root


def calls(tmp: Path, root: Path, *command: str) -> list[str]:
    """Run a script of the clone; the stand-ins' calls it made."""
    log = tmp / "calls.log"
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "STACKTOP_EXTRA"}
    proc = subprocess.run(["bash", str(root / "scripts" / command[0]), *command[1:]], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines() if log.exists() else []


def installs(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("python -m pip install -q -e ")]


def test_demo_installs_the_runtime_only_and_test_adds_the_test_extra(tmp_path: Path) -> None:
    root = clone(tmp_path)
    first = calls(tmp_path, root, "demo")
    assert installs(first) == [f"python -m pip install -q -e {root}"], first
    assert first[-1] == "stacktop --demo"
    assert calls(tmp_path, root, "demo") == ["stacktop --demo"], "installed already: straight to the demo"

    tests = calls(tmp_path, root, "test", "--fast", "-q")
    assert installs(tests) == [f"python -m pip install -q -e {root}[test]"], "the test tools on the first test run"
    assert tests[-1].startswith("python -m pytest -m not integration and not slow")
    assert installs(calls(tmp_path, root, "test", "--fast")) == []
    assert calls(tmp_path, root, "demo") == ["stacktop --demo"], "the test extra is a superset: no reinstall"


def test_a_changed_pyproject_installs_again(tmp_path: Path) -> None:
    root = clone(tmp_path)
    calls(tmp_path, root, "test", "--fast")
    later = time.time() + 60
    os.utime(root / "pyproject.toml", (later, later))
    assert installs(calls(tmp_path, root, "demo")) == [f"python -m pip install -q -e {root}"]
    assert installs(calls(tmp_path, root, "test", "--fast")) == [f"python -m pip install -q -e {root}[test]"]


def test_a_venv_made_by_the_earlier_script_counts_as_holding_the_test_extra(tmp_path: Path) -> None:
    root = clone(tmp_path)
    (root / ".venv" / ".stacktop-installed").touch()  # the earlier _venv.sh left an empty stamp after [test]
    assert calls(tmp_path, root, "test", "--fast")[0].startswith("ruff check")
    assert calls(tmp_path, root, "demo") == ["stacktop --demo"]
