"""stacktop as users install a Python CLI: a wheel built from this tree (the files a clone holds), installed
with `pipx install` into a fresh environment of its own, run from a directory outside the tree (so the source
is not what gets imported): `stacktop --version`, `stacktop config example` (the packaged example config),
`stacktop snapshot --demo --json` and `stacktop --demo` in a real terminal. The wheel holds the LICENSE."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pyte
import pytest

import tui
from tests.testbed.pty import quit_cleanly, read_for, stacktop_in_pty

ROOT = Path(__file__).resolve().parents[2]
NOT_PACKAGED = {"tui/sim/README.md"}  # for readers of the source only


def tree_files() -> list[str]:
    """What a clone of this tree holds (tracked files and new ones not ignored)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         capture_output=True, check=True, timeout=60).stdout.decode()
    return [name for name in out.split("\0") if name and (ROOT / name).is_file()]


def sh(*command: str | Path, cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_runs_the_demo(tmp_path: Path) -> None:
    src, elsewhere = tmp_path / "src", tmp_path / "elsewhere"
    elsewhere.mkdir()
    files = tree_files()
    for name in files:
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    # pip keeps the user's configuration and cache; stacktop runs with its state and recordings under tmp_path
    pip_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    pip_env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env = {**pip_env, "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}

    built = sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", src,
               cwd=tmp_path, env=pip_env)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("stacktop-*.whl")
    assert wheel.name.startswith(f"stacktop-{tui.__version__}-")
    packaged = set(zipfile.ZipFile(wheel).namelist())
    data = {n for n in files if n.startswith("tui/") and not n.endswith(".py")} - NOT_PACKAGED
    assert "tui/app.tcss" in data
    assert data <= packaged, f"package data left out of the wheel: {sorted(data - packaged)}"
    sources = {n for n in files if n.startswith("tui/") and n.endswith(".py")}
    assert sources <= packaged, f"modules left out of the wheel: {sorted(sources - packaged)}"
    # the example config the messages point to, and the license text the metadata names
    assert "tui/config.example.toml" in packaged
    licenses = [n for n in packaged if n.endswith(".dist-info/licenses/LICENSE")]
    assert licenses, sorted(n for n in packaged if ".dist-info/" in n)
    license_text = zipfile.ZipFile(wheel).read(licenses[0]).decode()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    metadata = zipfile.ZipFile(wheel).read(next(n for n in packaged if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata and "Classifier: Topic :: System :: Monitoring" in metadata

    pipx_env = {**pip_env, "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
                "PIPX_MAN_DIR": str(tmp_path / "man")}
    installed = sh(sys.executable, "-m", "pipx", "install", wheel, cwd=tmp_path, env=pipx_env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    venv = tmp_path / "pipx" / "venvs" / "stacktop"
    stacktop = tmp_path / "bin" / "stacktop"
    assert stacktop.exists() and venv.is_dir(), installed.stdout

    where = sh(venv / "bin/python", "-c", "import tui; print(tui.__file__)", cwd=elsewhere, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout

    version = sh(stacktop, "--version", cwd=elsewhere, env=env)
    assert (version.returncode, version.stdout) == (0, f"stacktop {tui.__version__}\n")

    example = sh(stacktop, "config", "example", cwd=elsewhere, env=env)
    assert example.returncode == 0, example.stderr
    assert example.stdout == (ROOT / "config.example.toml").read_text(encoding="utf-8")

    # a deadline no loaded machine reaches: what is judged here is that it runs, not how fast
    snap = sh(stacktop, "snapshot", "--demo", "--json", "--deadline", "600", cwd=elsewhere, env=env, timeout=900)
    assert snap.returncode == 2, snap.stderr  # the demo's storyline point holds critical findings
    report = json.loads(snap.stdout)
    assert set(report["sources"]) == {"services", "instances", "rabbitmq", "galera", "placement"}
    assert all(source["ok"] for source in report["sources"].values()), report["sources"]
    assert any(f["kind"] == "triage.compute_down" for f in report["findings"])

    # the dashboard itself: its styles load from the installed package, the panes fill, ctrl+q exits 0
    screen = pyte.Screen(160, 48)
    stream = pyte.ByteStream(screen)
    with stacktop_in_pty(tmp_path, "--demo", program=(str(stacktop),), cwd=elsewhere) as (proc, master):
        out = b""
        deadline = time.monotonic() + 120
        while "compute-02" not in "\n".join(screen.display) and proc.poll() is None and time.monotonic() < deadline:
            chunk = read_for(master, 0.3)
            out += chunk
            stream.feed(chunk)
        assert "compute-02" in "\n".join(screen.display), out[-2000:].decode(errors="replace")
        out += quit_cleanly(proc, master)
    assert b"Traceback" not in out
