"""The real 2 data nodes + garbd cluster (testcloud/galera-arb.sh, MariaDB 10.11) for the arbitrator tests.

`galera_arb_cluster` (session, tests/integration/conftest.py) starts it once through `scripts/testcloud up
galera-arb`; every test starts from a healthy cluster (both data nodes Primary/Synced, size 3) and leaves it
healthy. `arb_collector` reads it as the `stacktop` account with [galera] arbitrators = ["127.0.0.1:4633"].
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.integration.galera.scenarios import ensure_healthy
from tui.collectors.galera import GaleraCollector


@pytest.fixture(autouse=True)
def arb_healthy(galera_arb_cluster: Any) -> Iterator[Any]:
    ensure_healthy(galera_arb_cluster)
    try:
        yield galera_arb_cluster
    finally:
        ensure_healthy(galera_arb_cluster)


@pytest.fixture
async def arb_collector(galera_arb_cluster: Any) -> AsyncIterator[GaleraCollector]:
    c = GaleraCollector(galera_arb_cluster.nodes, galera_arb_cluster.reader_user,
                        galera_arb_cluster.reader_password, arbitrators=galera_arb_cluster.arbitrators,
                        interval=1.0, max_backoff_s=1.0)
    yield c
    await c.aclose()
