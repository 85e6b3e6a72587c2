"""Deterministic ids and the timestamp spellings each OpenStack API really uses."""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime


def uuid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def hex32(rng: random.Random) -> str:
    return f"{rng.getrandbits(128):032x}"


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(int(ts), UTC)


def iso_z(ts: float) -> str:
    """Nova server created/updated, neutron created_at: 2026-12-02T09:40:45Z."""
    return _dt(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_us(ts: float) -> str:
    """Nova services/actions/migrations, cinder: 2026-12-02T09:42:27.000000 (DB DATETIME, no zone)."""
    return _dt(ts).strftime("%Y-%m-%dT%H:%M:%S.000000")


def iso_space(ts: float) -> str:
    """Neutron agents: 2026-12-02 09:42:29."""
    return _dt(ts).strftime("%Y-%m-%d %H:%M:%S")


def iso_keystone(ts: float) -> str:
    """Keystone token expires_at / issued_at: 2026-12-02T10:42:27.000000Z."""
    return _dt(ts).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def iso_rabbit(ts: float) -> str:
    """RabbitMQ idle_since: 2026-12-02T10:26:29.519+00:00."""
    return _dt(ts).strftime("%Y-%m-%dT%H:%M:%S.000+00:00")


def host_id(project_id: str, host: str | None) -> str:
    """Nova's hostId: sha224(project_id + host), empty when there is no host."""
    if not host:
        return ""
    return hashlib.sha224((project_id + host).encode()).hexdigest()


def parse_iso(value: str) -> float:
    """Parse the ISO 8601 forms clients send in changes-since; naive means UTC. Raises ValueError."""
    text = value.strip().replace(" ", "T")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    dt = datetime.fromisoformat(text)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()
