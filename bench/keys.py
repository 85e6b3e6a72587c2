"""Key to paint at scale: `stacktop --demo` itself (the real command line: its in-process simulator and its
recorder) in a pty at 160x48, each key timed until the frame that shows its effect, not until any output.

The keys walk the instances pane with every server shown: tab to it, `a` (all rows), `/` and a filter typed
letter by letter, esc, `s` through every column and back to the default order, enter (the instance screen)
and esc, `a` back, shift+tab. Each key's effect is a pattern in what the terminal receives (the row count in
the status line, the filter in the pane title, the sort in the footer...). The same keys on the default demo
(200 servers) in the same run are the baseline: the ratio says what the rows cost.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import ROOT, Result, percentile
from bench.ptyapp import PtyApp
from bench.ptyscreen import PtyScreen

SORTS = ("name", "status", "task_state", "in state for", "host", "owner", "id", "project")  # the column order
# the instances status line (in the pane's own text: bench/ptyscreen.py pane_texts), in its full or its brief form
# (the brief one when the full one would take more than two lines); "showing all 22 of 202" is the filtered view
ALL_SHOWN = r"showing all [\d,]+(?! of)\b|all [\d,]+ shown"
# the attention view: its count reads like RabbitMQ's ("3 shown (a: all)"), so after the instances pane's total
ATTENTION_SHOWN = r"[\d,]+ servers · [^\n]*?(?:showing [\d,]+ worth attention|[\d,]+ shown \(a: all\))"
# a new critical finding's toast (10 s) lies over the top right of the screen, the instances pane's status
# line with it: a key's effect painted under it shows only when it goes
TOAST = r"new critical"
ON_INSTANCES = r"(?m)> instances$"  # the breadcrumb: the instances pane focused, no filter, no drill-down


@dataclass(frozen=True)
class Key:
    name: str
    data: bytes
    effect: tuple[str, ...]  # regexes over the screen's text (bench/ptyscreen.py): all shown = the key's effect
    gone: tuple[str, ...] = ()  # and none of these shown


def walk() -> list[Key]:
    """One round of keys; it ends where it started (the control-plane pane, attention view, no filter)."""
    keys = [
        Key("tab", b"\t", (ON_INSTANCES,)),
        Key("a (all rows)", b"a", (ALL_SHOWN,)),
        Key("/", b"/", (r"filter: regex, !inverts, esc clears",)),
        Key("type w", b"w", (r"(?m)[\d,]+ of [\d,]+ match /w$",)),
        Key("type e", b"e", (r"(?m)[\d,]+ of [\d,]+ match /we$",)),
        Key("type b", b"b", (r"(?m)[\d,]+ of [\d,]+ match /web$",)),
        Key("esc (filter)", b"\x1b", (ON_INSTANCES, ALL_SHOWN)),
    ]
    keys += [Key("s", b"s", ("sort: " + re.escape(name) + " ▲",)) for name in SORTS]
    keys += [
        Key("s", b"s", (r"sort: default",)),  # s after the last column: the pane's own order
        Key("enter", b"\r", (r"instance [0-9a-f]{8}-",)),
        # the dashboard itself (its breadcrumb and status line): the instance screen gone
        Key("esc (screen)", b"\x1b", (ON_INSTANCES, ALL_SHOWN)),
        Key("a (attention)", b"a", (ON_INSTANCES, ATTENTION_SHOWN), gone=(ALL_SHOWN,)),
        Key("shift+tab", b"\x1b[Z", (r"(?m)> services$",)),
    ]
    return keys


@dataclass
class Run:
    label: str
    by_key: dict[str, list[float]]
    lost: list[str]
    ready_s: float | None
    sent: list[tuple[str, float, float | None]] = field(default_factory=list)  # (key, sent at, key to paint)

    @property
    def all(self) -> list[float]:
        return [v for vals in self.by_key.values() for v in vals]


_watched = [0]  # apps run under bench/loopwatch.py so far


def drive(
    label: str,
    demo_args: list[str],
    servers: int,
    rounds: int,
    timeout: float = 60.0,
    root: Path = ROOT,
    command: Sequence[str] = ("-m", "tui"),
) -> Run:
    """`python -m tui --demo ARGS` (what `stacktop --demo ARGS` runs) in a pty; `rounds` walks of the keys once
    the instances pane lists every server (at least `servers`). root: the checkout to run (an A/B run);
    command: what python runs (a diagnostic wrapper around the same main())."""
    home = Path(tempfile.mkdtemp(prefix="stacktop-bench-keys-"))
    env = {"HOME": str(home), "XDG_STATE_HOME": str(home / "state"), "PYTHONPATH": str(root)}
    watched = os.environ.get("STACKTOP_BENCH_LOOPWATCH")  # diagnostic: where the UI loop stalls (bench/loopwatch.py)
    if watched:
        _watched[0] += 1
        command = ("-m", "bench.loopwatch", "run", f"{watched}.{_watched[0]}")
    app = PtyApp([sys.executable, *command, "--demo", *demo_args], cols=160, rows=48, env=env, cwd=home).start()
    screen = PtyScreen(app)
    run = Run(label, {}, [], None)
    try:
        # the full list read (not the first, attention-only one), its render done
        count = re.sub(r"\d", r"\\d", f"{servers:,}")  # as many digits: at least `servers`
        ready = screen.wait(0, [re.compile(r"\b" + count + r" servers")], timeout=300)
        if ready is None:
            raise RuntimeError(f"{label}: the instances pane never listed every server: {screen.text()[-400:]}")
        run.ready_s = ready - app.started_at
        app.quiet_for(1.0, timeout=30)
        for _ in range(rounds):
            for key in walk():
                effect = [re.compile(e) for e in key.effect]
                gone = [re.compile(e) for e in key.gone]
                i = app.mark()
                screen.feed_until(i)
                if screen.shows(effect, gone):  # the walk is out of step: this key would prove nothing
                    run.lost.append(f"{key.name} (shown before the key)")
                    continue
                t = app.send(key.data)
                got = screen.wait(i, effect, timeout, gone, re.compile(TOAST))
                run.sent.append((key.name, t, None if got is None else got - t))
                if got is not None and screen.uncovered:  # no key to paint to time
                    run.lost.append(f"{key.name} (under a toast)")
                elif got is None:
                    run.lost.append(key.name)
                    app.quiet_for(1.0, timeout=30, since=t)
                else:
                    run.by_key.setdefault(key.name, []).append(got - t)
                app.quiet_for(0.25, timeout=10, since=got or t)
    finally:
        app.stop()
    return run


def ms(values: list[float], p: float) -> str:
    v = percentile(values, p)
    return "n/a" if v is None else f"{v * 1000:.0f}"


def bench_keys(scale: object, rounds: int) -> list[Result]:
    """The walk on the default demo (the baseline), then at `scale` (instances, hosts, queues)."""
    base = drive("default demo", [], 200, rounds)
    big_args = [
        "--instances",
        str(scale.instances),
        "--hosts",
        str(scale.hosts),  # type: ignore[attr-defined]
        "--queues",
        str(scale.queues),
    ]  # type: ignore[attr-defined]
    big = drive(f"{scale.instances:,} instances", big_args, scale.instances, rounds)  # type: ignore[attr-defined]
    per_key = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in big.by_key.items())
    base_keys = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in base.by_key.items())
    note = (
        f"{rounds} rounds of {len(walk())} keys, each timed until the frame showing its effect; p50/p99 ms "
        f"per key at {big.label}: {per_key}; default demo: {base_keys}"
        + (f"; not timed: {', '.join(big.lost)}" if big.lost else "")
        + (f"; baseline lost: {', '.join(base.lost)}" if base.lost else "")
    )
    what = f"key to paint with {scale.instances:,} instances shown (a, / typing, esc, s, enter, tab)"  # type: ignore[attr-defined]
    p50 = Result(
        "keys",
        f"{what} p50",
        percentile(big.all, 50),
        "s",
        percentile(base.all, 50),
        "the same keys on the default demo (200 servers)",
        note=note,
        samples=big.all,
    )
    p99 = Result(
        "keys",
        f"{what} p99",
        percentile(big.all, 99),
        "s",
        percentile(base.all, 99),
        "the same keys on the default demo (200 servers)",
        goal="< 0.1 s",
        samples=big.all,
    )
    p99.met = p99.value is not None and p99.value < 0.1 and not big.lost
    worst = max(big.by_key.items(), key=lambda kv: percentile(kv[1], 99) or 0.0, default=None)
    slow = Result(
        "keys",
        f"slowest key at {scale.instances:,} instances (p99)",  # type: ignore[attr-defined]
        percentile(worst[1], 99) if worst else None,
        "s",
        note=f"`{worst[0]}`" if worst else "",
    )
    return [p50, p99, slow]
