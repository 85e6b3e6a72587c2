"""Key to paint at scale: `stacktop --demo` itself (the real command line: its in-process simulator and its
recorder) in a pty at 160x48, each key timed until the frame that shows its effect, not until any output.

The keys walk the instances pane with every server shown: tab to it, `a` (all rows), `/` and a filter typed
letter by letter, esc, `s` through every column and back to the default order, enter (the instance screen)
and esc, `a` back, shift+tab. Each key's effect is a pattern in what the terminal receives (the row count in
the status line, the filter in the pane title, the sort in the footer...). The same keys on the default demo
(200 servers) in the same run are the baseline: the ratio says what the rows cost.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import ROOT, Result, percentile
from bench.ptyapp import PtyApp

SORTS = ("name", "status", "task_state", "in state for", "host", "owner", "id", "project")  # the column order
# the instances status line, in its full or its brief form (the brief one where the pane is narrow)
ALL_SHOWN = rb"(showing all [\d,]+ \(a|all [\d,]+ shown \(a)"
ATTENTION_SHOWN = rb"(showing [\d,]+ worth attention|[\d,]+ shown \(a: all)"


@dataclass(frozen=True)
class Key:
    name: str
    data: bytes
    effect: bytes  # a regex over the bytes written after the key: the frame that shows what the key did


def walk() -> list[Key]:
    """One round of keys; it ends where it started (the control-plane pane, attention view, no filter)."""
    keys = [Key("tab", b"\t", rb"> instances"),
            Key("a (all rows)", b"a", ALL_SHOWN),
            Key("/", b"/", rb"inverts, esc clears"),
            Key("type w", b"w", rb"[\d,]+ of [\d,]+ match /w\b"),
            Key("type e", b"e", rb"[\d,]+ of [\d,]+ match /we\b"),
            Key("type b", b"b", rb"[\d,]+ of [\d,]+ match /web\b"),
            Key("esc (filter)", b"\x1b", "· ".encode() + ALL_SHOWN)]
    keys += [Key("s", b"s", b"sort: " + name.encode() + " ▲".encode()) for name in SORTS]
    keys += [Key("s", b"s", rb"sort: default"),  # s after the last column: the pane's own order
             Key("enter", b"\r", rb"instance [0-9a-f]{8}-"),
             # the dashboard itself (its status line), not the breadcrumb: the instance screen shows it too
             Key("esc (screen)", b"\x1b", ALL_SHOWN),
             Key("a (attention)", b"a", ATTENTION_SHOWN),
             Key("shift+tab", b"\x1b[Z", rb"> services")]
    return keys


_ESCAPES = re.compile(rb"\x1b\[[0-9;?<>=:]*[a-zA-Z~]|\x1b[()][0-9A-B]|\x1b[=>]")


def screen_text(data: bytes) -> bytes:
    """What was written, as text: escape sequences and box lines out, spaces collapsed (a status line that
    wraps inside its pane reads as one line)."""
    text = _ESCAPES.sub(b" ", data).decode(errors="replace")
    text = re.sub("[\u2500-\u257f]", " ", text)
    return " ".join(text.split()).encode()


def wait_effect(app: PtyApp, since: int, effect: bytes, timeout: float) -> float | None:
    """Arrival time of the chunk (index >= since) with which the text written since `since` first matches
    `effect`. The text is made chunk by chunk outside the reader's lock: holding it while reading a large
    repaint again and again stalled the reader, so the app's writes to the terminal, for seconds."""
    pattern = re.compile(effect)
    deadline = time.perf_counter() + timeout
    tail = b""  # the last 4 KB written before the chunk being read
    done = since
    while True:
        with app._cond:
            if done >= len(app.chunks):
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                app._cond.wait(min(left, 0.5))
            new = app.chunks[done:]
        for t, data in new:
            done += 1
            if not data:
                return None
            # the bytes as written, read again from 4 KB before this chunk: a chunk may end inside a word or
            # an escape sequence (the pty hands over what it has), and the match may begin before it
            window = tail + data
            if pattern.search(screen_text(window)):
                return t
            tail = window[-4096:]
        if time.perf_counter() > deadline:
            return None


