"""The real 3-node Galera clusters for the Galera collector tests: every test runs against MariaDB 10.11
(testcloud/galera.sh) and MariaDB 11.8 (testcloud/trixie/galera11.sh).

`galera_cluster` here is parametrized over those two profiles (session scope: pytest runs every test of one
profile before the next, each cluster is brought up once through `scripts/testcloud up galera|galera11`).
Every test here starts from a healthy cluster and leaves it healthy (`galera_healthy`, autouse: a quick SQL
check, `galera.sh up` only when something is off); scenario helpers in scenarios.py undo their own changes.
`make_collector` builds collectors reading as the `stacktop` account (SHOW only), closed after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from tests.integration.conftest import GaleraCluster, start_galera
from tests.integration.galera.scenarios import ensure_healthy
from tui.collectors.galera import GaleraCollector


@pytest.fixture(scope="session", params=["galera", "galera11"], ids=["mariadb-10.11", "mariadb-11.8"])
def galera_cluster(request: pytest.FixtureRequest) -> GaleraCluster:
    return start_galera(request.param)


@pytest.fixture(autouse=True)
def galera_healthy(galera_cluster: Any) -> Iterator[Any]:
    ensure_healthy(galera_cluster)
    try:
        yield galera_cluster
    finally:
        ensure_healthy(galera_cluster)


@pytest.fixture
async def make_collector(galera_cluster: Any) -> AsyncIterator[Callable[..., GaleraCollector]]:
    made: list[GaleraCollector] = []

    def make(**kwargs: Any) -> GaleraCollector:
        kwargs.setdefault("user", galera_cluster.reader_user)
        kwargs.setdefault("password", galera_cluster.reader_password)
        kwargs.setdefault("expected_size", 3)
        kwargs.setdefault("interval", 1.0)
        kwargs.setdefault("max_backoff_s", 1.0)
        nodes = kwargs.pop("nodes", galera_cluster.nodes)
        collector = GaleraCollector(nodes, **kwargs)
        made.append(collector)
        return collector

    yield make
    for collector in made:
        await collector.aclose()
