"""Hostile names through every pane, drill-down, toast and the palette, through the real render path.

The simulated cloud speaks tui.sim.hostile (markup that closes, styles, links or binds an action; screen clear,
window title, OSC 52, C1 CSI; zero-width and RTL characters; 255 characters) in hosts, servers, volumes,
queues, a disabled reason and the ERROR fault. Each scene of the gallery, and the screens the gallery does not
show, is rendered to segments (what the driver writes to the terminal) and checked: nothing crashed, no
control character, no link or action from a tenant string, and the names readable as typed.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.testbed.render import rendered
from tui.gallery import SCENES, GalleryApp, Tour, make_demo
from tui.safetext import has_unsafe
from tui.sim import hostile

pytestmark = pytest.mark.slow

SIZE = (220, 60)


async def run_scene(name: str, extra: Any = None, size: tuple[int, int] = SIZE) -> str:
    demo = make_demo(hostile=True)
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=size) as pilot:
            tour = Tour(app, pilot)
            await SCENES[name](tour)
            screen = rendered(app)
            if extra is not None:
                screen += "\n" + await extra(tour)
            assert app.is_running, "the app is still running"
            return screen
    finally:
        demo.stop()


@pytest.mark.parametrize("name", list(SCENES))
async def test_every_gallery_scene_renders_hostile_names_inert(name: str, utc: None) -> None:
    screen = await run_scene(name)
    assert "\\x1b" in screen or "[/]" in screen, "a hostile name is on screen, readable"


async def test_main_view_shows_hostile_names_exactly(utc: None) -> None:
    async def more(tour: Tour) -> str:
        texts = []
        from tui.widgets.findings_pane import FindingsPane

        for command in ("instances", "queues", "services"):
            await tour.command(command)
            await tour.pilot.press("a")  # every row
            await tour.pilot.pause(0.2)
            texts.append(rendered(tour.app))
        findings = tour.app.query_one(FindingsPane)
        assert findings.table is not None
        findings.table.set_filter("instance.error")
        await tour.pilot.pause(0.2)
        texts.append(rendered(tour.app))
        return "\n".join(texts)

    screen = await run_scene("demo.svg", more, size=(220, 120))  # tall: every hostile queue row in view
    # servers (instances pane), hosts (services pane), queues (RabbitMQ pane), the fault (findings)
    for visible in ("close:[/]", "compute-02[/]", "compute-04\\x1b[2J", "compute-06[@click=app.quit]",
                    "evil\\x1b[2J\\x1b]0;pwned\\x07x", "notifications.[link=http://evil.example]y[/link]",
                    "notifications.[bold red]styled", "notifications.zero\\u200bwidth\\u200d",
                    "notifications.rtl\\u202eabc\\u202c", "notifications.back\\",
                    "No valid host was found. [/] [@click=app.quit]q[/] \\x1b[2J"):
        assert visible in screen, f"{visible!r} not on screen as typed"


async def test_drill_downs_toasts_help_audit_fit_and_palette(utc: None) -> None:
    from tui.screens.audit import AuditScreen
    from tui.screens.fit import FitScreen
    from tui.screens.help import HelpScreen
    from tui.screens.host import HostScreen
    from tui.screens.instance import InstanceScreen
    from tui.widgets.findings_pane import FindingsPane

    demo = make_demo(hostile=True)
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=SIZE) as pilot:
            tour = Tour(app, pilot)
            await tour.walk(80)
            toasts = app.query_one(FindingsPane).toasts
            assert toasts, "a new critical was toasted"
            screen = rendered(app)  # the toasts are on screen now
            assert any(h in screen for h in ("\\x1b[2J", "[/]")), "the toast shows the hostile subject"
            app.notify("[@click=app.quit]x[/] \x1b]0;t\x07", title="[link=http://evil.example]t[/link]")
            await pilot.pause(0.2)
            rendered(app)
            shown = [(n.title, n.message, n.markup) for n in app._notifications]
            assert ("[link=http://evil.example]t[/link]", "[@click=app.quit]x[/] \\x1b]0;t\\x07", False) in shown
            assert all(not markup and not has_unsafe(message + title) for title, message, markup in shown)

            stuck = tour.story_detail("stuck_boot", "server")
            await tour.command(f"server {stuck}")
            await tour.until(lambda: isinstance(app.screen, InstanceScreen) and app.screen.detail is not None,
                             "the instance screen")
            assert "canary-evil\\x1b[2J\\x1b]0;pwned\\x07x" in rendered(app)
            await pilot.press("escape")

            bad_host = next(h.name for h in demo.engine.hosts if "[" in h.name)
            await tour.command(f"host {bad_host}")
            await tour.until(lambda: isinstance(app.screen, HostScreen) and app.screen.reads > 0, "host screen")
            assert bad_host in rendered(app)
            await pilot.press("escape")

            await tour.command("audit")
            await tour.until(lambda: isinstance(app.screen, AuditScreen) and app.screen.report is not None,
                             "the audit")
            rendered(app)
            await pilot.press("escape")

            await tour.command("fit x.huge")
            # the report, then its render (a frame later on a loaded machine)
            await tour.until(lambda: isinstance(app.screen, FitScreen) and app.screen.report is not None
                             and "compute-02[/]" in rendered(app), "fit, the hostile host's name shown inert")
            await pilot.press("escape")

            await pilot.press("question_mark")
            await tour.until(lambda: isinstance(app.screen, HelpScreen), "help")
            rendered(app)
            await pilot.press("escape")

            await pilot.press("ctrl+p")
            await pilot.pause(0.3)
            await pilot.press(*"cloud")
            await pilot.pause(0.3)
            rendered(app)
            assert app.is_running
    finally:
        demo.stop()


def test_hostile_set_covers_the_issue() -> None:
    joined = "".join(hostile.NAMES)
    for needle in ("[/]", "[@click=", "[link=", "\x1b[2J", "\x1b]0;", "\x1b]52;", "\x9b", "\u200b", "\u202e"):
        assert needle in joined + hostile.FAULT
    assert any(len(n) == 255 for n in hostile.NAMES)
