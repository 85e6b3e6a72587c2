"""RabbitMQ source: the management HTTP API read with httpx, optionally confirmed over AMQP.

Each request (and the decoding of its JSON) runs on a synchronous httpx.Client in a daemon thread of its own
(in_daemon_thread), off the UI loop: a hung broker holds neither the loop's shared executor nor quitting.

One poll reads, concurrently: the queues (`/api/queues`, or per [rabbitmq] vhost), `/api/nodes` (partitions,
alarms, fd and socket use), `/api/health/checks/local-alarms` (live alarms) and `/api/overview`. Every queue
listing is one unpaged request per path with only the columns the rules use (paged, the broker lists, formats
and sorts every queue again for each page). The broker pays per queue row *with statistics*, so only every
`full_every`-th poll lists every queue with statistics; the *light* polls between list every queue without
statistics and ask statistics by name only for the queues that need them (holding messages, new, or empty and
last seen with no consumer). A queue filling with nobody consuming is thus judged on fresh numbers every poll.
Up to LIGHT_MAX_QUEUES queues those statistics come in name-filtered pages; over it each such page would cost the
broker a listing of every queue, so they come one queue at a time (`GET /api/queues/<vhost>/<name>`, a lookup of
that queue alone; RabbitSnapshot.detail_by_queue). Keys the broker leaves out stay None: unknown, not zero.

History kept here so the rules stay pure (tui.rules.queues): since when and for how many polls each queue has
held messages with no consumer (QueueInfo.stuck_since / stuck_polls). With [rabbitmq] amqp_url, a queue about
to be reported is passively declared over AMQP and a live answer that disagrees vetoes the finding.
`prepare_oneshot()` (stacktop snapshot) makes one collect() reach the 2-poll verdict alone: each suspect queue
(at most MAX_HISTORY_CHECKS, service queues and the fullest first; the fetch info counts those left unconfirmed)
is asked once for its sample history (tui.collectors.rabbitmq_history), which stands for the second poll when it
shows the queue held for HISTORY_WINDOW_S with no consumer and no delivery. When a history does not cover that
window (a queue younger than it), one collect() takes a second sample instead: as soon as the broker's statistics
ticked once more (the newest sample timestamp of a suspect queue's length moved; watched every TICK_WATCH_S), and
at the latest `confirm_delay_s` later.

A vhost the user may not read is a blind spot, told as a finding (rabbitmq.vhost_not_readable), never silence: a
`monitoring` user lists only the queues of vhosts it has a permission on, yet /api/overview counts every queue.
A full poll that counts more queues than it listed asks each vhost of /api/vhosts with no queue in sight for its
listing (one small GET each); a 401 "not authorised to access virtual host" names it. A vhost of [rabbitmq] vhosts
refused that way is the same finding, and the other vhosts are still read.

Errors are SourceError with one line naming the URL and the config key to fix; a failed AMQP confirmation does
not fail the poll (snapshot.confirm_error). Without a password, user "guest" gets "guest" (RabbitMQ's default).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import ssl
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from tui import deadline
from tui.collectors.base import BaseCollector, BuildContext, Collector
from tui.collectors.rabbitmq_amqp import AmqpError, LiveQueue, passive_check
from tui.collectors.rabbitmq_history import HISTORY_PARAMS, HistoryVerdict, judge_history
from tui.collectors.rabbitmq_params import light_listing, name_regexes, queue_path, stats_by_name, stats_listing
from tui.collectors.rabbitmq_payload import (
    NODE_COLUMNS,
    OVERVIEW_COLUMNS,
    ParsedQueues,
    bounded_counts,
    parse_alarms,
    parse_node,
    parse_queues_reusing,
)
from tui.config import Config, RabbitMQConfig, Secret
from tui.config_keys import mb_bytes
from tui.errors import SourceError
from tui.httpx_import import import_httpx
from tui.models.finding import Finding
from tui.models.rabbitmq import Alarm, NodeInfo, QueueInfo, RabbitSnapshot
from tui.readonly import httpx_request_hook
from tui.redirects import httpx_response_hook
from tui.rules.consumers import DEFAULT_GRACE_S, ConsumerHistory, apply_consumer_history
from tui.rules.queues import (
    MIN_POLLS,
    History,
    apply_history,
    classify_queue,
    is_suspect,
    rabbitmq_findings,
    set_permissions,
)
from tui.tlserror import ca_file_problem, certificate_names, describe_verify, is_name_mismatch, verify_reason

if TYPE_CHECKING:
    import httpx
else:
    httpx = import_httpx()  # without its command-line module (tui.httpx_import)

PAGE_SIZE = 500  # the name-filtered statistics requests of a light poll (the broker filters only when paged)
FULL_EVERY = 4  # every 4th poll lists every queue with statistics; the others are light (module docstring)
LIGHT_MAX_QUEUES = 5000  # more queues than this in the last listing: light polls ask statistics queue by queue
DETAIL_PARALLEL = 8  # of those GETs at a time
MAX_DETAIL = 300  # more queues than this hold messages in a light poll: list them all with statistics
MAX_EMPTY_WATCH = 50  # empty queues last seen with no consumer, re-checked on light polls (beyond: next full)
MAX_LIVE_CHECKS = 200
MAX_CONSUMER_LISTING = 2000  # consumers on the broker (its overview): up to this many, each poll lists them
MAX_SERVICE_WATCH = 64  # service topic queues with a consumer whose count every poll reads fresh (beyond: full polls)
CONFIRM_DELAY_S = 6.0  # the latest second sample of a one-shot run (the broker's statistics tick is 5 s)
TICK_WATCH_S = 0.5  # how often a one-shot run asks whether the broker's statistics ticked
MAX_HISTORY_CHECKS = 50  # suspect queues a one-shot run asks the sample history of (one GET each)
HISTORY_PARALLEL = 8  # of those GETs at a time
MAX_VHOST_PROBES = 50  # vhosts with no queue in sight, asked whether the user may list them (full polls only)


class VhostNotReadable(SourceError):
    """The management API refused a vhost's queue listing: the user has no permission on that vhost."""

    def __init__(self, message: str, vhost: str) -> None:
        super().__init__(message)
        self.vhost = vhost


