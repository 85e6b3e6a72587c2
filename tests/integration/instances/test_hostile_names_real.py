"""Hostile names on the real OpenStack test cloud: a server named `[/]` in ERROR (the name that crashed the
dashboard within 20 s), an ACTIVE server named with action and link markup, and a volume whose name holds a
screen clear and a window-title sequence (Nova refuses control characters in server names, Cinder accepts
them in volume names) attached to it. The dashboard keeps running, shows every name as typed with controls
made visible, and nothing rendered carries a control character, a link or a click action."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.instances.conftest import make_collector
from tests.testbed.openstack import OpenStackCloud, attached_volume, error_server, server_on
from tests.testbed.render import rendered
from tests.testbed.wait import until_pilot as until
from tui.app import StacktopApp
from tui.config import Config
from tui.screens.instance import InstanceScreen
from tui.widgets.findings_pane import FindingsPane

pytestmark = pytest.mark.integration

ERROR_NAME = "[/]"
ACTIVE_NAME = "[@click=app.quit]z[/] [link=http://evil.example]y[/link]"
VOLUME_NAME = "evil\x1b[2J\x1b]0;title\x07x"


async def test_hostile_server_and_volume_names_render_inert(openstack_cloud: OpenStackCloud, healthy: Any) -> None:
    collector = make_collector(openstack_cloud)
    app = StacktopApp(Config(), collectors=[collector])
    with error_server(healthy, name=ERROR_NAME) as bad, \
            server_on(healthy, "compute-01", network="provider", name=ACTIVE_NAME) as srv, \
            attached_volume(healthy, srv, name=VOLUME_NAME) as vol:
        assert healthy.block_storage.get_volume(vol.id).name == VOLUME_NAME, "cinder kept the controls"
        async with app.run_test(size=(200, 50)) as pilot:
            findings = app.query_one(FindingsPane)
            key = f"instance.error|{bad.id}"
            await until(pilot, lambda: findings.table is not None and key in findings.table.shown_keys,
                        "the ERROR server's finding", 90)
            await pilot.press("a")  # the instances pane: every row, the ACTIVE one too
            await pilot.pause(0.5)
            screen = rendered(app)
            assert app.is_running
            assert ERROR_NAME in screen and "No valid host was found" in screen

            app.push_screen(InstanceScreen(srv.id))
            detail = await until(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail,
                                 "the instance screen's read", 60)
            assert [v.name for v in detail.volumes] == [VOLUME_NAME]
            screen = rendered(app)
            assert "[@click=app.quit]z[/] [link=http://evil.example]y[/link]" in screen
            assert "evil\\x1b[2J\\x1b]0;title\\x07x" in screen
            assert app.is_running
    await collector.aclose()
