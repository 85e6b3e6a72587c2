"""`python bench/first_frame_child.py minimal|stacktop [ARGS]`: run the minimal Textual app or stacktop's command
line and exit at once when the first frame is handed to the terminal driver (bench.instructions counts the
instructions to that point). `--stop-at-run`: exit when App.run starts instead (what the imports, the config
and the app's construction cost). Textual's App is hooked as textual.app is imported, so nothing is imported
earlier than the program itself imports it."""

from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType
from typing import Any


def _hook(textual_app: ModuleType, stop_at_run: bool) -> None:
    app_class = textual_app.App
    display, run = app_class._display, app_class.run

    def first_display(self: Any, screen: Any, renderable: Any) -> None:
        display(self, screen, renderable)
        if renderable is not None:
            os._exit(0)

    def stop_run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if stop_at_run:
            os._exit(0)
        return run(self, *args, **kwargs)

    app_class._display, app_class.run = first_display, stop_run


class _HookTextual:
    """A meta path finder that hooks textual.app once it is loaded, and then steps aside."""

    def __init__(self, stop_at_run: bool) -> None:
        self.stop_at_run = stop_at_run

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "textual.app":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        load = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            load(module)
            _hook(module, self.stop_at_run)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def main() -> None:
    what, *args = sys.argv[1:]
    stop_at_run = "--stop-at-run" in args
    args = [a for a in args if a != "--stop-at-run"]
    sys.meta_path.insert(0, _HookTextual(stop_at_run))
    if what == "minimal":
        from textual.app import App
        from textual.widgets import Static

        class Minimal(App[None]):
            def compose(self) -> Any:
                yield Static("read-only")

        Minimal().run()
    else:
        sys.argv = ["stacktop", *args]
        try:
            from tui.launch import main as stacktop
        except ImportError:  # a checkout from before tui.launch
            from tui.cli import main as stacktop

        stacktop()


if __name__ == "__main__":
    main()
