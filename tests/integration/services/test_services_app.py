"""The dashboard with the real services source and a real RabbitMQ source: Keystone refusing connections
shows keystone.unreachable, while the control-plane pane keeps its rows and the RabbitMQ pane keeps its data.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.integration.services.conftest import TEST_THRESHOLDS, KeystoneProxy, make_collector, os_config
from tests.testbed.rabbitmq import Broker
from tui.app import StacktopApp
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import Config
from tui.widgets.findings_pane import FindingsPane
from tui.widgets.services_pane import ServicesPane
from tui.widgets.source_pane import SourcePane

pytestmark = pytest.mark.integration

OPENSTACK_VHOST = "openstack"  # the test cloud's services talk over this vhost (testcloud/openstack/etc)


async def wait(pilot: Any, probe: Any, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.2)


async def test_keystone_down_other_panes_keep_their_data(healthy: Any, keystone_proxy: KeystoneProxy,
                                                         rabbitmq_broker: Broker) -> None:
    services = make_collector(os_config(keystone_proxy.clouds_yaml, keystone_proxy.cloud))
    rabbit = RabbitMQCollector(rabbitmq_broker.mgmt_url, rabbitmq_broker.user, rabbitmq_broker.password,
                               vhosts=[OPENSTACK_VHOST], interval=2.0, timeout=10.0)
    app = StacktopApp(Config(thresholds=TEST_THRESHOLDS), collectors=[services, rabbit])
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one("#pane-services", ServicesPane)
        rmq = app.query_one("#pane-rabbitmq", SourcePane)
        findings = app.query_one(FindingsPane)

        def rows(p: SourcePane) -> int:
            return p.table.row_count if p.table is not None else 0

        await wait(pilot, lambda: rows(pane) >= 8 and rows(rmq) > 0, timeout=60, what="both panes to fill")
        service_rows, rabbit_rows = rows(pane), rows(rmq)

        keystone_proxy.proxy.close()
        app.action_refresh_now()
        assert findings.table is not None
        key = f"keystone.unreachable|{keystone_proxy.auth_url}"
        await wait(pilot, lambda: key in findings.table.shown_keys, timeout=30, what="keystone.unreachable")
        assert "unreachable" in str(pane.query_one("#services-message").render())
        assert rows(pane) == service_rows, "the control-plane rows stay"
        assert str(pane.border_subtitle).startswith("ok"), "the source itself did not fail"
        await wait(pilot, lambda: app.observations["rabbitmq"].tried_at
                   and app.observations["rabbitmq"].tried_at > app.observations["services"].tried_at,
                   timeout=30, what="a RabbitMQ poll during the outage")
        assert app.observations["rabbitmq"].ok and rows(rmq) >= min(1, rabbit_rows)
        assert str(rmq.border_subtitle).startswith("ok")

        keystone_proxy.proxy.open()
        app.action_refresh_now()
        await wait(pilot, lambda: key not in findings.table.shown_keys, timeout=30, what="Keystone back")