@dataclass
class Run:
    label: str
    by_key: dict[str, list[float]]
    lost: list[str]
    ready_s: float | None

    @property
    def all(self) -> list[float]:
        return [v for vals in self.by_key.values() for v in vals]


def drive(label: str, demo_args: list[str], servers: int, rounds: int, timeout: float = 60.0,
          root: Path = ROOT) -> Run:
    """`python -m tui --demo ARGS` (what `stacktop --demo ARGS` runs) in a pty; `rounds` walks of the keys once
    the instances pane lists every server (at least `servers`). root: the checkout to run (an A/B run)."""
    home = Path(tempfile.mkdtemp(prefix="stacktop-bench-keys-"))
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / "state"), "PYTHONPATH": str(root)}
    app = PtyApp([sys.executable, "-m", "tui", "--demo", *demo_args], cols=160, rows=48, env=env, cwd=home).start()
    by_key: dict[str, list[float]] = {}
    lost: list[str] = []
    try:
        # the full list read (not the first, attention-only one), its render done
        count = re.sub(r"\d", r"\\d", f"{servers:,}").encode()  # as many digits: at least `servers`
        ready = wait_effect(app, 0, rb"\b" + count + rb" servers", timeout=300)
        if ready is None:
            raise RuntimeError(f"{label}: the instances pane never listed every server: "
                               + app.text()[-400:].decode(errors="replace"))
        app.quiet_for(1.0, timeout=30)
        for _ in range(rounds):
            for key in walk():
                i = app.mark()
                t = app.send(key.data)
                got = wait_effect(app, i, key.effect, timeout)
                if got is None:
                    lost.append(key.name)
                    app.quiet_for(1.0, timeout=30)
                else:
                    by_key.setdefault(key.name, []).append(got - t)
                app.quiet_for(0.25, timeout=10)
    finally:
        app.stop()
    return Run(label, by_key, lost, ready - app.started_at if ready is not None else None)


def ms(values: list[float], p: float) -> str:
    v = percentile(values, p)
    return "n/a" if v is None else f"{v * 1000:.0f}"


def bench_keys(scale: object, rounds: int) -> list[Result]:
    """The walk on the default demo (the baseline), then at `scale` (instances, hosts, queues)."""
    base = drive("default demo", [], 200, rounds)
    big_args = ["--instances", str(scale.instances), "--hosts", str(scale.hosts),  # type: ignore[attr-defined]
                "--queues", str(scale.queues)]  # type: ignore[attr-defined]
    big = drive(f"{scale.instances:,} instances", big_args, scale.instances, rounds)  # type: ignore[attr-defined]
    per_key = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in big.by_key.items())
    base_keys = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in base.by_key.items())
    note = (f"{rounds} rounds of {len(walk())} keys, each timed until the frame showing its effect; p50/p99 ms "
            f"per key at {big.label}: {per_key}; default demo: {base_keys}"
            + (f"; no effect within 60 s: {', '.join(big.lost)}" if big.lost else "")
            + (f"; baseline lost: {', '.join(base.lost)}" if base.lost else ""))
    what = f"key to paint with {scale.instances:,} instances shown (a, / typing, esc, s, enter, tab)"  # type: ignore[attr-defined]
    p50 = Result("keys", f"{what} p50", percentile(big.all, 50), "s", percentile(base.all, 50),
                 "the same keys on the default demo (200 servers)", note=note, samples=big.all)
    p99 = Result("keys", f"{what} p99", percentile(big.all, 99), "s", percentile(base.all, 99),
                 "the same keys on the default demo (200 servers)", goal="< 0.1 s", samples=big.all)
    p99.met = p99.value is not None and p99.value < 0.1 and not big.lost
    worst = max(big.by_key.items(), key=lambda kv: percentile(kv[1], 99) or 0.0, default=None)
    slow = Result("keys", f"slowest key at {scale.instances:,} instances (p99)",  # type: ignore[attr-defined]
                  percentile(worst[1], 99) if worst else None, "s",
                  note=f"`{worst[0]}`" if worst else "")
    return [p50, p99, slow]