def _vhost_refused(resp: httpx.Response) -> bool:
    """A 401 that is about the vhost, not the login: `{"reason": "User not authorised to access virtual host"}`."""
    try:
        data = resp.json()
    except ValueError:
        return False
    return isinstance(data, dict) and "virtual host" in str(data.get("reason", ""))


def password_key(secret: Secret) -> str:
    """Which config key holds the password, for error lines (never the password itself)."""
    if secret.origin == "config file":
        return "[rabbitmq] password"
    if secret.origin.startswith("$"):
        return f"[rabbitmq] password_env ({secret.origin})"
    if secret.origin == "none":
        return "[rabbitmq] password_env (no password is configured)"
    return "[rabbitmq] password_file"


def apply_live(queues: Iterable[QueueInfo], live: dict[tuple[str, str], LiveQueue]) -> list[QueueInfo]:
    out = []
    for q in queues:
        answer = live.get(q.key)
        if answer is not None:
            q = dataclasses.replace(q, live_messages=answer.messages, live_consumers=answer.consumers,
                                    live_missing=answer.missing)
        out.append(q)
    return out


def _reason(exc: BaseException) -> str:
    """The most specific OS reason in an httpx error chain ("connection refused"), else its message."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return describe_verify(verify_reason(seen) or "", "set [rabbitmq] cacert to the CA that signed it (or "
                                   "insecure = true to skip verification)", "[rabbitmq] management_url")
        if isinstance(seen, ssl.SSLError):
            return f"TLS failed: {seen.reason or 'handshake error'}"
        if isinstance(seen, OSError) and seen.strerror:
            text = os.strerror(seen.errno) if isinstance(seen.errno, int) and seen.errno > 0 else seen.strerror
            return text.lower()
        seen = seen.__cause__ or seen.__context__
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


async def in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) in a daemon thread of its own. Not the loop's default executor: a broker that does not answer
    would hold up to four of its few workers (min(32, cpus + 4)) for the whole timeout, every poll, and the
    other sources' worker threads would queue behind them; nor a pool of our own: its threads are joined at
    exit, so quitting would wait for a hung request."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():  # cancelled meanwhile (the runner's timeout)
            if ok:
                done.set_result(value)
            else:
                done.set_exception(value)

    def run() -> None:
        try:
            result: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # handed to the awaiting coroutine
            result = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone (shutting down): nobody is waiting
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=run, name="rabbitmq-http", daemon=True).start()
    return await done


def _get_decoded(client: httpx.Client, path: str, params: dict[str, Any] | None,
                 last: tuple[bytes, Any] | None = None, seconds: float | None = None,
                 max_body: int = RabbitMQConfig().max_body_bytes) -> tuple[httpx.Response, Any, bool, bool]:
    """In a worker thread: one GET, and its body decoded as JSON (a queue page is ~100-700 KB: not on the UI
    loop). (response, data, whether the body was JSON, whether it is the `last` body: then its data is the last
    data, not decoded again). The GET has one overall deadline, `seconds` (connect, headers and body: a broker
    that trickles its answer costs no more), and a body over `max_body` bytes is refused before decoding."""
    with deadline.scope(seconds) as state:
        request = client.build_request("GET", path, params=params)
        try:
            resp = client.send(request, stream=True)
            try:
                deadline.read_httpx(resp, cap=max_body, key="[rabbitmq] max_body_mb")
            finally:
                resp.close()
        except httpx.TimeoutException:
            if state.trickled and seconds is not None:
                raise deadline.DeadlineExceeded(str(request.url), seconds, "[rabbitmq] timeout") from None
            raise
    if last is not None and resp.content == last[0]:
        return resp, last[1], True, True
    try:
        return resp, resp.json(), True, False
    except ValueError:
        return resp, None, False, False


class _LightPoll:
    """What a light poll judged, and from what: while the broker answers the same bytes and no statistics
    changed, the next light poll's picks, merge and parse would come out the same, so they stand. (A plain
    class: a frozen dataclass costs ~1 ms of start-up to create.)"""

    __slots__ = ("found", "queues", "stats", "wanted")

    def __init__(self, stats: dict[tuple[str, str], dict[str, Any]], wanted: set[tuple[str, str]],
                 queues: list[QueueInfo], found: int) -> None:
        self.stats = stats  # the statistics the picks and the merge were made with
        self.wanted = wanted
        self.queues = queues
        self.found = found


class RabbitMQCollector(BaseCollector):
    name = "rabbitmq"

    def __init__(
        self,
        management_url: str,
        user: str = "guest",
        password: str = "guest",
        *,
        vhosts: Iterable[str] = (),
        amqp_url: str | None = None,
        interval: float = 15.0,
        timeout: float = 10.0,
        password_key: str = "[rabbitmq] password_env",
        trim_columns: bool = True,
        page_size: int = PAGE_SIZE,
        confirm_delay_s: float = CONFIRM_DELAY_S,
        min_polls: int = MIN_POLLS,
        clock: Callable[[], datetime] | None = None,
        full_every: int = FULL_EVERY,
        light_max_queues: int = LIGHT_MAX_QUEUES,
        cacert: str | None = None,
        insecure: bool = False,
        max_body_mb: float = RabbitMQConfig.max_body_mb,
        consumer_grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        base = management_url.rstrip("/")
        if base.endswith("/api"):
            base = base[: -len("/api")]
        self.base_url = base
        self.user = user
        self._password = password
        self.password_key = password_key
        self.vhosts = tuple(vhosts)
        self.amqp_url = amqp_url
        self.interval = interval
        self.timeout = timeout
        self.request_timeout = timeout  # one GET's overall deadline (prepare_oneshot raises only the poll's)
        self.trim_columns = trim_columns
        self.page_size = page_size
        self.confirm_delay_s = confirm_delay_s
        self.min_polls = min_polls
        self.full_every = full_every
        self.light_max_queues = light_max_queues
        self.oneshot = False
        self._polls = 0
        # (vhost, name) -> the statistics-only fields of its last row with statistics (consumers, idle_since)
        self._stats: dict[tuple[str, str], dict[str, Any]] = {}
        self._parsed: ParsedQueues = {}  # the last poll's queue rows with their QueueInfo (parse_queues_reusing)
        self._bodies: dict[tuple[str, ...], tuple[bytes, Any]] = {}  # the light polls' last answers (_get_same)
        self._light: _LightPoll | None = None  # the last light poll's judgement, while it stands
        self._clock = clock or (lambda: datetime.now(UTC))
        self.cacert = cacert
        self.insecure = insecure
        self._client: httpx.Client | None = None
        self.max_body = mb_bytes(max_body_mb)  # bytes: a larger answer is refused before decoding
        self._poll_deadline = 0.0  # time.monotonic() by which this poll's requests end (collect())
        self._history: History = {}
        self._consumers: ConsumerHistory = {}  # service queues seen with a consumer (tui.rules.consumers)
        self.consumer_grace_s = consumer_grace_s
        self._refused: set[str] = set()  # configured vhosts this poll's listing was refused
        self._blind: tuple[str, ...] = ()  # the last full poll's unreadable vhosts (light polls carry them)
        self._bytes = 0
        self._requests = 0

    @classmethod
    def from_config(cls, rq: RabbitMQConfig, consumer_grace_s: float = DEFAULT_GRACE_S,
                    clock: Callable[[], datetime] | None = None) -> RabbitMQCollector:
        assert rq.management_url
        password = rq.password.value
        if password is None:
            password = "guest" if rq.user == "guest" else ""
        return cls(rq.management_url, rq.user, password, vhosts=rq.vhosts, amqp_url=rq.amqp_url,
                   interval=rq.interval, timeout=rq.timeout, password_key=password_key(rq.password),
                   cacert=rq.cacert, insecure=rq.insecure, max_body_mb=rq.max_body_mb,
                   consumer_grace_s=consumer_grace_s, clock=clock)

    @property
    def timeout_hint(self) -> str:
        return f"no answer from the RabbitMQ management API at {self.base_url} (check [rabbitmq] management_url, " \
               "or raise [rabbitmq] timeout if it is just slow)"

    def prepare_oneshot(self) -> None:
        """The next collect() must reach the verdict alone (see the module docstring)."""
        if not self.oneshot:
            self.oneshot = True
            self.timeout += self.confirm_delay_s

    # -- HTTP -------------------------------------------------------------------------------------------

    def _verify(self) -> ssl.SSLContext | bool:
        """httpx's verify: False only with insecure = true; a context for cacert; else True (the system's CAs,
        or $SSL_CERT_FILE / $SSL_CERT_DIR)."""
        if self.insecure:
            return False
        if self.cacert:
            problem = ca_file_problem(self.cacert)
            if problem:
                raise SourceError(f"[rabbitmq] cacert {self.cacert} {problem} - point it at the PEM bundle of the "
                                  "CA that signed the management API's certificate")
            return ssl.create_default_context(cafile=os.path.expanduser(self.cacert))
        if self.base_url.startswith("http://"):
            # never used (no redirects are followed): skip loading the CA bundle (~15-40 ms at start-up);
            # fail closed all the same: this context verifies, and trusts no CA
            return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return True

    def _amqp_tls(self) -> ssl.SSLContext | None:
        """The TLS context of an amqps:// confirmation when [rabbitmq] cacert / insecure say so (None: pika's
        default, verification against the system's CAs)."""
        if not (self.amqp_url or "").startswith("amqps:"):
            return None
        verify = self._verify()
        if verify is True:
            return None
        if verify is False:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            return ctx
        return verify

    def _name_mismatch(self, reason: str) -> str:
        """A name mismatch told with the names the management API's certificate does hold."""
        url = httpx.URL(self.base_url)
        names = certificate_names(url.host, url.port or 443, self.cacert, min(5.0, self.request_timeout))
        return describe_verify(reason, "set [rabbitmq] cacert to the CA that signed it (or insecure = true to skip "
                               "verification)", "[rabbitmq] management_url", names=names, used=url.host)

    def _http(self) -> httpx.Client:
        if self._client is None:
            self._client = deadline.install_httpx(httpx.Client(
                base_url=self.base_url, auth=(self.user, self._password), verify=self._verify(),
                timeout=httpx.Timeout(self.request_timeout), headers={"Accept": "application/json"},
                # the read-only guard (tui.readonly); a redirect to another origin or from https to http is
                # named as refused (tui.redirects; none is followed)
                event_hooks={"request": [httpx_request_hook], "response": [httpx_response_hook]}))
        return self._client

    async def _get(self, path: str, params: dict[str, Any] | None = None, ok: tuple[int, ...] = (200,)) -> Any:
        status, data, _ = await self._request(path, params, ok)
        return status, data

    async def _get_same(self, key: tuple[str, ...], path: str, params: dict[str, Any]) -> tuple[Any, bool]:
        """GET a listing the light polls repeat: (data, whether the broker answered the very bytes it answered
        to the last GET under `key`; then the data is the last data, not decoded again)."""
        _, data, same = await self._request(path, params, (200,), key)
        return data, same

    async def _request(self, path: str, params: dict[str, Any] | None, ok: tuple[int, ...],
                       key: tuple[str, ...] | None = None) -> tuple[int, Any, bool]:
        where = f"RabbitMQ management API at {self.base_url}"
        client = self._http()  # made here, on the loop: the concurrent fetches share one
        last = self._bodies.get(key) if key is not None else None
        # each request ends by the poll's deadline: a thread left reading after the runner gave up ends too
        seconds = max(0.0, min(self.request_timeout, self._poll_deadline - time.monotonic())) \
            if self._poll_deadline else self.request_timeout
        try:
            resp, data, decoded, same = await in_daemon_thread(_get_decoded, client, path, params, last, seconds,
                                                               self.max_body)
        except httpx.TimeoutException:
            raise SourceError(f"{where} did not answer {path} within {self.request_timeout:g}s - check [rabbitmq] "
                              "management_url (or raise [rabbitmq] timeout)") from None
        except httpx.HTTPError as exc:
            reason = _reason(exc)
            if is_name_mismatch(verify_reason(exc) or ""):
                reason = await asyncio.to_thread(self._name_mismatch, verify_reason(exc) or "")
            if reason.startswith("TLS certificate"):  # the reason carries its own fix
                raise SourceError(f"{where}: {reason}") from None
            raise SourceError(f"{where} unreachable ({reason}) - check [rabbitmq] management_url") from None
        self._requests += 1
        self._bytes += len(resp.content)
        status = resp.status_code
        if status == 401 and path.startswith("/api/queues/") and _vhost_refused(resp):
            vhost = unquote(path.split("/")[3])
            raise VhostNotReadable(f"{where}: user '{self.user}' may not read vhost {vhost} - "
                                   f"{set_permissions(vhost, self.user)}", vhost)
        if status == 401:
            raise SourceError(f"{where}: 401 Unauthorized for user '{self.user}' - check [rabbitmq] user and "
                              f"{self.password_key}")
        if status == 403:
            if path.startswith("/api/queues/"):
                raise SourceError(f"{where}: 403 Forbidden: user '{self.user}' may not read {path} - grant it "
                                  "the vhost (rabbitmqctl set_permissions) or fix [rabbitmq] vhosts")
            raise SourceError(f"{where}: 403 Forbidden on {path}: user '{self.user}' needs the 'monitoring' tag "
                              f"(rabbitmqctl set_user_tags {self.user} monitoring) - check [rabbitmq] user")
        if status == 404 and path.startswith("/api/queues/") and 404 not in ok:
            raise SourceError(f"{where}: vhost in {path} does not exist - check [rabbitmq] vhosts")
        if status not in ok:
            raise SourceError(f"{where}: {path} answered HTTP {status} - check [rabbitmq] management_url")
        if not decoded:
            raise SourceError(f"{where}: {path} did not answer JSON - is [rabbitmq] management_url the "
                              "management API (port 15672)?")
        if key is not None and status == 200:
            self._bodies[key] = (resp.content, data)
        return status, data, same

    def _queue_paths(self) -> list[str]:
        return [f"/api/queues/{quote(v, safe='')}" for v in self.vhosts] or ["/api/queues"]

    async def _list_rows(self, path: str, params: Callable[[int], dict[str, Any]],
                         key: tuple[str, ...] | None = None) -> tuple[list[dict[str, Any]], int, bool]:
        """Every row of a paginated queue listing (raw dicts; `params(page)` is a page's query), how many pages it
        took, and (with a key) whether every page was the same bytes as under that key last time."""
        rows: list[dict[str, Any]] = []
        page = 1
        all_same = key is not None
        while True:
            page_params = params(page)
            if key is None:
                _, data = await self._get(path, page_params)
            else:
                data, same = await self._get_same((*key, str(page)), path, page_params)
                all_same = all_same and same
            items = data.get("items") if isinstance(data, dict) else None
            if not isinstance(items, list):
                raise SourceError(f"RabbitMQ management API at {self.base_url}: {path} is not a paginated "
                                  "queue list - check [rabbitmq] management_url")
            rows += [r for r in items if isinstance(r, dict)]
            page_count = data.get("page_count")
            if not isinstance(page_count, int) or page >= page_count:
                return rows, page, all_same
            page += 1

    async def _unpaged_rows(self, path: str, params: dict[str, Any],
                            key: tuple[str, ...] | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Every row of one unpaged queue listing, and (with a key) whether it was the same bytes as under that
        key last time."""
        try:
            if key is None:
                _, data = await self._get(path, params)
                same = False
            else:
                data, same = await self._get_same(key, path, params)
        except VhostNotReadable as exc:
            if not self.vhosts:
                raise
            self._refused.add(exc.vhost)  # a configured vhost the user may not read: a finding, not a failure
            return [], False
        if not isinstance(data, list):
            raise SourceError(f"RabbitMQ management API at {self.base_url}: {path} is not a queue list - "
                              "check [rabbitmq] management_url")
        return [r for r in data if isinstance(r, dict)], same

    async def _full_rows(self) -> tuple[list[dict[str, Any]], int]:
        """Every queue with statistics: one unpaged listing per path, the paths concurrently."""
        paths = self._queue_paths()
        listed = await asyncio.gather(*(self._unpaged_rows(path, stats_listing(self.trim_columns)) for path in paths))
        return [row for rows, _ in listed for row in rows], len(paths)

    def _by_queue(self) -> bool:
        """Whether the last listing held more queues than name-filtered pages pay for (module docstring)."""
        return len(self._parsed) > self.light_max_queues

    async def _detail_rows(self, keys: list[tuple[str, str]]) -> tuple[list[dict[str, Any]], int, bool]:
        """Rows with statistics for just these queues (per vhost, paged `name` regexes: rabbitmq_params; over
        light_max_queues queues one GET per queue), the requests made, and whether the broker answered the same
        bytes as to the last light poll's requests."""
        if self._by_queue():
            return await self._rows_by_queue(keys)
        rows: list[dict[str, Any]] = []
        requests = 0
        all_same = True
        by_vhost: dict[str, list[str]] = {}
        for vhost, name in keys:
            by_vhost.setdefault(vhost, []).append(name)
        for vhost, names in sorted(by_vhost.items()):
            for i, regex in enumerate(name_regexes(names)):
                got, n, same = await self._list_rows(
                    f"/api/queues/{quote(vhost, safe='')}",
                    lambda page, regex=regex: stats_by_name(regex, page, self.page_size, self.trim_columns),
                    ("detail", vhost, str(i)))
                rows += got
                requests += n
                all_same = all_same and same
        return rows, requests, all_same

    async def _rows_by_queue(self, keys: list[tuple[str, str]]) -> tuple[list[dict[str, Any]], int, bool]:
        """_detail_rows one queue at a time, DETAIL_PARALLEL GETs at once; a queue deleted since the listing
        answers 404 and is left out, as is a queue its own GET cannot address (queue_path). The last answer of
        each is kept (for the same-bytes check) while the queue is asked."""
        gate = asyncio.Semaphore(DETAIL_PARALLEL)
        params = stats_listing(self.trim_columns)
        paths = {(vhost, name): path for vhost, name in keys if (path := queue_path(vhost, name)) is not None}

        async def one(vhost: str, name: str, path: str) -> tuple[dict[str, Any] | None, bool]:
            async with gate:
                status, data, same = await self._request(path, params, (200, 404), ("queue", vhost, name))
            return (data if status == 200 and isinstance(data, dict) else None), same and status == 200

        answers = await asyncio.gather(*(one(vhost, name, path) for (vhost, name), path in paths.items()))
        asked = {("queue", vhost, name) for vhost, name in paths}
        for key in [k for k in self._bodies if k[0] == "queue" and k not in asked]:
            del self._bodies[key]
        return [row for row, _ in answers if row is not None], len(paths), all(same for _, same in answers)

    async def _fetch_queues(self) -> tuple[list[QueueInfo], int, dict[str, Any]]:
        full = (self.full_every <= 1 or self.oneshot or not self._stats
                or self._polls % self.full_every == 0)
        self._polls += 1
        self._refused = set()
        info: dict[str, Any] = {"mode": "full"}
        # a poll that fails half-way (its light listing stored, its statistics not read) must not leave the
        # judgement of an older listing standing: set again only by a poll that completes
        last, self._light = self._light, None
        if full:
            rows, pages = await self._full_rows()
        else:
            rows, pages, same = [], 0, True
            for path in self._queue_paths():
                got, was_same = await self._unpaged_rows(path, light_listing(), ("light", path))
                rows += got
                pages += 1
                same = same and was_same
            # the same light listing judged with the same statistics: the same picks
            standing = last if same and last is not None and last.stats is self._stats else None
            wanted = standing.wanted if standing is not None else await asyncio.to_thread(self._wanted, rows)
            if len(wanted) > MAX_DETAIL:
                rows, more = await self._full_rows()
                pages += more
                info = {"mode": "full", "light_gave_up": len(wanted)}
            else:
                detail, more, detail_same = await self._detail_rows(sorted(wanted)) if wanted else ([], 0, True)
                pages += more
                if standing is not None and detail_same:
                    # nothing the broker said changed since the last light poll: its merge and parse stand
                    # (2,000 rows decoded, merged and compared for nothing, every light poll of a quiet broker)
                    self._light = standing
                    return standing.queues, pages, {"mode": "light", "detail_queues": len(wanted),
                                                    "detail_found": standing.found, "unchanged": True,
                                                    "detail_by": "queue" if self._by_queue() else "name"}
                stats_used = self._stats
                rows, found_n = await asyncio.to_thread(self._merge, rows, detail, wanted)
                info = {"mode": "light", "detail_queues": len(wanted), "detail_found": found_n,
                        "detail_by": "queue" if self._by_queue() else "name"}
                queues = await self._parse_rows(rows)
                self._light = _LightPoll(stats_used, wanted, queues, found_n)
                return queues, pages, info
        return await self._parse_rows(rows), pages, info

    async def _parse_rows(self, rows: list[dict[str, Any]]) -> list[QueueInfo]:
        queues, stats, self._parsed = await asyncio.to_thread(self._parse, rows, self._parsed)
        if stats != self._stats:  # the same object while they hold: what a standing light poll is checked by
            self._stats = stats
        return queues

    def _wanted(self, rows: list[dict[str, Any]]) -> set[tuple[str, str]]:
        """The queues a light poll asks statistics for, in one pass over the rows (2,000 a poll): holding
        messages (or unknown), or with no statistics known yet, judged on fresh numbers; and, when there are at
        most MAX_EMPTY_WATCH of them, the empty ones last seen with no consumer (a consumer may be back)."""
        known_stats = self._stats
        wanted: set[tuple[str, str]] = set()
        empty: list[tuple[str, str]] = []
        consumed = self._consumers
        service: list[tuple[str, str]] = []
        for r in rows:
            key = (str(r.get("vhost")), str(r.get("name")))
            known = known_stats.get(key)
            messages = r.get("messages")
            if known is None or not isinstance(messages, int) or messages > 0:
                wanted.add(key)
            elif known.get("consumers") in (0, None):
                empty.append(key)
            elif key in consumed:  # a service queue with its consumer: losing it is news at once
                service.append(key)
        if len(empty) <= MAX_EMPTY_WATCH:
            wanted.update(empty)
        if len(service) <= MAX_SERVICE_WATCH:
            wanted.update(service)
        return wanted

    def _merge(self, rows: list[dict[str, Any]], detail: list[dict[str, Any]], wanted: set[tuple[str, str]]
               ) -> tuple[list[dict[str, Any]], int]:
        """Light rows with the fresh statistics rows of the queues that wanted them; the others keep the
        consumers / idle_since of their last statistics (and its state, where a light row lacks one)."""
        with_stats = {(str(r.get("vhost")), str(r.get("name"))): r for r in detail}
        known_stats = self._stats
        merged = []
        for r in rows:
            key = (str(r.get("vhost")), str(r.get("name")))
            fresh = with_stats.get(key) if key in wanted else None
            if fresh is None:
                carried = known_stats.get(key)
                fresh = {**carried, **r} if carried else r  # a light row's own fields (its state) win
            merged.append(fresh)
        return merged, len(with_stats)

    @staticmethod
    def _parse(rows: list[dict[str, Any]], last: ParsedQueues | None = None
               ) -> tuple[list[QueueInfo], dict[tuple[str, str], dict[str, Any]], ParsedQueues]:
        """QueueInfos sorted by key, each queue's statistics-only fields to carry into light polls (vanished
        queues are forgotten), and the rows parsed (rows equal to last poll's reuse their QueueInfo)."""
        _, parsed = parse_queues_reusing(rows, last or {})  # keyed: queues may shift between pages, last row wins
        stats: dict[tuple[str, str], dict[str, Any]] = {}
        for key, (row, _info) in parsed.items():
            if "consumers" in row:
                stats[key] = {k: row[k] for k in ("consumers", "idle_since", "state") if k in row}
        return [parsed[key][1] for key in sorted(parsed)], stats, parsed

    async def _fetch_nodes(self) -> list[NodeInfo]:
        params = {"columns": ",".join(NODE_COLUMNS)} if self.trim_columns else None
        _, data = await self._get("/api/nodes", params)
        if not isinstance(data, list):
            raise SourceError(f"RabbitMQ management API at {self.base_url}: /api/nodes is not a node list - check "
                              "[rabbitmq] management_url")
        return [n for n in (parse_node(r) for r in data if isinstance(r, dict)) if n]

    async def _fetch_alarms(self) -> tuple[tuple[Alarm, ...], bool]:
        """(alarms, checked). 404 = a broker older than 3.8.10 without health checks: rely on /api/nodes."""
        status, data = await self._get("/api/health/checks/local-alarms", ok=(200, 503, 404))
        if status == 404:
            return (), False
        return (parse_alarms(data) if status == 503 else ()), True

    async def _fetch_overview(self) -> dict[str, Any]:
        params = {"columns": ",".join(OVERVIEW_COLUMNS)} if self.trim_columns else None
        _, data = await self._get("/api/overview", params)
        return data if isinstance(data, dict) else {}

    async def _sample(self) -> RabbitSnapshot:
        start = time.monotonic()
        bytes0, requests0 = self._bytes, self._requests
        results = await asyncio.gather(self._fetch_queues(), self._fetch_nodes(), self._fetch_alarms(),
                                       self._fetch_overview(), return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
        (queues, pages, queue_info), nodes, (alarms, checked), overview = results  # type: ignore[misc]
        totals = overview.get("object_totals")
        unreadable = await self._unreadable_vhosts(queues, totals if isinstance(totals, dict) else {},
                                                   queue_info.get("mode") == "full")
        now = self._clock()
        # 2,000 queues: off the UI loop, like the parse (one poll at a time: the history is this poll's alone)
        self._history, queues = await asyncio.to_thread(apply_history, self._history, queues, now)
        return RabbitSnapshot(
            endpoint=self.base_url, taken_at=now, queues=tuple(queues), nodes=tuple(nodes), alarms=alarms,
            alarms_checked=checked, vhosts=self.vhosts, via="management",
            cluster_name=overview.get("cluster_name") if isinstance(overview.get("cluster_name"), str) else None,
            rabbitmq_version=overview.get("rabbitmq_version")
            if isinstance(overview.get("rabbitmq_version"), str) else None,
            node=overview.get("node") if isinstance(overview.get("node"), str) else None,
            object_totals=bounded_counts(totals),
            detail_by_queue=self.light_max_queues if self._by_queue() else None,
            fetch={"requests": self._requests - requests0, "bytes": self._bytes - bytes0, "queue_pages": pages,
                   "seconds": round(time.monotonic() - start, 4), "columns_trimmed": self.trim_columns,
                   "queues": queue_info},
            unreadable_vhosts=unreadable, user=self.user,
        )

    async def _unreadable_vhosts(self, queues: list[QueueInfo], totals: dict[str, Any], full: bool
                                 ) -> tuple[str, ...]:
        """The vhosts the user may not list the queues of. With [rabbitmq] vhosts: those refused this poll.
        Else, on full polls, only when the broker counts more queues than the listing showed (object_totals
        counts every vhost's for a `monitoring` user): each vhost of /api/vhosts with no queue in sight is
        asked for its listing (one small GET each); a refusal names it. Light polls carry the last answer."""
        if self.vhosts:
            return tuple(sorted(self._refused))
        if not full:
            return self._blind
        total = totals.get("queues")
        self._blind = ()
        if not isinstance(total, int) or total <= len(queues):
            return ()
        try:
            _, data = await self._get("/api/vhosts", {"columns": "name"})
        except SourceError:
            return ()
        seen = {q.vhost for q in queues}
        names = [v["name"] for v in data if isinstance(v, dict) and isinstance(v.get("name"), str)] \
            if isinstance(data, list) else []
        gate = asyncio.Semaphore(DETAIL_PARALLEL)

        async def refused(vhost: str) -> bool:
            async with gate:
                try:
                    await self._request(f"/api/queues/{quote(vhost, safe='')}", {"columns": "name"}, (200, 404))
                except VhostNotReadable:
                    return True
                except SourceError:
                    return False
            return False

        asked = [v for v in names if v not in seen][:MAX_VHOST_PROBES]
        answers = await asyncio.gather(*(refused(v) for v in asked))
        self._blind = tuple(sorted(v for v, no in zip(asked, answers, strict=True) if no))
        return self._blind

    # -- AMQP -------------------------------------------------------------------------------------------

    @staticmethod
    def _suspects(snap: RabbitSnapshot, need: int = 1) -> list[QueueInfo]:
        """The suspect queues seen for at least `need` polls, service queues first, then the fullest."""
        suspects = [q for q in snap.queues if is_suspect(q) and q.stuck_polls >= need]
        suspects.sort(key=lambda q: (classify_queue(q.name).cls != "service", -(q.messages or 0)))
        return suspects

    def _to_confirm(self, snap: RabbitSnapshot) -> list[QueueInfo]:
        todo = self._suspects(snap, 1 if self.oneshot else self.min_polls)[:MAX_LIVE_CHECKS]
        if self.oneshot:
            return todo
        # the service queues that had a consumer: a passive declare tells a lost one now, not at the broker's
        # next statistics tick (at most MAX_SERVICE_WATCH of them)
        asked = {q.key for q in todo}
        service = [q for q in snap.queues if q.key in self._consumers and q.key not in asked]
        if len(service) <= MAX_SERVICE_WATCH:
            todo += service
        return todo

    async def _confirm_live(self, snap: RabbitSnapshot) -> RabbitSnapshot:
        if not self.amqp_url:  # before the scan: 2,000 queues every poll on the UI loop, for nothing
            return snap
        todo = self._to_confirm(snap)
        if not todo:
            return snap
        try:
            live = await asyncio.to_thread(passive_check, self.amqp_url, self.user, self._password,
                                           [q.key for q in todo], min(5.0, self.timeout), self._amqp_tls())
        except AmqpError as exc:
            return dataclasses.replace(snap, confirm_error=str(exc))
        return dataclasses.replace(snap, queues=tuple(apply_live(snap.queues, live)), confirmation="amqp")

    async def _consumer_connections(self, snap: RabbitSnapshot) -> dict[tuple[str, str], frozenset[str]] | None:
        """The connections consuming each watched service queue (a restart quicker than a poll replaces one), from
        one consumer listing per vhost, trimmed to three columns; None when the broker has more than
        MAX_CONSUMER_LISTING consumers (the listing would cost it more than the restart is worth), when nothing
        is watched yet, or when the listing fails (the poll goes on without it)."""
        total = snap.object_totals.get("consumers")
        if not self._consumers or not isinstance(total, int) or total > MAX_CONSUMER_LISTING:
            return None
        paths = [f"/api/consumers/{quote(v, safe='')}" for v in self.vhosts] or ["/api/consumers"]
        params = {"columns": "queue.name,queue.vhost,channel_details.connection_name"}
        found: dict[tuple[str, str], set[str]] = {}
        try:
            for path in paths:
                _, data = await self._get(path, params)
                for c in data if isinstance(data, list) else ():
                    queue, channel = c.get("queue"), c.get("channel_details")
                    if not isinstance(queue, dict) or not isinstance(channel, dict):
                        continue
                    key = (str(queue.get("vhost")), str(queue.get("name")))
                    if key in self._consumers:
                        found.setdefault(key, set()).add(str(channel.get("connection_name")))
        except SourceError:
            return None
        return {key: frozenset(conns) for key, conns in found.items()}

    async def _judge_consumers(self, snap: RabbitSnapshot) -> RabbitSnapshot:
        """Service queues that had a consumer and have none now get consumer_lost_since, those whose consumer
        came back or was replaced consumer_restarted_at (one-shot runs keep no history: a snapshot cannot tell
        a lost consumer from a queue never consumed)."""
        if self.oneshot:
            return snap
        conns = await self._consumer_connections(snap)
        self._consumers, queues = await asyncio.to_thread(apply_consumer_history, self._consumers, snap.queues,
                                                          snap.taken_at, conns)
        return dataclasses.replace(snap, queues=tuple(queues))

    # -- protocol ---------------------------------------------------------------------------------------

    async def collect(self) -> RabbitSnapshot:
        self._poll_deadline = time.monotonic() + self.timeout  # the runner's timeout for this poll
        snap = await self._sample()
        snap = await self._confirm_live(snap)
        snap = await self._judge_consumers(snap)
        if self.oneshot and snap.confirmation is None and any(is_suspect(q) for q in snap.queues):
            # No live answer: the suspects' sample history stands for the second poll when it covers the window
            judged = await self._confirm_by_history(snap)
            if judged is not None:
                return judged
            # ... else a second sample after the broker's next statistics tick gives the 2-poll verdict
            await self._next_statistics_tick(next(q for q in snap.queues if is_suspect(q)))
            confirm_error = snap.confirm_error
            snap = await self._sample()
            snap = dataclasses.replace(snap, confirmation="second-sample", confirm_error=confirm_error)
        return snap

    async def _queue_history(self, queue: QueueInfo, gate: asyncio.Semaphore) -> HistoryVerdict:
        """One suspect's verdict from one GET of its sample history (an error reads as a history not told)."""
        path = queue_path(queue.vhost, queue.name)
        if path is None:
            return HistoryVerdict("short", reason="a queue name the management API cannot address")
        async with gate:
            try:
                status, data = await self._get(path, HISTORY_PARAMS, ok=(200, 404))
            except SourceError as exc:
                return HistoryVerdict("short", reason=str(exc))
        if status == 404:  # deleted since the listing: nothing is stuck in it
            return HistoryVerdict("clear", reason="queue gone")
        return judge_history(data)

    async def _confirm_by_history(self, snap: RabbitSnapshot) -> RabbitSnapshot | None:
        """The snapshot with each suspect judged from its sample history (history-confirmed queues count
        min_polls polls), or None when a history asked does not cover the window (then a second sample decides
        for every suspect)."""
        suspects = self._suspects(snap)
        asked, left = suspects[:MAX_HISTORY_CHECKS], suspects[MAX_HISTORY_CHECKS:]
        gate = asyncio.Semaphore(HISTORY_PARALLEL)
        verdicts = await asyncio.gather(*(self._queue_history(q, gate) for q in asked))
        if any(v.kind == "short" for v in verdicts):
            return None
        held = {q.key: v for q, v in zip(asked, verdicts, strict=True) if v.kind == "held"}
        queues = tuple(dataclasses.replace(q, stuck_polls=max(q.stuck_polls, self.min_polls),
                                           history_s=held[q.key].held_s) if q.key in held else q
                       for q in snap.queues)
        fetch = {**snap.fetch, "history": {"asked": len(asked), "held": len(held),
                                           "clear": len(asked) - len(held), "left_unconfirmed": len(left)}}
        return dataclasses.replace(snap, queues=queues, confirmation="history", fetch=fetch)

    async def _newest_sample(self, queue: QueueInfo) -> Any:
        """The timestamp of the newest statistics sample of a queue's length (None: not told)."""
        path = queue_path(queue.vhost, queue.name)
        if path is None:
            return None
        try:
            _, data = await self._get(path, {"lengths_age": 15, "lengths_incr": 5, "columns": "messages_details"})
        except SourceError:
            return None
        details = data.get("messages_details") if isinstance(data, dict) else None
        samples = details.get("samples") if isinstance(details, dict) else None
        if not isinstance(samples, list) or not samples or not isinstance(samples[0], dict):
            return None
        return samples[0].get("timestamp")

    async def _next_statistics_tick(self, queue: QueueInfo) -> None:
        """Wait until the broker's statistics ticked once more (or confirm_delay_s, whichever comes first)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + self.confirm_delay_s
        first = await self._newest_sample(queue)
        while (left := until - loop.time()) > 0:
            await asyncio.sleep(min(TICK_WATCH_S, left))
            if first is not None and loop.time() < until:
                newest = await self._newest_sample(queue)
                if newest is not None and newest != first:
                    return

    def findings(self, snapshot: RabbitSnapshot, now: datetime) -> list[Finding]:
        return rabbitmq_findings(snapshot, now, self.min_polls, self.consumer_grace_s)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            client.close()


def build(config: Config, context: BuildContext | None = None) -> list[Collector]:
    rq = config.rabbitmq
    if rq.management_url:
        return [RabbitMQCollector.from_config(rq, config.thresholds.consumer_lost_grace,
                                              clock=context.clock if context is not None else None)]
    if rq.cli_command:
        from tui.collectors.rabbitmq_cli import RabbitMQCliCollector

        return [RabbitMQCliCollector.from_config(rq)]
    return []
