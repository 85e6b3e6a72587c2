"""Garbage-collector policy of the dashboard: no long full collections in the middle of a keypress.

With 10,000 servers, 2,000 queues and 1,500 services held, a full collection walks millions of objects and
freezes the UI for a noticeable time. So after an observation the app calls after_poll() (once no key came for a
moment: StacktopApp._collect_after_poll): gc.collect() on
what is not frozen yet (the garbage cycles a poll leaves: httpx responses, caught exceptions' tracebacks), then
gc.freeze(), so the automatic collections only walk what was allocated since. Frozen objects are still freed by
reference counting (snapshots are acyclic); cyclic garbage among them waits for full_collection(), every
FULL_EVERY_S, which releases the frozen set, collects it once and hands free heap pages back to the system
(glibc's malloc_trim; see docs/reliability.md, "Long run"). release() on exit.

Start-up (hold_until_first_frame, first_frame): no automatic collection until the first frame, whose
allocations are nearly all long-lived (modules, classes, styles, widgets); right after it, what start-up built
is frozen, so the first observations' collections do not walk it either.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from functools import cache

FULL_EVERY_S = 900.0

_last_full = [time.monotonic()]
_held = [False]  # hold_until_first_frame disabled the automatic collections


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, looked up at the first full collection (15 min in), not at import: ctypes and
    find_library cost ~5 ms before the first paint."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim  # glibc only
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def full_collection(now: float | None = None) -> int:
    """Release the frozen set, collect everything, return freed heap pages to the system. Returns the number
    of unreachable objects found (cyclic garbage that the freeze had kept)."""
    _last_full[0] = time.monotonic() if now is None else now
    gc.unfreeze()
    found = gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
    return found


def after_poll(now: float | None = None) -> None:
    now = time.monotonic() if now is None else now
    if now - _last_full[0] >= FULL_EVERY_S:
        full_collection(now)
    else:
        gc.collect()  # only the objects not frozen yet: this poll's garbage cycles must not be frozen
    gc.freeze()


def hold_until_first_frame() -> None:
    """No automatic collection until first_frame() (the dashboard's start; see the module docstring)."""
    if gc.isenabled():
        gc.disable()
        _held[0] = True


def first_frame() -> None:
    """Freeze what start-up built and give back the automatic collections if hold_until_first_frame took
    them. Also called once the collectors are built (their imports are as long-lived)."""
    gc.freeze()
    end_hold()


def end_hold() -> None:
    """Automatic collections back on if hold_until_first_frame still holds them (no first frame came)."""
    if _held[0]:
        _held[0] = False
        gc.enable()


def release() -> None:
    """Back to the collector's normal care (app exit; tests create many apps in one process)."""
    gc.unfreeze()
