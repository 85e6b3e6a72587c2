"""Regenerate the gallery in screenshots/ from the demo cloud: `.venv/bin/python scripts/screenshots.py [NAME...]`.

Each picture is one scene of tui/gallery.py (the same scenes the snapshot tests in tests/ui/test_gallery.py
check): the real app, headless, on the simulated cloud with a manual clock and a fixed seed, walked through
the storyline to the moment worth showing, at 160x48 (a tmux pane); plus the main view at 80x24. Times are
shown in UTC so the pictures do not depend on the machine's time zone.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["TZ"] = "UTC"
time.tzset()

from tui.gallery import SCENES, SIZE, GalleryApp, Tour, demo_for, main_view  # noqa: E402

OUT = ROOT / "screenshots"


async def take(name: str, scene, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    demo = demo_for(name)
    try:
        app = GalleryApp(demo)
        async with app.run_test(size=size) as pilot:
            await scene(Tour(app, pilot))
            app.save_screenshot(name, str(OUT))
    finally:
        demo.stop()
    print(f"screenshots/{name}")


async def gallery(names: list[str]) -> None:
    scenes = {**{n: (s, SIZE) for n, s in SCENES.items()}, "demo-80x24.svg": (main_view, (80, 24))}
    unknown = [n for n in names if n not in scenes]
    if unknown:
        raise SystemExit(f"unknown screenshot {', '.join(unknown)} - choose from {', '.join(scenes)}")
    for name, (scene, size) in scenes.items():
        if not names or name in names:
            await take(name, scene, size)


if __name__ == "__main__":
    asyncio.run(gallery(sys.argv[1:]))
