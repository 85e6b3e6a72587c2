"""The app under test, as a benchmark runs it in a pty: `python -m bench.app_child INFO.json MARKS.jsonl`.

It is stacktop's StacktopApp, unchanged, with the recorder on as `stacktop` runs it (its journal in a folder
beside MARKS.jsonl; STACKTOP_BENCH_NO_RECORDER=1 leaves it off, for a comparison), pointed at a simulator
running in another process (spawn_demo's info JSON): OpenStack and RabbitMQ through their real HTTP clients,
Galera through the simulator's connector seam (over the sim's control API, as tests do; tui.sim.remote_galera,
not the simulator's modules, and pymysql is imported at the first connect as the real connector does: the app
pays what a real deployment pays).
Nothing is written to the terminal besides what the app paints;
timing marks go to MARKS.jsonl: first_paint (after the first refresh), filled/<source> (after the refresh
that followed the source's first good observation), all_filled, complete/<source> (the first observation that
is not partial: the instances source first reads only the servers worth attention, then every server), and
obs/<source> counts.

    --interval S   poll every source every S seconds (default: the config defaults: 10/15/5 s)
    --fast A,B     only sources A and B poll every S seconds, the others at their defaults

Diagnostics: with STACKTOP_BENCH_LOOPWATCH=FILE set, bench/loopwatch.py samples where the UI loop stalls;
with STACKTOP_BENCH_PROFILE=FILE, cProfile records the UI thread (pstats FILE; from STACKTOP_BENCH_PROFILE_AFTER
seconds after the mount when set: the idle app without its start-up; STACKTOP_BENCH_PROFILE_CPU=1 times the
thread's CPU instead of the wall clock, so waits drop out and what the idle loop burns shows); with
STACKTOP_BENCH_REFRESHES=FILE, every Widget.refresh is counted by widget and kind (repaint / layout); with
STACKTOP_BENCH_EXIT_FILLED=1, the app exits once every pane is filled (a profile of the first triage alone);
with STACKTOP_BENCH_GCSTATS=1, every garbage collection is a `gc` mark (generation, ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("info")
    ap.add_argument("marks")
    ap.add_argument("--interval", type=float, default=None)
    ap.add_argument("--fast", default="", help="comma list: only these sources poll every --interval seconds")
    args = ap.parse_args()
    marks = open(args.marks, "a", buffering=1)  # noqa: SIM115 - lives as long as the process

    def mark(event: str, **kw: object) -> None:
        marks.write(json.dumps({"event": event, "t": time.time(), **kw}) + "\n")

    mark("start")
    info = json.loads(Path(args.info).read_text())

    from tui import gcpolicy

    gcpolicy.hold_until_first_frame()  # as `stacktop` (tui.cli) starts the dashboard
    import tui.app as tui_app
    from tui.app import ObservationMessage, StacktopApp
    from tui.cli import _recorder
    from tui.config import Config, GaleraConfig, OpenStackConfig, RabbitMQConfig, RecorderConfig, Secret, Thresholds

    base = Config()
    fast = {x for x in args.fast.split(",") if x}
    iv = None if fast else args.interval
    config = Config(
        openstack=OpenStackConfig(cloud=info["cloud"], clouds_file=info["clouds_file"],
                                  interval=iv or base.openstack.interval, timeout=base.openstack.timeout),
        rabbitmq=RabbitMQConfig(management_url=info["rabbitmq_url"], user="guest", password=Secret("guest", "demo"),
                                interval=iv or base.rabbitmq.interval, timeout=base.rabbitmq.timeout),
        galera=GaleraConfig(nodes=tuple(info["galera_nodes"]), user="monitor", password=Secret("stacktop-demo", "demo"),
                            expected_size=len(info["galera_nodes"]), interval=iv or base.galera.interval,
                            timeout=base.galera.timeout),
        thresholds=Thresholds(service_down_time=info["service_down_time"], agent_down_time=info["agent_down_time"]),
        recorder=RecorderConfig(dir=str(Path(args.marks).with_name("recordings"))),
        demo=True,
    )
    sources = ("services", "instances", "rabbitmq", "galera")
    trim = None
    if os.environ.get("STACKTOP_BENCH_MALLOC_TRIM"):  # experiment: give freed heap back after every poll
        import ctypes

        trim = ctypes.CDLL("libc.so.6").malloc_trim

    class BenchApp(StacktopApp):
        CSS_PATH = str(Path(tui_app.__file__).with_name("app.tcss"))  # relative to the defining module
        counts: dict[str, int] = {}
        filled: set[str] = set()
        complete: set[str] = set()

        def on_mount(self) -> None:  # runs before StacktopApp.on_mount (Textual calls both)
            self.call_after_refresh(lambda: mark("first_paint"))
            if watch is not None:
                watch.start()
            if profile is not None and profile_after > 0:
                self.set_timer(profile_after, lambda: profile.enable())
            # SIGUSR1: the GC policy's periodic full collection now (the app's own comes every 15 min): the
            # RSS benchmark tells memory still in use from garbage the freeze holds until that collection
            asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, self._full_collection)

        def _full_collection(self) -> None:
            import gc

            from tui import gcpolicy

            garbage = live = None
            if os.environ.get("STACKTOP_BENCH_GARBAGE"):  # diagnostic: what the collection found, by type
                gc.unfreeze()
                gc.set_debug(gc.DEBUG_SAVEALL)
                gc.collect()
                gc.set_debug(0)
                garbage = _by_type(gc.garbage).most_common(40)
                gc.garbage.clear()
            t = time.perf_counter()
            found = gcpolicy.full_collection()
            ms = round((time.perf_counter() - t) * 1000, 1)
            if garbage is not None:  # and what is alive after it (containers the GC tracks), by type
                import sys

                live = {"blocks": sys.getallocatedblocks(), "by_type": dict(_by_type(gc.get_objects()))}
            mark("full_collection", found=found, ms=ms, garbage=garbage, live=live)

        def _start_sources(self) -> None:
            from tui.collectors import galera
            from tui.collectors.mysql_import import import_pymysql
            from tui.collectors.registry import build_collectors
            from tui.sim.remote_galera import remote_galera_connector

            remote = remote_galera_connector(info["control_url"])

            def connector(address: str, user: str, password: str | None, timeout: float = 5.0) -> Any:
                import_pymysql()  # what the real connector imports at its first connect (a no-op after)
                return remote(address, user, password, timeout)

            collectors = [c for c in build_collectors(self.config, dashboard=True) if c.name != "galera"]
            collectors += galera.build(self.config, connector=connector)
            for c in collectors:
                if c.name in fast and args.interval:
                    c.interval = args.interval
            self._given_collectors = collectors
            super()._start_sources()

        def on_observation_message(self, message: ObservationMessage) -> None:
            obs = message.observation
            if trim is not None:
                trim(0)
            n = self.counts[obs.source] = self.counts.get(obs.source, 0) + 1
            mark("obs", source=obs.source, n=n, ok=obs.error is None, error=obs.error,
                 duration_s=obs.duration_s)
            if obs.snapshot is not None and not getattr(obs.snapshot, "partial", False) \
                    and obs.source not in self.complete:  # the instances source's first read is partial
                self.complete.add(obs.source)
                self._after_render(obs.source, lambda source=obs.source: mark("complete", source=source))
            if obs.snapshot is not None and obs.source not in self.filled:
                self.filled.add(obs.source)
                done = self.filled >= set(sources)

                def painted(source: str = obs.source, done: bool = done) -> None:
                    mark("filled", source=source)
                    if done:
                        mark("all_filled")
                        if os.environ.get("STACKTOP_BENCH_EXIT_FILLED"):  # diagnostic: profile start-up only
                            marks.flush()
                            os._exit(0)  # at once: an orderly exit waits for the polls still running

                self._after_render(obs.source, painted)

        def _after_render(self, source: str, callback: Callable[[], None]) -> None:
            """callback after the frame that shows the pane's render of this observation: the pane renders in
            its own message queue, after this handler (and StacktopApp's, which posts it there) returned."""
            def queue_behind() -> None:
                pane = next((p for p in self.panes if source == p.SOURCE), None)
                if pane is None:
                    self.call_after_refresh(callback)
                else:
                    pane.call_later(self.call_after_refresh, callback)

            self.call_later(queue_behind)

    watch = None
    if os.environ.get("STACKTOP_BENCH_LOOPWATCH"):  # diagnostic: where the UI loop stalls (bench/loopwatch.py)
        from bench.loopwatch import LoopWatch

        watch = LoopWatch(os.environ["STACKTOP_BENCH_LOOPWATCH"])
    refreshes = None
    if os.environ.get("STACKTOP_BENCH_REFRESHES"):  # diagnostic: who asks Textual to repaint / lay out
        from collections import Counter

        from textual.widget import Widget

        refreshes = Counter()
        original = Widget.refresh

        def counting(self, *regions, repaint=True, layout=False, recompose=False):  # type: ignore[no-untyped-def]
            refreshes[(type(self).__name__, self.id or "", "layout" if layout else "repaint")] += 1
            return original(self, *regions, repaint=repaint, layout=layout, recompose=recompose)

        Widget.refresh = counting  # type: ignore[method-assign]
    if os.environ.get("STACKTOP_BENCH_GCSTATS"):  # diagnostic: every collection's duration by generation
        import gc

        started: list[float] = [0.0]

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                mark("gc", generation=info["generation"], ms=round((time.perf_counter() - started[0]) * 1000, 3))

        gc.callbacks.append(on_gc)
    profile = None
    profile_after = float(os.environ.get("STACKTOP_BENCH_PROFILE_AFTER") or 0)
    if os.environ.get("STACKTOP_BENCH_PROFILE"):  # diagnostic: cProfile of the UI thread, for pstats
        import cProfile

        cpu = os.environ.get("STACKTOP_BENCH_PROFILE_CPU")
        profile = cProfile.Profile(time.thread_time) if cpu else cProfile.Profile()
        if profile_after <= 0:
            profile.enable()
    # the recorder on, as `stacktop` runs (tui.cli): every observation through the journal's thread
    recorder = None if os.environ.get("STACKTOP_BENCH_NO_RECORDER") else _recorder(config)
    BenchApp(config, recorder=recorder).run()
    if profile is not None:
        profile.disable()
        profile.dump_stats(os.environ["STACKTOP_BENCH_PROFILE"])
    if watch is not None:
        watch.dump()
    if refreshes is not None:
        Path(os.environ["STACKTOP_BENCH_REFRESHES"]).write_text(
            "\n".join(f"{n}\t{' '.join(key)}" for key, n in refreshes.most_common()) + "\n")
    mark("exit")


def _by_type(objects: list[Any]) -> Counter[str]:
    return Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objects)


if __name__ == "__main__":
    main()
