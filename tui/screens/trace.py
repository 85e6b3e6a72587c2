"""The exercise screens: `:trace-boot [SERVER]`, `:trace-down HOST`, `:trace-request REQUEST_ID`.

One screen shows an exercise live while its driver (tui.exercises.live) runs in a worker owned by the screen:
the timeline redraws after every poll. When the exercise ends (ACTIVE/ERROR, the service seen down and back,
the request traced), or the engineer presses `s` / `escape`, the result is written to the journal as an
`exercise` event with an SVG screenshot of this screen beside the journal, and appears in
`stacktop export --markdown`. `m` on the compute-down trace marks "I stopped the service now".
Read-only: the exercises only read the cloud and the configured logs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.console import Group
from rich.markdown import Markdown
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from tui.commands import CommandError
from tui.exercises import ExerciseResult, stamp
from tui.safetext import escape, rich_escape
from tui.safetext import text as safe_text
from tui.screens.context import context
from tui.widgets.breadcrumb import Breadcrumb
from tui.widgets.key_scroll import KeyScroll

Driver = Callable[[Callable[[Any], None], asyncio.Event], Awaitable[Any]]


class TraceScreen(Screen[None]):
    """A running exercise. `driver(on_update, stop)` returns the exercise object; `render(obj, now)` draws it;
    `result(obj)` is what gets recorded; `mark(obj, now)` (optional) is what `m` does."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Stop and back"),
        Binding("s", "stop", "Stop and record"),
        Binding("m", "mark", "Mark: I stopped it now",
                tooltip="compute-down trace: mark the moment you stopped nova-compute"),
    ]

    DEFAULT_CSS = """
    TraceScreen > VerticalScroll { border: round $stacktop-focus; }
    TraceScreen #trace-status { padding: 0 1; height: auto; color: $text-muted; }
    TraceScreen #trace-body { padding: 0 1; height: auto; }
    """

    def __init__(self, title: str, driver: Driver, render: Callable[[Any, float], Any],
                 result: Callable[[Any], ExerciseResult], *, mark: Callable[[Any, float], str] | None = None,
                 crumb: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.crumb = crumb or title
        self.driver = driver
        self.render_fn = render
        self.result_fn = result
        self.mark_fn = mark
        self.exercise: Any = None
        self.result: ExerciseResult | None = None
        self.recorded = False
        self.stop_event = asyncio.Event()
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Breadcrumb()
        with KeyScroll():
            yield Static(escape(self.title_text) + ": starting...", id="trace-status")
            yield Static("", id="trace-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).border_title = escape(self.title_text)
        self.worker = self.run_worker(self._run(), group="trace", exclusive=True, exit_on_error=False)
        self.set_interval(1.0, self._redraw)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "mark":
            return self.mark_fn is not None
        return True

    def _now(self) -> float:
        return context(self.app).now()

    def _update(self, exercise: Any) -> None:
        self.exercise = exercise
        self._redraw()

    def _redraw(self) -> None:
        if self.exercise is None or not self.is_mounted:
            return
        try:
            body = self.render_fn(self.exercise, self._now())
        except Exception as exc:  # a rendering bug must not kill the measurement
            body = safe_text(f"cannot draw: {type(exc).__name__}: {exc}")
        self.query_one("#trace-body", Static).update(body)

    async def _run(self) -> None:
        status = self.query_one("#trace-status", Static)
        status.update(f"{escape(self.title_text)}: running - [b]s[/b] stops and records, [b]esc[/b] too"
                      + (", [b]m[/b] marks the moment you stopped the service" if self.mark_fn else ""))
        try:
            self.exercise = await self.driver(self._update, self.stop_event)
        except Exception as exc:
            self.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            status.update(f"[red]{escape(self.title_text)} failed: {escape(self.error)}[/]")
            return
        self._redraw()
        self._record()

    def _record(self) -> None:
        if self.recorded or self.exercise is None:
            return
        self.recorded = True
        self.result = self.result_fn(self.exercise)
        status = self.query_one("#trace-status", Static)
        recorder = context(self.app).recorder
        if recorder is None:
            # the result's summary heads the body below: said once, there
            status.update("[b]done[/b] [yellow]not recorded: no \\[recorder] journal in this session[/]")
            return
        shot = None
        try:
            name = f"{self.result.name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.svg"
            shot = self.app.save_screenshot(name, str(recorder.journal.directory))
        except Exception:  # a screenshot is a bonus; the result is what matters
            shot = None
        recorder.exercise(self.result, screenshot=shot)
        status.update("[b]done, recorded in the journal[/b]")
        self.app.notify(f"{self.result.name} recorded in the journal", timeout=3)

    def action_stop(self) -> None:
        self.stop_event.set()

    def action_mark(self) -> None:
        if self.mark_fn is not None and self.exercise is not None and not self.recorded:
            self.notify(self.mark_fn(self.exercise, self._now()), timeout=4)

    async def action_close(self) -> None:
        """Stop, let the driver finish its last poll and the result be recorded, then go back."""
        self.stop_event.set()
        if not self.worker.is_finished:
            try:
                await asyncio.wait_for(self.worker.wait(), timeout=10)
            except Exception:  # timed out or failed: go back anyway (a partial result is recorded if any)
                self._record()
        self.app.pop_screen()


# ----------------------------------------------------------------------------------------- renderers (pure)
def render_boot(trace: Any, now: float) -> Any:
    head = f"[b]{rich_escape(trace.summary())}[/b]"
    if not trace.steps:
        who = trace.server_id or "the next new server"
        return Text.from_markup(f"{head}\nwaiting for {rich_escape(who)} (polling every {trace.interval:g} s)")
    current = trace.steps[-1]
    live = ""
    if not trace.done:
        live = (f"\nnow: [b]{rich_escape(current.label)}[/b] for {now - current.first_seen:.1f} s, owner "
                f"[b]{rich_escape(current.owner)}[/b]"
                + (f" on {rich_escape(current.owner_host)}" if current.owner_host else ""))
    return Group(Text.from_markup(head + live), Markdown(trace.markdown()))


def render_down(lag: Any, now: float) -> Any:
    beat = lag.last_heartbeat
    live = [f"[b]{rich_escape(lag.summary())}[/b]"]
    if beat is not None and not lag.down_seen:
        live.append(f"last heartbeat {stamp(beat)}: {now - beat:.1f} s ago; nova flips it down after "
                    f"{lag.service_down_time:g} s without one")
    if lag.marked_at is not None:
        live.append(f"marked stopped at {stamp(lag.marked_at)} ({now - lag.marked_at:.1f} s ago)")
    return Group(Text.from_markup("\n".join(live)), Markdown(lag.markdown()))


def render_request(trace: Any, now: float) -> Any:
    return Group(Text.from_markup(f"[b]{rich_escape(trace.summary())}[/b]"), Markdown(trace.markdown()))


# ------------------------------------------------------------------------------------- command handlers
def _client_getter(app: Any) -> Callable[[], Any] | None:
    from tui.screens.host import client_getter

    return client_getter(app)


def resolve_server(app: Any, ref: str) -> tuple[str | None, str]:
    """(server id, "") for a known server (id, name or id prefix) or a UUID; (None, ref) otherwise: then
    the trace waits for the next new server named ref (start it before `openstack server create ref`)."""
    import re

    snap = context(app).snapshot("instances")
    servers = list(getattr(snap, "servers", ()) or ())
    matches = [s for s in servers if s.id == ref] or [s for s in servers if s.name == ref] \
        or [s for s in servers if s.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0].id, ""
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ref):
        return ref, ""
    return None, ref


def trace_boot(app: Any, args: list[str], name: str = "") -> None:
    """`:trace-boot [SERVER]`: follow SERVER (id, name or id prefix), or the next server created (named SERVER
    when no such server exists yet)."""
    from tui.exercises.boot_trace import BootTrace
    from tui.exercises.live import run_boot_trace

    getter = _client_getter(app)
    if getter is None:
        raise CommandError(context(app).cannot_read("nothing to trace"))
    interval = app.config.recorder.trace_interval
    server_id, wanted = resolve_server(app, args[0]) if args else (None, "")
    trace = BootTrace(interval=interval, server_id=server_id, name=wanted)

    async def driver(update: Callable[[Any], None], stop: asyncio.Event) -> Any:
        client = await asyncio.to_thread(getter)
        return await run_boot_trace(client, trace, on_update=update, stop=stop,
                                    clock=context(app).clock)

    title = (f"boot trace of {args[0]}" if server_id else f"boot trace of the next new server named {wanted}"
             if wanted else "boot trace of the next new server")
    app.push_screen(TraceScreen(title, driver, render_boot, lambda t: t.result(),
                                crumb=" ".join(("trace-boot", *args[:1]))))


def trace_down(app: Any, args: list[str], name: str = "") -> None:
    """`:trace-down HOST`: how long until the API reports nova-compute on HOST down, and its servers."""
    from tui.exercises.down_lag import DownLag
    from tui.exercises.live import run_down_lag
    from tui.screens.known_hosts import unknown_host

    problem = unknown_host(app, args[0])
    if problem is not None:
        raise CommandError(f":trace-down {args[0]}: {problem}")
    getter = _client_getter(app)
    if getter is None:
        raise CommandError(context(app).cannot_read("nothing to trace"))
    lag = DownLag(host=args[0], service_down_time=app.config.thresholds.service_down_time,
                  interval=app.config.recorder.trace_interval)

    def seen(x: Any) -> None:
        """When the dashboard's own services poll first raised a down finding about the host, and when any of
        its sources first named the host's nova-compute as failing (its queue's consumer, its heartbeat)."""
        obs = context(app).observation("services")
        if obs is not None and obs.ok_at is not None and x.dashboard_seen_at is None:
            for f in obs.findings:
                if "down" in f.kind and (f.subject == x.host or f.subject.endswith("@" + x.host)
                                                or f.evidence.get("host") == x.host):
                    x.dashboard_saw(obs.ok_at, f.kind)
        for source in ("rabbitmq", "services"):
            obs = context(app).observation(source)
            if obs is None or obs.ok_at is None or x.named_at is not None:
                continue
            for f in obs.findings:
                if f.evidence.get("host") == x.host and x.binary in (f.evidence.get("service"),
                                                                     f.evidence.get("binary")):
                    x.dashboard_named(obs.ok_at, f.kind)
                    break

    async def driver(update: Callable[[Any], None], stop: asyncio.Event) -> Any:
        client = await asyncio.to_thread(getter)
        return await run_down_lag(client, lag, on_update=lambda x: (seen(x), update(x)), stop=stop,
                                  clock=context(app).clock)  # the mark and `seen` use it too

    def mark(exercise: Any, now: float) -> str:
        exercise.mark(now)
        return f"marked: nova-compute on {exercise.host} stopped at {stamp(now)}"

    app.push_screen(TraceScreen(f"compute-down lag of nova-compute on {args[0]}", driver, render_down,
                                lambda x: x.result(), mark=mark, crumb=f"trace-down {args[0]}"))


def trace_request(app: Any, args: list[str], name: str = "") -> None:
    """`:trace-request REQUEST_ID`: nova's action and events plus the configured logs, per service."""
    from tui.exercises.live import run_request_trace

    rid = args[0]
    if context(app).replaying:
        raise CommandError(context(app).cannot_read("nothing to trace"))
    if not rid.startswith("req-"):
        raise CommandError(f":trace-request {rid}: a request id looks like req-<uuid> (openstack server event list)")
    getter = _client_getter(app)
    snap = context(app).snapshot("instances")
    candidates = [s.id for s in getattr(snap, "servers", ()) or () if getattr(s, "request_id", None) == rid]
    sources = app.config.recorder.log_sources

    async def driver(update: Callable[[Any], None], stop: asyncio.Event) -> Any:
        client = await asyncio.to_thread(getter) if getter is not None else None
        return await run_request_trace(client, rid, sources, candidates=candidates, on_update=update)

    app.push_screen(TraceScreen(f"request trace of {rid}", driver, render_request, lambda t: t.result(),
                                crumb=f"trace-request {rid}"))
