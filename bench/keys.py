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


INSTANCES_PANE = r"(?m)^[\d,]+ servers ·[^\n]*?"  # the instances pane's text (its status line, header, rows)


def header_mark(label: str, mark: str) -> str:
    """The instances pane's header with this column marked (its label cut with … where the column is narrow):
    the table's own paint, not the footer's `sort: ...`."""
    cuts = "|".join(re.escape(label[:n]) + "…" for n in range(1, len(label)))
    return INSTANCES_PANE + r"(?<!\S)(?:" + re.escape(label) + "|" + cuts + ") " + mark


def walk(first: bool = False) -> list[Key]:
    """One round of keys; it ends where it started (the control-plane pane, attention view, no filter).
    first: the first round, whose `a` is timed apart (the first `a` of a session)."""
    keys = [
        Key("tab", b"\t", (ON_INSTANCES,)),
        Key("a (first, all rows)" if first else "a (all rows)", b"a", (ALL_SHOWN,)),
        Key("/", b"/", (r"filter: regex, !inverts, esc clears",)),
        Key("type w", b"w", (r"(?m)[\d,]+ of [\d,]+ match /w$",)),
        Key("type e", b"e", (r"(?m)[\d,]+ of [\d,]+ match /we$",)),
        Key("type b", b"b", (r"(?m)[\d,]+ of [\d,]+ match /web$",)),
        Key("esc (filter)", b"\x1b", (ON_INSTANCES, ALL_SHOWN)),
    ]
    # each key's effect is the footer's sort and the table's header marked (painted by the table itself)
    for name in SORTS:
        keys.append(Key("s", b"s", ("sort: " + re.escape(name) + " ▲", header_mark(name, "▲"))))
        keys.append(Key("S", b"S", ("sort: " + re.escape(name) + " ▼", header_mark(name, "▼"))))
    keys += [
        # s after the last column: the pane's own order, no column marked
        Key("s", b"s", (r"sort: default",), gone=(INSTANCES_PANE + "[▲▼]",)),
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
    load: list[float] = field(default_factory=list)  # load average (1, 5, 15 min) as the walk began, then ended

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
        run.load = [round(x, 2) for x in os.getloadavg()]
        for round_ in range(rounds):
            for key in walk(first=round_ == 0):
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
        run.load += [round(x, 2) for x in os.getloadavg()]
    return run


def ms(values: list[float], p: float) -> str:
    v = percentile(values, p)
    return "n/a" if v is None else f"{v * 1000:.0f}"


# the keys the issue of sorting at scale names, each with its own p99 goal: (what, the walk's key names)
GOALS = (("s", ("s",)), ("S", ("S",)), ("first a", ("a (first, all rows)",)),
         ("filter keystroke", ("type w", "type e", "type b")))


def load_note(run: Run) -> str:
    half = len(run.load) // 2
    return f"load average (1/5/15 min) {run.load[:half]} as the walk began, {run.load[half:]} as it ended"


def bench_keys(scale: object, rounds: int, other: Path | None = None) -> list[Result]:
    """The walk on the default demo (the baseline), then at `scale` (instances, hosts, queues). other: another
    checkout walked at `scale` in the same run, after this one (A/B): each key's p99 beside its own."""
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
    ab = None
    if other is not None:
        ab = drive(f"{scale.instances:,} instances, {other}", big_args, scale.instances, rounds,  # type: ignore[attr-defined]
                   timeout=15.0, root=other)  # a key painted 15 s late is as good as lost
    per_key = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in big.by_key.items())
    base_keys = "; ".join(f"{k} {ms(v, 50)}/{ms(v, 99)}" for k, v in base.by_key.items())
    note = (
        f"{rounds} rounds of {len(walk())} keys, each timed until the frame showing its effect; p50/p99 ms "
        f"per key at {big.label}: {per_key}; default demo: {base_keys}; {load_note(big)}"
        + (f"; not timed: {', '.join(big.lost)}" if big.lost else "")
        + (f"; baseline lost: {', '.join(base.lost)}" if base.lost else "")
    )
    what = f"key to paint with {scale.instances:,} instances shown (a, / typing, esc, s, S, enter, tab)"  # type: ignore[attr-defined]
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
    per_goal = []
    for name, keys in GOALS:
        values = [v for key in keys for v in big.by_key.get(key, [])]
        lost = [k for k in big.lost if k.split(" (")[0] in keys or k in keys]
        theirs = [v for key in keys for v in ab.by_key.get(key, [])] if ab is not None else []
        result = Result(
            "keys",
            f"`{name}` key to paint at {scale.instances:,} instances p99",  # type: ignore[attr-defined]
            percentile(values, 99),
            "s",
            percentile(theirs, 99) if ab is not None else None,
            f"the same key, {other}" if ab is not None else "",
            goal="< 0.1 s",
            note=f"{len(values)} timed, p50 {ms(values, 50)} ms" + (f", {len(lost)} not timed" if lost else "")
            + (f"; {other}: {len(theirs)} timed, p50 {ms(theirs, 50)} ms, p99 {ms(theirs, 99)} ms"
               + (f", not timed: {len([k for k in ab.lost if k.split(' (')[0] in keys])}" if ab.lost else "")
               + f", {load_note(ab)}" if ab is not None else "")
            + f"; this checkout: {load_note(big)}",
            samples=values,
        )
        result.met = result.value is not None and result.value < 0.1 and not lost
        per_goal.append(result)
    return [p50, p99, slow, *per_goal]
