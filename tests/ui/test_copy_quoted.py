"""`y` / `Y` on the finding and instance screens put shell-quoted text on the clipboard: a host named
`hx | touch pwned #`, a server id `$(touch pwned)` or a request id with backticks is one argument when pasted
into a shell, and the screen shows the same quoted command it copies. A name with a control character is not
copied (the toast says why)."""

from __future__ import annotations

import io
import shlex
from datetime import UTC, datetime, timedelta
from typing import Any

from rich.console import Console

from tests.testbed.wait import until_pilot
from tui.app import StacktopApp
from tui.collectors.base import BaseCollector
from tui.config import Config, Thresholds
from tui.models.finding import Finding
from tui.models.instances import InstanceAction, InstanceDetail, InstancesSnapshot, Server
from tui.models.services import KeystoneCheck, SectionRead, ServiceRow, ServicesSnapshot
from tui.rules.liveness import services_findings
from tui.screens.finding import FindingScreen
from tui.screens.instance import InstanceScreen

FROZEN = 1_790_000_000.0
NOW = datetime.fromtimestamp(FROZEN, UTC)
TH = Thresholds(service_down_time=60, agent_down_time=75, volume_service_down_time=60, fleet_down_fraction=0.5)
HOST = "hx | touch pwned #"
SERVER = "$(touch pwned)"
REQUEST = "req-`touch pwned`; rm -rf ~"


class DisabledCompute(BaseCollector):
    """A compute service, disabled by hand, on the host the test names; the real rules judge it."""

    name = "services"
    interval = 3600.0
    timeout = 5.0

    def __init__(self, host: str) -> None:
        self.host = host

    async def collect(self) -> ServicesSnapshot:
        row = ServiceRow(section="compute", binary="nova-compute", host=self.host, id="1", zone="nova",
                         status="disabled", updated_at=NOW - timedelta(seconds=5), age_at_read_s=5.0)
        return ServicesSnapshot(taken_at=NOW, keystone=KeystoneCheck("http://ks:5000/v3", "prod"),
                                compute=SectionRead("compute", (row,), NOW))

    def findings(self, snapshot: Any, now: datetime) -> list[Finding]:
        return services_findings(snapshot, now, TH)


class OneServer(BaseCollector):
    """The instances source for one server, with an on-demand detail read naming the request id."""

    name = "instances"
    interval = 3600.0
    timeout = 5.0

    def __init__(self, server: Server, request_id: str) -> None:
        self.server, self.request_id = server, request_id

    async def collect(self) -> InstancesSnapshot:
        return InstancesSnapshot(taken_at=NOW, servers=(self.server,))

    async def instance_detail(self, server_id: str) -> InstanceDetail:
        return InstanceDetail(server=self.server, actions=(InstanceAction("create", self.request_id, NOW),))


def plain(widget: Any) -> str:
    out = io.StringIO()
    content = widget.content
    Console(file=out, width=400, color_system=None).print(widget.render() if isinstance(content, str) else content)
    return " ".join(out.getvalue().split())


async def finding_screen(app: StacktopApp, pilot: Any, host: str) -> FindingScreen:
    await until_pilot(pilot, lambda: app.observations.get("services") is not None, "the first poll", 15,
                      interval=0.05)
    app.push_screen(FindingScreen(f"nova.service_disabled|{host}"))
    screen: FindingScreen = await until_pilot(
        pilot, lambda: isinstance(app.screen, FindingScreen) and app.screen.finding is not None and app.screen,
        "the finding screen", 15, interval=0.05)
    app.clear_notifications()
    return screen


async def test_y_on_a_finding_copies_the_diagnostic_first_then_the_write_command_quoted_and_marked() -> None:
    app = StacktopApp(Config(), collectors=[DisabledCompute(HOST)], clock=lambda: FROZEN)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await finding_screen(app, pilot, HOST)
        diagnostic = "openstack compute service list --host 'hx | touch pwned #' --service nova-compute"
        expected = "openstack compute service set --enable 'hx | touch pwned #' nova-compute"
        body = plain(screen.query_one("#finding-body"))
        assert f"next step intended maintenance? If not: {expected}" in body
        assert f"command {diagnostic} (read-only; y copies it) {expected} (WRITE: changes the cloud; y again " \
               "copies it)" in body
        await pilot.press("y")
        assert app.clipboard == diagnostic
        assert shlex.split(app.clipboard) == ["openstack", "compute", "service", "list", "--host", HOST,
                                              "--service", "nova-compute"]
        await pilot.press("y")
        assert app.clipboard == expected
        assert shlex.split(app.clipboard) == ["openstack", "compute", "service", "set", "--enable", HOST,
                                              "nova-compute"]
        assert [n.message for n in app._notifications] == [
            f"copied the read-only command: {diagnostic}; y again: the next one",
            f"copied a WRITE command (it changes the cloud): {expected}"]


async def test_y_on_a_finding_about_a_host_with_a_control_character_copies_nothing_and_says_why() -> None:
    host = "compute-0\x1b1"
    app = StacktopApp(Config(), collectors=[DisabledCompute(host)], clock=lambda: FROZEN)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await finding_screen(app, pilot, host)
        body = plain(screen.query_one("#finding-body"))
        assert "command not copyable: a name in it holds a control character" in body
        assert "'compute-0\\x1b1'" in body, "the next step writes the control out, quoted"
        await pilot.press("y")
        assert app.clipboard == ""
        [toast] = [n.message for n in app._notifications]
        assert toast.startswith("not copyable: a name in it holds a control character")


async def test_y_and_Y_on_the_instance_screen_copy_the_ids_quoted() -> None:
    server = Server(id=SERVER, name="web", status="ACTIVE", host="compute-01")
    app = StacktopApp(Config(), collectors=[OneServer(server, REQUEST)], clock=lambda: FROZEN)
    async with app.run_test(size=(200, 50)) as pilot:
        await until_pilot(pilot, lambda: app.observations.get("instances") is not None, "the first poll", 15,
                          interval=0.05)
        app.push_screen(InstanceScreen(SERVER))
        await until_pilot(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                          "the instance screen's read", 15, interval=0.05)
        app.clear_notifications()
        await pilot.press("y")
        assert app.clipboard == "'$(touch pwned)'" and shlex.split(app.clipboard) == [SERVER]
        await pilot.press("Y")
        assert app.clipboard == shlex.quote(REQUEST) and shlex.split(app.clipboard) == [REQUEST]
        assert [n.message for n in app._notifications] == [
            "copied the instance id to the clipboard: '$(touch pwned)'",
            f"copied the request id to the clipboard: {shlex.quote(REQUEST)}"]


async def test_an_instance_id_with_a_control_character_is_not_copied() -> None:
    sid = "id\x1b]52;c;ZWNobw==\x07"
    server = Server(id=sid, name="web", status="ACTIVE", host="compute-01")
    app = StacktopApp(Config(), collectors=[OneServer(server, "req-1")], clock=lambda: FROZEN)
    async with app.run_test(size=(200, 50)) as pilot:
        await until_pilot(pilot, lambda: app.observations.get("instances") is not None, "the first poll", 15,
                          interval=0.05)
        app.push_screen(InstanceScreen(sid))
        await until_pilot(pilot, lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                          "the instance screen's read", 15, interval=0.05)
        app.clear_notifications()
        await pilot.press("y")
        assert app.clipboard == ""
        assert [n.message for n in app._notifications] == [
            "the instance id holds a control character (written out on screen): not copied"]
        await pilot.press("Y")
        assert app.clipboard == "req-1"
