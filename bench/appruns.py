"""Runs of the real app (bench/app_child.py) in a pty against a simulator in another process."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import ROOT
from bench.ptyapp import PtyApp


class AppRun:
    """One app_child process in a pty, with its marks file."""

    def __init__(self, demo: Any, *, interval: float | None = None, fast: str = "", cols: int = 160, rows: int = 50,
                 extra: Sequence[str] = (), root: Path = ROOT) -> None:
        """root: the checkout whose app runs (another one: an A/B against an earlier revision)."""
        self.dir = Path(tempfile.mkdtemp(prefix="stacktop-bench-"))
        self.info = self.dir / "info.json"
        self.info.write_text(json.dumps(demo.info))
        self.marks_path = self.dir / "marks.jsonl"
        argv = [sys.executable, "-m", "bench.app_child", str(self.info), str(self.marks_path), *extra]
        if interval is not None:
            argv += ["--interval", str(interval)]
        if fast:
            argv += ["--fast", fast]
        self.spawned_at = time.time()
        self.pty = PtyApp(argv, cols=cols, rows=rows, cwd=root, env={"PYTHONPATH": str(root)}).start()

    def marks(self) -> list[dict[str, Any]]:
        try:
            lines = self.marks_path.read_text().splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a line being written
        return out

    def wait_mark(self, event: str, timeout: float = 120.0, **match: Any) -> dict[str, Any] | None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            for m in self.marks():
                if m["event"] == event and all(m.get(k) == v for k, v in match.items()):
                    return m
            if not self.pty.alive():
                return None
            time.sleep(0.05)
        return None

    def obs_count(self, source: str) -> int:
        return max((m.get("n", 0) for m in self.marks() if m["event"] == "obs" and m.get("source") == source),
                   default=0)

    def errors(self) -> list[str]:
        return sorted({f"{m['source']}: {m['error']}" for m in self.marks() if m["event"] == "obs" and m.get("error")})

    def stop(self) -> None:
        self.pty.stop()
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
