"""Control-plane source ("services"): compute services, network agents, volume services, Keystone and the
catalog, the five-command triage routine in one poll.

Reads go through tui.openstack (admin view) in worker threads, concurrently: a Keystone version GET, then
GET /os-services (compute, microversion >= 2.53), /agents and /os-services (block-storage), each with the API's
`Date` header so heartbeat ages use the API's clock; and an unauthenticated version GET per catalog endpoint:
every endpoint on the first poll, then one service type per poll in turn plus any that failed. The turn skips
the types whose listing answered at the last poll and gives way to the instances source's status=BUILD
listing (never two polls in a row), so a steady cycle of both sources is at most 6 requests.

Keystone outage: the source does not fail. The poll reports `keystone.ok = False` and still says what it can:
while the session's token is valid the listings are read as usual; without one each section keeps the rows it
last read, marked with the error and their read time (judged as of that read, so old heartbeats do not turn
into false "down"s); the endpoint checks use the last catalog seen. A listing that fails on its own keeps its
last rows the same way. Only config problems (cloud missing, credentials refused) raise SourceError.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tui.collectors.base import BaseCollector, BuildContext, Collector
from tui.config import Config, OpenStackConfig, Thresholds
from tui.errors import SourceError
from tui.models.finding import Finding
from tui.models.services import (
    EndpointCheck,
    KeystoneCheck,
    SectionRead,
    ServiceRow,
    ServicesSnapshot,
)
from tui.redact import redact_userinfo
from tui.rules.liveness import REQUIRED_TYPES, Liveness, services_findings

if TYPE_CHECKING:
    from tui.openstack.session import OpenStackSession

# catalog service type -> canonical type (os-service-types aliases that matter here), best first
TYPE_ALIASES: dict[str, str] = {"block-storage": "block-storage", "volumev3": "block-storage",
                                "volumev2": "block-storage", "volume": "block-storage", "block-store": "block-storage",
                                "identity": "identity", "compute": "compute", "network": "network",
                                "image": "image", "placement": "placement"}
_ALIAS_RANK = {name: i for i, name in enumerate(TYPE_ALIASES)}
LISTED_TYPE = {"compute": "compute", "network": "network", "volume": "block-storage"}  # section -> catalog type


def parse_time(value: Any) -> datetime | None:
    """Nova/cinder `2025-12-02T10:40:01.000000`, neutron `2025-12-02 10:40:01`, maybe with Z/offset -> UTC."""
    if not value or not isinstance(value, str):
        return None
    return _parse_time_text(value)


@functools.lru_cache(maxsize=4096)
def _parse_time_text(value: str) -> datetime | None:
    """Memoized: the services' DB keeps whole seconds, so 1,500 heartbeats of a poll share a few dozen
    timestamps (datetimes are immutable: shared safely across polls and threads)."""
    text = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _age(updated: datetime | None, base: datetime) -> float | None:
    return None if updated is None else round((base - updated).total_seconds(), 3)


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def parse_compute_service(raw: dict[str, Any], base: datetime) -> ServiceRow:
    updated = parse_time(raw.get("updated_at"))
    forced = raw.get("forced_down")
    return ServiceRow(section="compute", binary=str(raw.get("binary") or "?"), host=str(raw.get("host") or "?"),
                      id=str(raw.get("id") or ""), zone=_str(raw.get("zone")), status=str(raw.get("status") or "?"),
                      state=str(raw.get("state") or "?"), updated_at=updated, age_at_read_s=_age(updated, base),
                      disabled_reason=_str(raw.get("disabled_reason")),
                      forced_down=None if forced is None else bool(forced))


def parse_agent(raw: dict[str, Any], base: datetime) -> ServiceRow:
    updated = parse_time(raw.get("heartbeat_timestamp"))
    alive = raw.get("alive")
    return ServiceRow(section="network", binary=str(raw.get("binary") or "?"), host=str(raw.get("host") or "?"),
                      id=str(raw.get("id") or ""), zone=_str(raw.get("availability_zone")),
                      status="enabled" if raw.get("admin_state_up", True) else "disabled",
                      state="UNKNOWN" if alive is None else "up" if alive else "down",
                      updated_at=updated, age_at_read_s=_age(updated, base), agent_type=_str(raw.get("agent_type")))


def parse_volume_service(raw: dict[str, Any], base: datetime) -> ServiceRow:
    updated = parse_time(raw.get("updated_at"))
    return ServiceRow(section="volume", binary=str(raw.get("binary") or "?"), host=str(raw.get("host") or "?"),
                      id=str(raw.get("id") or ""), zone=_str(raw.get("zone")), status=str(raw.get("status") or "?"),
                      state=str(raw.get("state") or "?"), updated_at=updated, age_at_read_s=_age(updated, base),
                      disabled_reason=_str(raw.get("disabled_reason")))


PARSERS = {"compute": parse_compute_service, "network": parse_agent, "volume": parse_volume_service}


def catalog_types(catalog: Iterable[dict[str, Any]]) -> set[str]:
    return {TYPE_ALIASES.get(str(s.get("type")), str(s.get("type"))) for s in catalog if isinstance(s, dict)}


def endpoint_checks(answers: Iterable[dict[str, Any]]) -> tuple[EndpointCheck, ...]:
    """client.endpoint_versions() rows -> one check per canonical service type (block-storage over
    volumev3 over volumev2), sorted by type."""
    best: dict[str, tuple[int, dict[str, Any]]] = {}
    for a in answers:
        raw_type = str(a.get("service_type") or "?")
        canon = TYPE_ALIASES.get(raw_type, raw_type)
        rank = _ALIAS_RANK.get(raw_type, 99)
        if canon not in best or rank < best[canon][0]:
            best[canon] = (rank, a)
    out = []
    for canon, (_, a) in sorted(best.items()):
        status = a.get("status")
        late = bool(a.get("late"))
        ok = late or (status is not None and int(status) < 500)
        error = a.get("error")
        out.append(EndpointCheck(service_type=canon, url=redact_userinfo(str(a.get("url"))),
                                 name=str(a.get("name") or ""),
                                 interface=str(a.get("interface") or "public"), region=_str(a.get("region")),
                                 ok=ok, status=None if status is None else int(status),
                                 error=None if error is None else redact_userinfo(str(error)),
                                 elapsed_s=a.get("seconds"), late=late))
    return tuple(out)


class ServicesCollector(BaseCollector):
    """session: the cloud's OpenStackSession (shared with the instances source; the registry builds it); else
    one of its own, whose client comes from client_factory (a tui.openstack OpenStackClient) or the config."""

    name = "services"
    takes_judged_rows = True  # the runner hands findings() the rows it judged for the poll

    def __init__(
        self,
        openstack: OpenStackConfig | None = None,
        thresholds: Thresholds | None = None,
        *,
        client_factory: Callable[[], Any] | None = None,
        session: OpenStackSession | None = None,
        interval: float | None = None,
        timeout: float | None = None,
        endpoint_timeout: float | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.openstack = openstack or OpenStackConfig()
        self.thresholds = thresholds or Thresholds()
        self.interval = interval if interval is not None else self.openstack.interval
        self.timeout = timeout if timeout is not None else self.openstack.timeout
        # each endpoint check and the Keystone probe must fit in the poll with the listings
        default_ep = max(1.0, min(5.0, self.timeout / 4))
        self.endpoint_timeout = endpoint_timeout if endpoint_timeout is not None else default_ep
        # a hung API must cost its own section, not the whole poll (Keystone probe + listing < timeout)
        self.read_timeout = max(1.0, self.timeout - self.endpoint_timeout - 1.0)
        self._clock = clock or (lambda: datetime.now(UTC))
        from tui.openstack.session import given_or_own  # here: tui.openstack is not imported at start-up

        self.session, self._own_session = given_or_own(session, self.openstack, client_factory)
        self._sections: dict[str, SectionRead] = {n: SectionRead(n) for n in ("compute", "network", "volume")}  # type: ignore[arg-type]
        self._catalog: list[dict[str, Any]] | None = None
        self._checked: dict[tuple[str, str], dict[str, Any]] = {}  # (type, url) -> latest version GET answer
        self._turn = -1
        self._deferred = False  # the last poll left its endpoint check's turn to the instances source's BUILD list
        self._keystone_answered = False  # the last Keystone probe got an answer (a timeout after one is late)
        self._microversion: str | None = None

    @property
    def timeout_hint(self) -> str:
        """For the runner's timeout line: what hung and the key to raise."""
        where = getattr(getattr(self.session.current, "where", None), "cloud_ref", None) or "the cloud"
        return f"the control-plane reads of {where} did not finish (Keystone, catalog, service listings; raise " \
               "[openstack] timeout if the cloud is just slow)"

    @classmethod
    def from_config(cls, config: Config, session: OpenStackSession | None = None,
                    clock: Callable[[], datetime] | None = None) -> ServicesCollector:
        return cls(config.openstack, config.thresholds, session=session, clock=clock)

    def client(self) -> Any:
        return self.session.client()

    # ----------------------------------------------------------------------------------------- one poll
    async def collect(self) -> ServicesSnapshot:
        taken_at = self._clock()
        client = await asyncio.to_thread(self.client)
        keystone = await asyncio.to_thread(self._check_keystone, client)
        from tui.openstack.services_reads import has_usable_token

        can_read = keystone.ok or await asyncio.to_thread(has_usable_token, client)
        if can_read:
            catalog = await asyncio.to_thread(self._read_catalog, client)
        else:
            catalog = self._catalog
        types = catalog_types(catalog) if catalog is not None else None
        missing = tuple(t for t in REQUIRED_TYPES if types is not None and t not in types)

        async def section(name: str, service_type: str) -> SectionRead:
            if types is not None and service_type not in types:
                return SectionRead(name, deployed=False)  # type: ignore[arg-type]
            if not can_read:
                return self._carry(name, f"not read: no token from Keystone at {keystone.auth_url}")
            try:
                return await asyncio.wait_for(asyncio.to_thread(self._read_section, client, name),
                                              timeout=self.read_timeout)
            except TimeoutError:  # the worker thread ends on the session timeout; the poll goes on
                return self._carry(name, f"listing {name} services timed out after {self.read_timeout:g}s")

        # never two polls in a row: whatever the two sources' timing, the turn goes on at least every other poll
        defer = not self._deferred and self.session.build_list_due_near(taken_at, self.interval / 2)
        self._deferred = defer
        checks = asyncio.to_thread(self._check_endpoints, client, self._due_endpoints(catalog, defer_turn=defer)) \
            if catalog else _none()
        compute, network, volume, answers = await asyncio.gather(
            section("compute", "compute"), section("network", "network"), section("volume", "block-storage"),
            checks)
        return ServicesSnapshot(taken_at=taken_at, keystone=keystone, compute=compute, network=network,
                                volume=volume, catalog=endpoint_checks(answers), missing_types=missing,
                                compute_microversion=self._microversion)

    def _check_keystone(self, client: Any) -> KeystoneCheck:
        where = client.where
        base = KeystoneCheck(auth_url=where.auth_url, cloud=where.cloud, clouds_file=where.clouds_file)
        if where.auth_url:
            answer = client.version_get(where.auth_url, timeout=self.endpoint_timeout)
            status = answer.get("status")
            answered_before, self._keystone_answered = self._keystone_answered, status is not None
            if status is None or status >= 500:
                error = _one_line(answer.get("error") or f"{where.auth_url} answered {status}")
                if answer.get("timed_out") and answered_before:
                    base = _replace(base, late=error)  # one slow answer: unreachable if the next is slow too
                else:
                    return _replace(base, ok=False, error=error)
            if answer.get("document"):  # Keystone's version document is public: anything else is broken
                return _replace(base, ok=False, error=f"Keystone at {where.auth_url} {answer['document']} - is "
                                f"auth_url of {where.cloud_ref} Keystone (not a proxy page)?")
        try:
            client.authenticate()  # no network while the session's token is valid
        except SourceError as exc:
            text = _one_line(str(exc))
            if re.search(r"\b401\b|Unauthorized|rejected the credentials", text):
                # a config problem, not an outage: the line names the clouds.yaml cloud to fix
                raise SourceError(f"Keystone at {where.auth_url} refused the credentials of {where.cloud_ref} "
                                  "(401) - fix the auth section of that cloud") from None
            if "incomplete auth" in text:
                raise
            return _replace(base, ok=False, error=text)
        return base

    def _read_catalog(self, client: Any) -> list[dict[str, Any]] | None:
        try:
            catalog = client.catalog()
        except SourceError:
            return self._catalog
        self._catalog = catalog
        return catalog

    def _due_endpoints(self, catalog: list[dict[str, Any]], *, defer_turn: bool = False) -> list[dict[str, Any]]:
        """The catalog entries to version-check this poll: all of them on the first poll; after that one
        service type per poll in turn, plus every type whose last check failed (so a failure is rechecked,
        and a recovery seen, on every poll). Six endpoints cost one request a poll instead of six. The turn
        passes over the types whose listing answered at the last poll (their API is up: checking its version
        document too is a request for nothing); defer_turn leaves this poll's turn to the next (the poll shares
        its cycle with the instances source's status=BUILD listing). A newly failing endpoint whose listing
        works shows within a few polls (a failing listing names the API anyway)."""
        if not self._checked:
            return catalog
        failed = {str(a.get("service_type")) for a in self._checked.values()
                  if a.get("status") is None or int(a["status"]) >= 500}
        proven = self._listed_types()
        turns = sorted({str(s.get("type")) for s in catalog} - failed)
        turns = [t for t in turns if TYPE_ALIASES.get(t, t) not in proven]
        due = set(failed)
        if turns and not defer_turn:
            self._turn = (self._turn + 1) % len(turns)
            due.add(turns[self._turn])
        return [svc for svc in catalog if str(svc.get("type")) in due]

    def _listed_types(self) -> set[str]:
        """Canonical catalog types whose listing answered at the last poll."""
        return {LISTED_TYPE[name] for name, section in self._sections.items()
                if section.read_at is not None and section.error is None}

    def _check_endpoints(self, client: Any, catalog: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Check `catalog`'s endpoints; returns the latest answer of every endpoint still in the catalog."""
        try:
            answers = client.endpoint_versions(catalog=catalog, timeout=self.endpoint_timeout)
        except SourceError:
            answers = []
        for a in answers:
            key = (str(a.get("service_type")), str(a.get("url")))
            before = self._checked.get(key)
            if a.get("timed_out") and before is not None and before.get("status") is not None \
                    and int(before["status"]) < 500:
                a = {**a, "late": True}  # answered last time: one slow answer is a warning, two are down
            self._checked[key] = a
        known = {(str(s.get("type")), str(e.get("url"))) for s in (self._catalog or catalog)
                 for e in s.get("endpoints", [])}
        self._checked = {k: v for k, v in self._checked.items() if k in known}
        return list(self._checked.values())

    def _carry(self, name: str, error: str) -> SectionRead:
        prev = self._sections[name]
        carried = SectionRead(prev.name, prev.rows, prev.read_at, _one_line(error), prev.deployed)
        self._sections[name] = carried
        return carried

    def _read_section(self, client: Any, name: str) -> SectionRead:
        from tui.openstack import services_reads as reads

        try:
            if name == "compute":
                raw, date, self._microversion = reads.compute_services(client, self.read_timeout)
                self.session.remember("compute", raw)
            elif name == "network":
                raw, date = reads.network_agents(client, self.read_timeout)
                self.session.remember("network", raw)
            else:
                raw, date = reads.volume_services(client, self.read_timeout)
        except SourceError as exc:
            return self._carry(name, str(exc))
        read_at = self._clock()
        base = date or read_at  # the API's clock when it sent a Date header
        rows = tuple(PARSERS[name](r, base) for r in raw if isinstance(r, dict))
        section = SectionRead(name, rows, read_at)  # type: ignore[arg-type]
        self._sections[name] = section
        return section

    def findings(self, snapshot: ServicesSnapshot, now: datetime,
                 judged_rows: Mapping[str, Sequence[tuple[ServiceRow, Liveness]]] | None = None) -> list[Finding]:
        """judged_rows: the rows the runner judged for this poll (tui.rules.judge.assess_services), by section."""
        return services_findings(snapshot, now, self.thresholds, judged_rows)

    async def aclose(self) -> None:
        """A session handed in belongs to whoever built it (the registry: the cloud's); only our own is closed."""
        if self._own_session:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self.session.close)


async def _none() -> list[dict[str, Any]]:
    return []


def _replace(check: KeystoneCheck, **changes: Any) -> KeystoneCheck:
    import dataclasses

    return dataclasses.replace(check, **changes)


def _one_line(text: str) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


def build(config: Config, context: BuildContext | None = None) -> list[Collector]:
    if not config.openstack.cloud:
        return []
    if context is None:
        return [ServicesCollector.from_config(config)]
    return [ServicesCollector.from_config(config, context.session, clock=context.clock)]

