"""Control-plane snapshot: compute services, network agents, volume services and the Keystone catalog.

One `ServiceRow` shape for all three listings (agents map `admin_state_up` -> status enabled/disabled and
`alive` -> state up/down) so one table and one set of liveness rules serve them all.

Clocks: `age_at_read_s` is the heartbeat age measured on the *API's* clock at read time (the response's
`Date` header minus `updated_at` / `heartbeat_timestamp`), so a skewed clock on the stacktop machine does not
shift it. It can be negative when the service host's clock runs ahead of the API host's. Rules extrapolate it
to any later moment with the local clock: age(now) = age_at_read_s + (now - section.read_at).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar, Literal

from tui.records import record

Section = Literal["compute", "network", "volume"]
SECTIONS: tuple[Section, ...] = ("compute", "network", "volume")
SECTION_TITLES: dict[str, str] = {"compute": "compute services", "network": "network agents",
                                  "volume": "volume services"}


@dataclass(frozen=True)
class ServiceRow:
    """One compute service, network agent or volume service as its API listed it.

    status: "enabled" | "disabled" | "UNKNOWN" (nova >= 2.69 for a service in an unreachable cell);
    state: the API's own verdict "up" | "down" | "UNKNOWN" (computed by the API with *its* down time);
    forced_down: nova >= 2.11 (None when not reported); agent_type: network agents only.
    """

    JOURNAL_HEARTBEATS: ClassVar[tuple[str, ...]] = ("updated_at",)  # journal: written as an age (codec)

    section: Section
    binary: str
    host: str
    id: str = ""
    zone: str | None = None
    status: str = "enabled"
    state: str = "up"
    updated_at: datetime | None = None
    age_at_read_s: float | None = None
    disabled_reason: str | None = None
    forced_down: bool | None = None
    agent_type: str | None = None

    @property
    def key(self) -> str:
        """Stable across polls: the API id when there is one (cinder services have none)."""
        return f"{self.section}:{self.id or self.binary + '@' + self.host}"

    @property
    def enabled(self) -> bool:
        return self.status == "enabled"


@record
class SectionRead:
    """One listing. read_at: local UTC clock when the rows were read (None: never read).

    error: this poll could not read the listing (one line); the rows are then the last ones read, as of
    read_at. deployed=False: the catalog has no such service (e.g. a cloud without cinder).
    """

    name: Section
    rows: tuple[ServiceRow, ...] = ()
    read_at: datetime | None = None
    error: str | None = None
    deployed: bool = True

    @property
    def stale(self) -> bool:
        return self.error is not None


@record
class EndpointCheck:
    """A version GET on one catalog endpoint. ok: it answered below 500 within the timeout.

    late: this check got no answer within the timeout, but the previous one answered. One slow answer on a
    loaded control plane is not an outage: ok stays True (a warning, not a down endpoint) until the next
    check times out too."""

    service_type: str
    url: str
    name: str = ""
    interface: str = "public"
    region: str | None = None
    ok: bool = True
    status: int | None = None
    error: str | None = None
    elapsed_s: float | None = None
    late: bool = False


@record
class KeystoneCheck:
    """Keystone itself: can stacktop authenticate / reach the auth URL from clouds.yaml?

    late: the version GET got no answer within the timeout (the error), but the previous poll's did. ok stays
    True for that one poll (a warning, keystone.slow); a second timeout in a row is ok=False (unreachable).
    A refused connection, a 5xx or a wrong document is unreachable at once."""

    auth_url: str | None
    cloud: str | None
    ok: bool = True
    error: str | None = None
    clouds_file: str | None = None
    late: str | None = None


@record
class ServicesSnapshot:
    taken_at: datetime
    keystone: KeystoneCheck
    compute: SectionRead = field(default_factory=lambda: SectionRead("compute"))
    network: SectionRead = field(default_factory=lambda: SectionRead("network"))
    volume: SectionRead = field(default_factory=lambda: SectionRead("volume"))
    catalog: tuple[EndpointCheck, ...] = ()
    missing_types: tuple[str, ...] = ()
    compute_microversion: str | None = None

    def section(self, name: str) -> SectionRead:
        return {"compute": self.compute, "network": self.network, "volume": self.volume}[name]

    @property
    def sections(self) -> tuple[SectionRead, ...]:
        return (self.compute, self.network, self.volume)

