"""Snapshot tests of the screenshot gallery: each README picture, from the same scene (tui/gallery.py).

Deterministic: fixed seed and sim start, a manual sim clock shared by the app and the collectors, polls only
when the scene asks, times shown in UTC. A failure shows the visual diff in snapshot_report.html; review it,
and only then update with `--snapshot-update` (and regenerate screenshots/ with scripts/screenshots.py).
"""

from __future__ import annotations

import pytest

from tui.gallery import SCENES, SIZE, GalleryApp, Tour, demo_for, main_view

pytestmark = pytest.mark.slow


def compare(snap_compare, scene, size: tuple[int, int], name: str = "") -> bool:  # type: ignore[no-untyped-def]
    demo = demo_for(name)
    try:
        app = GalleryApp(demo)

        async def run_before(pilot) -> None:  # type: ignore[no-untyped-def]
            await scene(Tour(app, pilot))

        return bool(snap_compare(app, terminal_size=size, run_before=run_before))
    finally:
        demo.stop()


@pytest.mark.parametrize("name", list(SCENES))
def test_gallery_view(name: str, snap_compare, utc) -> None:  # type: ignore[no-untyped-def]
    assert compare(snap_compare, SCENES[name], SIZE, name)


def test_gallery_main_view_80x24(snap_compare, utc) -> None:  # type: ignore[no-untyped-def]
    assert compare(snap_compare, main_view, (80, 24))
