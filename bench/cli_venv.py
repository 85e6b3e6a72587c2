"""A scratch venv with python-openstackclient, for the five-command baseline only.

python-openstackclient is not a dependency of stacktop: it is installed into ~/.cache/stacktop/bench-venv
(created here when missing, never into the project's .venv) and only the `openstack` executable is used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

VENV = Path(os.environ.get("STACKTOP_BENCH_VENV", "~/.cache/stacktop/bench-venv")).expanduser()
PACKAGE = "python-openstackclient"


def openstack_cli(*, create: bool = True) -> Path | None:
    """Path of the scratch venv's `openstack` executable; builds the venv when missing and create is True."""
    exe = VENV / "bin" / "openstack"
    if exe.exists():
        return exe
    if not create:
        return None
    VENV.parent.mkdir(parents=True, exist_ok=True)
    print(f"bench: creating {VENV} with {PACKAGE} (once; not a stacktop dependency)", file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True, clear=False).create(VENV)
    pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, PACKAGE], check=True)
    return exe if exe.exists() else None


def version() -> str | None:
    exe = openstack_cli(create=False)
    if exe is None:
        return None
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip() or None


if __name__ == "__main__":
    print(openstack_cli())
