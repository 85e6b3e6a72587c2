"""Run the test-bed scripts (scripts/testcloud, testcloud/galera.sh) from Python."""

from __future__ import annotations

import subprocess
import tempfile

from tests.testbed import paths


class TestbedError(RuntimeError):
    """A test-bed script failed; str() carries the tail of its output."""


def run_script(cmd: list[str], timeout: float) -> tuple[int | str, str]:
    """Run a test-bed script; return (exit code or "timeout after N s", output).

    Output goes through a temporary file, not a pipe: daemons started by the script must not be able to keep
    a pipe open (and this call waiting)."""
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=timeout, check=False)
            rc: int | str = proc.returncode
        except subprocess.TimeoutExpired:
            rc = f"timeout after {timeout:.0f} s"
        out.seek(0)
        return rc, out.read().decode(errors="replace")


def testcloud(verb: str, component: str, timeout: float = 1200) -> str:
    """scripts/testcloud VERB COMPONENT; its output, or TestbedError with the last 60 lines of it."""
    rc, text = run_script([str(paths.TESTCLOUD_SCRIPT), verb, component], timeout)
    if rc != 0:
        tail = "\n".join(text.splitlines()[-60:])
        raise TestbedError(f"`scripts/testcloud {verb} {component}` failed ({rc}). Output:\n{tail}")
    return text
