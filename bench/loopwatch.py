"""Where the UI loop stalls: a watchdog thread samples the loop thread's stack while the loop is blocked.

A diagnostic, not a benchmark: `STACKTOP_BENCH_LOOPWATCH=FILE python -m bench --only keypress` makes the app
under test (bench/app_child.py) start it, and `--only keys` runs `stacktop --demo` under it (run_watched: one
FILE per app, FILE.1, FILE.2...); at exit FILE holds every stall over the threshold (start, length,
the loop thread's sampled stacks, and what the other threads were doing, e.g. a collector thread decoding
JSON while holding the GIL). `python -m bench.loopwatch FILE` summarises it: the functions seen most in
stalls, by total stalled time.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

THRESHOLD_S = 0.02
SAMPLE_S = 0.002


def _stack(frame: FrameType | None, limit: int = 40) -> list[str]:
    out: list[str] = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        out.append(f"{Path(code.co_filename).name}:{code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return out


class LoopWatch:
    """Beat from the loop every few ms; a thread notes the loop thread's stack while no beat comes."""

    def __init__(self, out: str, threshold_s: float = THRESHOLD_S) -> None:
        self.out = out
        self.threshold_s = threshold_s
        self.beat = time.perf_counter()
        self.loop_ident = threading.get_ident()
        self.stalls: list[dict[str, Any]] = []
        self._stop = False

    async def heartbeat(self) -> None:
        while not self._stop:
            self.beat = time.perf_counter()
            await asyncio.sleep(0.003)

    def start(self) -> None:
        self.loop_ident = threading.get_ident()
        asyncio.get_running_loop().create_task(self.heartbeat())
        threading.Thread(target=self._watch, daemon=True, name="loopwatch").start()

    def _watch(self) -> None:
        current: dict[str, Any] | None = None
        while not self._stop:
            time.sleep(SAMPLE_S)
            now = time.perf_counter()
            beat = self.beat
            if now - beat < self.threshold_s:
                if current is not None:
                    current["length_s"] = round(beat - current["start"], 4)
                    self.stalls.append(current)
                    current = None
                continue
            if current is None or current["start"] != beat:
                if current is not None:
                    current["length_s"] = round(now - current["start"], 4)
                    self.stalls.append(current)
                current = {"start": beat, "at": time.time(), "samples": [], "others": []}
            frames = sys._current_frames()
            current["samples"].append(_stack(frames.get(self.loop_ident)))
            others = [f"{t.name}:" + ";".join(_stack(frames.get(t.ident or 0), 6))
                      for t in threading.enumerate() if t.ident != self.loop_ident and t.name != "loopwatch"
                      and t.ident in frames]
            current["others"].append(others)

    def dump(self) -> None:
        self._stop = True
        Path(self.out).write_text(json.dumps({"threshold_s": self.threshold_s, "stalls": self.stalls}))


def summarise(path: str, top: int = 40) -> str:
    """The functions (file:function) seen in stalls, weighted by the stalled time each sample stands for."""
    doc = json.loads(Path(path).read_text())
    stalls = doc["stalls"]
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    total = 0.0
    for stall in stalls:
        samples = stall["samples"] or [[]]
        weight = stall["length_s"] / len(samples)
        total += stall["length_s"]
        for stack in samples:
            seen = set()
            for frame in stack:
                name = frame.rsplit(":", 1)[0]
                if name not in seen:
                    inclusive[name] += weight
                    seen.add(name)
            if stack:
                leaf[stack[0].rsplit(":", 1)[0]] += weight
    lengths = sorted(s["length_s"] for s in stalls)
    lines = [f"{len(stalls)} stalls over {doc['threshold_s'] * 1000:.0f} ms, {total:.2f} s in all; longest "
             + ", ".join(f"{v * 1000:.0f}" for v in lengths[-10:]) + " ms", "", "inclusive (s):"]
    lines += [f"  {v:7.3f}  {k}" for k, v in inclusive.most_common(top)]
    lines += ["", "leaf (s):"] + [f"  {v:7.3f}  {k}" for k, v in leaf.most_common(20)]
    # the watcher needs the GIL too, so it samples a busy loop only every switch interval (5 ms) or so: a stall
    # with under one sample per 20 ms was most likely a C call holding the GIL (JSON decoding in a collector
    # thread); what the other threads were doing then says which
    held = [st for st in stalls if len(st["samples"]) * 0.02 < st["length_s"]]
    lines += ["", f"{len(held)} stalls barely sampled (GIL held elsewhere?), {sum(s['length_s'] for s in held):.2f} s:"]
    for st in sorted(held, key=lambda st: -st["length_s"])[:8]:
        lines.append(f"  {st['length_s'] * 1000:.0f} ms, {len(st['samples'])} samples; loop: "
                     + ";".join((st["samples"] or [[]])[0][:4]))
        for other in (st["others"] or [[]])[0][:4]:
            lines.append(f"      {other[:300]}")
    return "\n".join(lines)


def run_watched(out: str, argv: list[str]) -> int:
    """`stacktop ARGV` (tui.cli.main, as the command line runs it) with a LoopWatch from the dashboard's mount;
    FILE written at exit. bench/keys.py runs the app so with STACKTOP_BENCH_LOOPWATCH=FILE set."""
    import atexit

    from tui.app import StacktopApp
    from tui.cli import main

    watch = LoopWatch(out)
    mount = StacktopApp.on_mount

    def on_mount(app: StacktopApp) -> None:
        watch.start()
        mount(app)

    StacktopApp.on_mount = on_mount  # type: ignore[method-assign]
    atexit.register(watch.dump)
    return main(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:  # python -m bench.loopwatch run FILE ARGS...: the app, watched
        sys.exit(run_watched(sys.argv[2], sys.argv[3:]))
    print(summarise(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40))
