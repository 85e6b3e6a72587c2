"""The contract tests use the integration suite's real-server fixtures (started on demand, never skipped
unless STACKTOP_SKIP_REAL=1)."""

from tests.integration.conftest import (  # noqa: F401
    galera11_cluster,
    galera_arb_cluster,
    galera_cluster,
    openstack_cloud,
    rabbitmq4_cluster,
    rabbitmq_broker,
)
