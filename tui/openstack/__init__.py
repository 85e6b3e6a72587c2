"""OpenStack read layer: plain-dict reads through a light httpx client or openstacksdk's adapters.

    client = connect(config.openstack)          # blocking, no network yet
    services = await client.aio.compute_services()
"""

from tui.openstack.client import (
    COMPUTE_MICROVERSION,
    COMPUTE_MIN_MICROVERSION,
    PLACEMENT_MICROVERSION,
    PLACEMENT_MIN_MICROVERSION,
    AsyncOpenStackClient,
    OpenStackClient,
    aconnect,
    connect,
)
from tui.openstack.errors import NotFound
from tui.openstack.session import OpenStackSession

__all__ = [
    "COMPUTE_MICROVERSION", "COMPUTE_MIN_MICROVERSION", "PLACEMENT_MICROVERSION", "PLACEMENT_MIN_MICROVERSION",
    "AsyncOpenStackClient", "NotFound", "OpenStackClient", "OpenStackSession", "aconnect", "connect",
]
