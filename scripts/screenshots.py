"""Regenerate the gallery in screenshots/ from the demo cloud: `.venv/bin/python scripts/screenshots.py`.

Runs the real app headless on the simulated cloud with a manual clock, walks the storyline to the moments
worth showing (sim seconds: compute dies at 15 and is reported down at 74, Galera loses quorum 60-90, the
RabbitMQ memory alarm 45-75) and saves SVGs at 160x48 (a tmux pane) and 80x24.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui.app import StacktopApp  # noqa: E402
from tui.sim import start_demo  # noqa: E402

OUT = ROOT / "screenshots"


async def shot(app: StacktopApp, pilot, name: str) -> None:  # type: ignore[no-untyped-def]
    """Save one SVG; a screen still composing its first frame is given a moment and asked again."""
    for _ in range(5):
        try:
            app.save_screenshot(name, str(OUT))
            return
        except TypeError:
            await pilot.pause(1.0)
    print(f"could not capture {name}", file=sys.stderr)


async def walk(app: StacktopApp, pilot, demo, until: float, step: float = 3.0) -> None:  # type: ignore[no-untyped-def]
    """Advance sim time to `until`, refreshing every source at each step (so 2-poll rules see 2 polls)."""
    while (demo.now() - demo.start).total_seconds() < until:
        demo.advance(step)
        app.action_refresh_now()
        await pilot.pause(0.6)


async def gallery() -> None:
    demo = start_demo(manual=True, seed=0)
    demo.start = demo.now()
    try:
        app = StacktopApp(demo.config(), clock=lambda: demo.now().timestamp(),
                          galera_connector=demo.galera_connector)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.pause(2.0)
            await walk(app, pilot, demo, 50)
            await shot(app, pilot, "rabbitmq-alarm.svg")
            await walk(app, pilot, demo, 80)
            await pilot.pause(1.0)
            await shot(app, pilot, "demo.svg")
            app.run_command("galera")
            await pilot.pause(0.3)
            await shot(app, pilot, "galera-no-quorum.svg")
            stuck = [f for obs in app.observations.values() for f in obs.findings if f.kind == "instance.stuck"]
            if stuck:
                app.run_command(f"server {stuck[0].subject}")
                await pilot.pause(3.0)
                await shot(app, pilot, "instance-stuck.svg")
                await pilot.press("h")
                await pilot.pause(3.0)
                await shot(app, pilot, "host-drilldown.svg")
                await pilot.press("escape", "escape")
        small = StacktopApp(demo.config(), clock=lambda: demo.now().timestamp(),
                            galera_connector=demo.galera_connector)
        async with small.run_test(size=(80, 24)) as pilot:
            app = small
            await pilot.pause(3.0)
            await shot(app, pilot, "demo-80x24.svg")
    finally:
        demo.stop()


if __name__ == "__main__":
    asyncio.run(gallery())
    for svg in sorted(OUT.glob("*.svg")):
        print(svg.relative_to(ROOT))
