"""Blocking work that a quit or a deadline can walk away from.

Every blocking read (openstacksdk, pymysql, pika, the rules over a big snapshot) runs in a worker thread via
`asyncio.to_thread`. The standard pool's threads are joined when the interpreter exits (concurrent.futures
registers a join at shutdown, and asyncio.run waits for the pool): one read that never ends (a MySQL node
trickling a 16 MB greeting, a Keystone that accepts and never answers, getaddrinfo on a dead resolver) then
holds the process after `q`, and holds `stacktop snapshot`'s answer past its deadline.

- `DaemonThreadPool`: the event loop's default executor (`install(loop)`): daemon threads, never joined;
  `shutdown()` never waits for a task in flight. A read given up on ends in its thread when its socket
  closes or its deadline passes, or with the process.
- `leave(code)`: once a command has finished and flushed what it keeps (the dashboard: its journal), end
  the process at once with `code`, joining nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

MAX_WORKERS = 32  # threads kept at once; a burst past it waits in the queue, as with the standard pool


class DaemonThreadPool(ThreadPoolExecutor):
    """A ThreadPoolExecutor (what asyncio accepts as the default executor) whose workers are daemon threads
    that nothing joins: not the interpreter at exit, not `shutdown(wait=True)`, not asyncio.run."""

    def __init__(self, max_workers: int = MAX_WORKERS, name: str = "stacktop-io") -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix=name)  # the attributes callers may read
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]
                                       | None] = queue.SimpleQueue()
        self._lock_workers = threading.Lock()
        self._workers = 0
        self._idle = 0
        self._numbers = itertools.count(1)
        self._closed = False

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self._closed:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: Future[Any] = Future()
        with self._lock_workers:
            self._tasks.put((future, fn, args, kwargs))
            if self._idle > 0:
                self._idle -= 1  # that worker takes it
            elif self._workers < self._max_workers:
                self._workers += 1
                threading.Thread(target=self._work, name=f"{self._thread_name_prefix}-{next(self._numbers)}",
                                 daemon=True).start()
        return future

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn, args, kwargs = task
            del task
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    future.set_exception(exc)
                    del exc
                else:
                    future.set_result(result)
                    del result
            del future, fn, args, kwargs
            with self._lock_workers:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking work; idle workers end. Never waits (`wait` is accepted and ignored): a worker still
        reading is abandoned, a daemon thread that ends with its read or with the process."""
        with self._lock_workers:
            if self._closed:
                return
            self._closed = True
            workers = self._workers
        if cancel_futures:
            while True:
                try:
                    task = self._tasks.get_nowait()
                except queue.Empty:
                    break
                if task is not None:
                    task[0].cancel()
        for _ in range(workers):
            self._tasks.put(None)


def install(loop: asyncio.AbstractEventLoop | None = None) -> DaemonThreadPool:
    """Make a DaemonThreadPool the default executor of `loop` (default: the running loop), where
    asyncio.to_thread and run_in_executor(None, ...) put their work. Idempotent."""
    loop = loop or asyncio.get_running_loop()
    current = getattr(loop, "_default_executor", None)
    if isinstance(current, DaemonThreadPool):
        return current
    pool = DaemonThreadPool()
    loop.set_default_executor(pool)
    return pool


def stuck_threads() -> list[threading.Thread]:
    """Threads the interpreter would wait for at exit (alive, not daemon, not this one)."""
    me = threading.current_thread()
    return [t for t in threading.enumerate() if t.is_alive() and not t.daemon and t is not me
            and t is not threading.main_thread()]


def leave(code: int) -> None:
    """End the process now with `code`, after flushing the log handlers and the standard streams; the caller
    has already flushed and closed what it keeps (the journal). No thread is joined (the log says which were
    still running) and the interpreter's own teardown is skipped: after the dashboard, freeing its modules and
    objects takes 0.1-0.7 s of a quit's 1 s on a loaded 2-core host, and a daemon thread still reading would be
    torn down with it."""
    stuck = stuck_threads()
    if stuck:
        logging.getLogger("stacktop").info("exit: not waiting for %d thread(s) still running (%s)", len(stuck),
                                           ", ".join(t.name for t in stuck[:5]))
    logging.shutdown()  # flushes and closes every handler (the log file)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
