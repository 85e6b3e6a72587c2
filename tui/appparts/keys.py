"""Keys first: renders of observations and the collection after a poll wait for a pending key's frame."""

from __future__ import annotations

import asyncio
import time

from textual import events
from textual.message import Message

from tui import gcpolicy

KEY_FIRST_S = 0.25  # renders wait at most this long for a pending key's frame (a key may change nothing)
# the collection after a poll (tui/gcpolicy.py, 20-110 ms with 10,000 servers held) waits until no key came for
# this long, so that it falls between keys, not in front of one; it waits at most GC_PUT_OFF_MAX_S
GC_KEY_QUIET_S = 0.15
GC_PUT_OFF_MAX_S = 5.0


class KeysPart:
    """Keys before renders: a pending key's frame goes out before observations are rendered, and the
    collection after a poll waits until keys stop."""

    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if posted and isinstance(message, events.Key):
            self._key_at = time.monotonic()
            self._end_triage_hold()  # a key's frame never waits for the first triage
            self.call_later(self._key_handled)  # queued behind the key
        return posted

    def _key_handled(self) -> None:
        # the key went through the app; its repaint (if it has one) is done by the next refresh
        self.call_after_refresh(self._key_done)

    def _key_done(self) -> None:
        self._key_done_at = time.monotonic()

    def key_pending(self) -> bool:
        """A key was received, and neither was a frame drawn since nor did the key go through with nothing
        to repaint (for at most KEY_FIRST_S)."""
        key_at = self._key_at
        return key_at > max(self._frame_at, self._key_done_at) and time.monotonic() - key_at < KEY_FIRST_S

    def keys_coming(self) -> bool:
        """A key in the last GC_KEY_QUIET_S, or one still waiting for its frame (read from any thread)."""
        return time.monotonic() - self._key_at < GC_KEY_QUIET_S or self.key_pending()

    async def keys_first(self) -> None:
        """Renders of observations wait here while a key is pending: the key's frame goes out first. Each
        widget renders in its own queue, so the app (the key) runs while they wait; a newer observation for
        the same widget replaces the waiting one."""
        while self.key_pending():
            await asyncio.sleep(0.005)

    def _collect_after_poll(self) -> None:
        """gcpolicy.after_poll where no key waits for it: while keys come (one in the last GC_KEY_QUIET_S, or
        one still waiting for its frame) it is put off, and runs once when they stop (or GC_PUT_OFF_MAX_S
        after it was first put off). Several polls meanwhile need one collection."""
        now = time.monotonic()
        if self._gc_put_off_at is None:
            self._gc_put_off_at = now
            if now - self._key_at >= GC_KEY_QUIET_S and not self.key_pending():
                self._gc_put_off_at = None
                gcpolicy.after_poll(now)
            else:
                self.set_timer(GC_KEY_QUIET_S, self._collect_when_quiet)
        # else a collection is already put off: it covers this poll too

    def _collect_when_quiet(self) -> None:
        put_off_at = self._gc_put_off_at
        if put_off_at is None:
            return
        now = time.monotonic()
        keys_came = now - self._key_at < GC_KEY_QUIET_S or self.key_pending()
        if keys_came and now - put_off_at < GC_PUT_OFF_MAX_S:
            self.set_timer(GC_KEY_QUIET_S, self._collect_when_quiet)
            return
        self._gc_put_off_at = None
        gcpolicy.after_poll(now)

