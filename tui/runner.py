"""One loop per collector: timeout, no overlap, last-good snapshot, backoff, staleness, quiet logs.

The runner is the only place that calls Collector.collect. It publishes an Observation after every attempt
through a callback (the app wraps it in a Textual message; the snapshot command just keeps it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from tui.collectors.base import Collector
from tui.config import Thresholds
from tui.errors import SourceAbsent, SourceError
from tui.models.finding import Finding
from tui.models.observation import Observation
from tui.models.services import ServicesSnapshot
from tui.rules.judge import CloudJudge, SectionAtPoll, assess_services, judged

log = logging.getLogger("stacktop.runner")

MAX_BACKOFF_S = 300.0
CLOSE_S = 0.5  # a collector's aclose when its loop stops (a quit): longer, it is left to the process's end


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    return first or type(exc).__name__


class CollectorRunner:
    def __init__(
        self,
        collector: Collector,
        publish: Callable[[Observation], None] | None = None,
        *,
        clock: Callable[[], float] = time.time,
        judge: CloudJudge | None = None,
        thresholds: Any = None,
    ) -> None:
        """judge: the cloud's judge (its cloud view after each poll); thresholds: what services rows are judged
        with (the collector's own when it has them)."""
        self.collector = collector
        self.judge = judge
        self.thresholds = getattr(collector, "thresholds", None) or thresholds or Thresholds()
        self.publish = publish or (lambda obs: None)
        self.clock = clock
        self.failures = 0
        self.paused = False
        # a cloud that is not on screen polls no more often than this (None: at the collector's interval)
        self.slow_interval: float | None = None
        self._forced = False
        self._wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self.observation = Observation(source=collector.name)

    @property
    def name(self) -> str:
        return self.collector.name

    def next_delay(self) -> float:
        """The interval when healthy (or the slower one of a cloud not on screen); doubling backoff after
        repeated failures, capped."""
        interval = max(float(self.collector.interval), self.slow_interval or 0.0)
        if self.failures <= 1:
            return interval
        return min(interval * 2.0 ** (self.failures - 1), max(MAX_BACKOFF_S, interval))

    async def run_once(self) -> Observation:
        """One attempt under the collector's timeout. Never raises (except cancellation)."""
        async with self._lock:  # polls never overlap, even with "refresh now"
            start = self.clock()
            began = time.monotonic()  # the read's duration is wall time, whatever clock stamps it (sim time)
            previous = self.observation
            try:
                snapshot = await asyncio.wait_for(self.collector.collect(), timeout=self.collector.timeout)
            except asyncio.CancelledError:
                raise
            except TimeoutError:
                error = f"timed out after {self.collector.timeout:g}s"
                hint = getattr(self.collector, "timeout_hint", None)  # what hung and the key to raise
                if isinstance(hint, str) and hint:
                    error = f"{error} - {hint}"
                obs = self._failed(previous, error, start, began)
            except SourceAbsent as exc:  # nothing to read here, not a failure (configured=False says so)
                obs = replace(previous, error=exc.message, tried_at=start, configured=False)
            except SourceError as exc:
                obs = self._failed(previous, exc.message, start, began)
            except Exception as exc:  # a collector bug must not kill the loop
                obs = self._failed(previous, f"{type(exc).__name__}: {_one_line(exc)}", start, began)
            else:
                sections = None
                now = self.clock()
                # a replay's collector knows when the snapshot it answered was taken: the observation is of then
                recorded = getattr(self.collector, "recorded_at", None)
                if isinstance(recorded, (int, float)):
                    now = float(recorded)
                # the rules run in a worker thread: over 10,000 servers they take tens of ms, which on the UI
                # loop is a keypress waiting (a CPU-bound thread hands the GIL back every few ms)
                findings, sections = await asyncio.to_thread(self._evaluate, snapshot, now)
                if self.failures:
                    log.info("%s: recovered after %d failed attempt(s)", self.name, self.failures)
                self.failures = 0
                obs = Observation(
                    source=self.name,
                    snapshot=snapshot,
                    error=None,
                    ok_at=now,
                    tried_at=start,
                    duration_s=time.monotonic() - began,
                    findings=tuple(findings),
                )
            # the poll judged once, off the UI loop: the source's view and its cloud's (tui.models.judged)
            obs = await asyncio.to_thread(self._judged, obs, sections if obs.error is None else None)
            self.observation = obs
            self.publish(obs)
            return obs

    def _evaluate(self, snapshot: object, now: float) -> tuple[list[Finding], tuple[SectionAtPoll, ...] | None]:
        """The poll's findings, and the services rows judged for them (judged once: the views read them)."""
        at = datetime.fromtimestamp(now, UTC)
        sections = None
        try:
            if isinstance(snapshot, ServicesSnapshot):
                sections = assess_services(snapshot, at, self.thresholds)
            if sections is not None and getattr(self.collector, "takes_judged_rows", False):
                rows = {section.name: judged for section, _down_time, judged in sections}
                return list(self.collector.findings(snapshot, at, rows)), sections  # type: ignore[call-arg]
            return list(self.collector.findings(snapshot, at)), sections
        except Exception as exc:
            log.exception("%s: rules failed on a snapshot", self.name)
            return [
                Finding(
                    severity="warning",
                    kind="stacktop.rules_failed",
                    subject=self.name,
                    summary=f"stacktop could not evaluate {self.name}: {type(exc).__name__}: {_one_line(exc)}",
                    next_step="report this as a stacktop bug with the snapshot JSON",
                    source=self.name,
                )
            ], sections

    def _judged(self, obs: Observation, sections: tuple[SectionAtPoll, ...] | None) -> Observation:
        """The observation with the poll's judgement; a judgement that fails is a finding, not a dead loop."""
        now = self.clock() if obs.error is not None or obs.ok_at is None else obs.ok_at
        try:
            return judged(obs, self.thresholds, self.judge, now, sections)
        except Exception as exc:
            log.exception("%s: judging the poll failed", self.name)
            failed = Finding(severity="warning", kind="stacktop.rules_failed", subject=self.name,
                             summary=f"stacktop could not judge {self.name}: {type(exc).__name__}: {_one_line(exc)}",
                             next_step="report this as a stacktop bug with the snapshot JSON", source=self.name)
            return replace(obs, findings=(*obs.findings, failed))

    def _failed(self, previous: Observation, error: str, start: float, began: float) -> Observation:
        self.failures += 1
        if self.failures == 1:
            log.warning("%s: failed: %s", self.name, error)
        return Observation(
            source=self.name,
            snapshot=previous.snapshot,
            error=error,
            ok_at=previous.ok_at,
            tried_at=start,
            duration_s=time.monotonic() - began,
            findings=previous.findings,
        )

    def refresh_now(self) -> None:
        """Poll at once (also while paused: one refresh, then stay paused)."""
        self._forced = True
        self._wake.set()

    def set_slow(self, interval: float | None) -> None:
        """Poll at most every `interval` seconds (None: back to the collector's own interval, polling now)."""
        was = self.slow_interval
        self.slow_interval = interval
        if was is not None and interval is None:
            self.refresh_now()

    def pause(self) -> None:
        self.paused = True

    def resume(self) -> None:
        self.paused = False
        self._wake.set()

    async def _sleep(self, delay: float | None) -> None:
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), timeout=delay)

    async def run(self) -> None:
        """Poll forever; the next poll is scheduled only after the current one finished."""
        try:
            while True:
                obs = None
                if not self.paused or self._forced:
                    self._forced = False
                    obs = await self.run_once()
                # a partial snapshot (the instances source's first, attention-only read): the rest at once
                again = obs is not None and obs.error is None and bool(getattr(obs.snapshot, "partial", False))
                await self._sleep(None if self.paused else 0.0 if again else self.next_delay())
        finally:
            try:
                # bounded: a close that waits on a read in flight must not hold the quit
                await asyncio.wait_for(self.collector.aclose(), CLOSE_S)
            except Exception:
                log.debug("%s: aclose failed or took over %gs", self.name, CLOSE_S, exc_info=True)
