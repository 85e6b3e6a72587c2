"""The dashboard's OpenStack client: the light client, openstacksdk for what it does not handle.

TriageClient answers through tui.openstack.light (no openstacksdk import, and plain GETs over httpx on every
steady poll instead of keystoneauth's session). With a finite `handover_after_s` it builds the openstacksdk
client in a background thread that many seconds later, authenticates it, and from then on every call goes to
it; the dashboard passes math.inf (never).

Whatever the light path does not handle (LightUnsupported: another auth type, an odd catalog or version
document, a token answer other than 201/401) is answered by openstacksdk at once, built on the spot. Real
failures (refused, timeouts, 401, TLS) are the light client's, worded as openstacksdk's path words them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
from typing import Any

from tui.config import OpenStackConfig
from tui.openstack.client import AsyncOpenStackClient, OpenStackClient, connect
from tui.openstack.cloudsyaml import LightUnsupported, load_cloud
from tui.openstack.errors import Where
from tui.openstack.light import LightClient
from tui.tlserror import ca_file_problem

log = logging.getLogger("stacktop.openstack")

RETRY_HANDOVER_S = 30.0  # openstacksdk could not authenticate (Keystone down): try again this much later


class TriageClient:
    """Every OpenStackClient attribute, from the light client until openstacksdk's is ready."""

    def __init__(self, cfg: OpenStackConfig, light: LightClient, *, handover_after_s: float) -> None:
        self.cfg = cfg
        self.where = light.where
        self.timeout = light.timeout
        self.light = light
        self.sdk: OpenStackClient | None = None
        self.aio = AsyncOpenStackClient(self)  # type: ignore[arg-type]
        self._lock = threading.Lock()
        self._closed = False
        self._timer: threading.Timer | None = None
        self._schedule(handover_after_s)

    @property
    def backend(self) -> str:
        """'light' or 'openstacksdk': which client answers now."""
        return "light" if self.sdk is None else "openstacksdk"

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__
        if "light" not in own:  # half-built (or being unpickled): no delegation
            raise AttributeError(name)
        sdk = own.get("sdk")
        if sdk is not None:
            return getattr(sdk, name)
        attr = getattr(own["light"], name)
        if not callable(attr) or name.startswith("__"):
            return attr
        if asyncio.iscoroutinefunction(attr):
            async def acall(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await attr(*args, **kwargs)
                except LightUnsupported as why:
                    sdk = await asyncio.to_thread(self._sdk_now, why)
                    return await getattr(sdk, name)(*args, **kwargs)

            acall.__name__ = name
            return acall

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return attr(*args, **kwargs)
            except LightUnsupported as why:
                return getattr(self._sdk_now(why), name)(*args, **kwargs)

        call.__name__ = name
        return call

    # ------------------------------------------------------------------ the handover
    def _sdk_now(self, why: Exception | None = None) -> OpenStackClient:
        """openstacksdk's client, built now if it is not yet (SourceError for a config it refuses too)."""
        with self._lock:
            if self.sdk is None:
                log.debug("openstack: openstacksdk takes over (%s)", why or "handover")
                self.sdk = connect(self.cfg)
                self._cancel()
            return self.sdk

    def _schedule(self, delay: float) -> None:
        if not math.isfinite(delay):  # the light client for good
            return
        timer = threading.Timer(delay, self._handover)
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _handover(self) -> None:
        """Background: build and authenticate openstacksdk's client, then let it answer everything."""
        if self._closed or self.sdk is not None:
            return
        try:
            sdk = connect(self.cfg)
            sdk.authenticate()  # the token, and discovery of the adapters the polls use
            sdk.compute_microversion()
            for service in ("network", "volume"):
                with contextlib.suppress(Exception):
                    sdk._adapter(service)
        except Exception as exc:  # Keystone down, say: the light client keeps answering, try again later
            log.debug("openstack: handover to openstacksdk postponed: %s", exc)
            with self._lock:
                if not self._closed and self.sdk is None:
                    self._schedule(RETRY_HANDOVER_S)
            return
        with self._lock:
            if self._closed or self.sdk is not None:
                sdk.close()
                return
            self.sdk = sdk
            self._timer = None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._cancel()
            sdk, self.sdk = self.sdk, None
        self.light.close()
        if sdk is not None:
            sdk.close()


def triage_client(cfg: OpenStackConfig, *, handover_after_s: float) -> TriageClient | None:
    """A TriageClient for cfg, or None when the light path does not handle its clouds.yaml entry."""
    try:
        cloud = load_cloud(cfg)
    except LightUnsupported as why:
        log.debug("openstack: openstacksdk from the start (%s)", why)
        return None
    if isinstance(cloud.verify, str) and ca_file_problem(cloud.verify):
        return None  # openstacksdk's path says what is wrong with the CA bundle, in one line
    where = Where(cfg.cloud, cfg.clouds_file, cloud.auth_url,
                  cafile=cloud.verify if isinstance(cloud.verify, str) else None)
    if where.cloud is None:
        where.cloud = cloud.name
    light = LightClient(cloud, where=where, timeout=cfg.timeout, max_body_mb=cfg.max_body_mb)
    return TriageClient(cfg, light, handover_after_s=handover_after_s)
