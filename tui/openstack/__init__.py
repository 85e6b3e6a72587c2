"""OpenStack read layer: openstacksdk for auth/catalog/microversions, plain-dict reads via its adapters.

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
    close_shared,
    connect,
    shared_client,
)
from tui.openstack.errors import NotFound

__all__ = [
    "COMPUTE_MICROVERSION", "COMPUTE_MIN_MICROVERSION", "PLACEMENT_MICROVERSION", "PLACEMENT_MIN_MICROVERSION",
    "AsyncOpenStackClient", "NotFound", "OpenStackClient", "aconnect", "close_shared", "connect",
    "shared_client",
]
