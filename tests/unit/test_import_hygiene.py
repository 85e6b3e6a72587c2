"""The core (models, rules, collectors, config, runner, ...) must never import Textual."""

from __future__ import annotations

import pkgutil

import tui
from tests.fresh_python import fresh_python

UI_MODULES = ("tui.app", "tui.widgets", "tui.screens", "tui.gallery", "tui.replay_app")


def core_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(tui.__path__, "tui."):
        if info.name.startswith(UI_MODULES) or info.name == "tui.__main__":
            continue
        names.append(info.name)
    return names


def test_core_modules_do_not_import_textual() -> None:
    modules = core_modules()
    assert {"tui.config", "tui.runner", "tui.models.finding", "tui.collectors.base", "tui.cli"} <= set(modules)
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "heavy = sorted(m for m in ('openstack', 'pika', 'pymysql') if m in sys.modules)\n"
        "print(repr((bad[:3], heavy)))\n"
    )
    stdout = fresh_python(code)
    textual_modules, heavy = eval(stdout.strip())
    assert textual_modules == [], f"textual imported by the core: {textual_modules}"
    assert heavy == [], f"heavy clients imported at module import time (import them lazily): {heavy}"


def test_what_the_first_paint_imports_stays_lean() -> None:
    """Everything the dashboard imports before its first frame (the command line, the app, the pane classes):
    no OpenStack/RabbitMQ/MySQL/HTTP client (they load after the first paint, in the collectors), no ctypes
    (gcpolicy's malloc_trim: ~5 ms with find_library, needed 15 min later), and no
    snapshot model or rule module beyond the small ones (their frozen dataclasses cost ~20 ms of CPU there)."""
    code = (
        "import sys\n"
        "import tui.cli, tui.app\n"
        "from tui.widgets.panes import pane_class, pane_order\n"
        "[pane_class(source, title) for source, title in pane_order()]\n"
        "heavy = sorted(m for m in ('openstack', 'keystoneauth1', 'pika', 'pymysql', 'httpx', 'requests', 'ctypes')\n"
        "               if m in sys.modules)\n"
        "big = sorted(m for m in sys.modules if m.startswith(('tui.models.', 'tui.rules.', 'tui.collectors.'))\n"
        "             and m not in ('tui.models.finding', 'tui.models.observation', 'tui.rules.task_states',\n"
        "                           'tui.collectors.base'))\n"
        "print(repr((heavy, big)))\n"
    )
    stdout = fresh_python(code)
    heavy, big = eval(stdout.strip())
    assert heavy == [], f"client libraries imported before the first paint: {heavy}"
    assert big == [], f"model/rule/collector modules imported before the first paint: {big}"


AFTER_THE_FIRST_FRAME = (
    # the tables (DataTable, row diffing, lazy rows): mounted with each pane's body, right after the first paint
    "textual.widgets._data_table", "tui.widgets.keyed_table", "tui.tablediff", "tui.widgets.lazy_rows",
    # the command line and palette, the help screen, the runners: made when first used
    "tui.commands", "tui.widgets.command_input", "tui.screens.help", "tui.runner", "tui.collectors.base",
    # the inventory of Textual internals is for its test
    "tui.widgets.textual_private",
    # the demo's simulator is built in a thread after the first frame; TOML is read only from a config file
    "tui.sim.demo", "tomllib",
    # the clients
    "openstack", "keystoneauth1", "pika", "pymysql", "httpx", "requests",
)


def test_the_first_frame_is_drawn_before_the_tables_commands_and_sources_load() -> None:
    """The dashboard as `stacktop --demo` opens it (the demo's shell config, the set-up still to run): what is
    imported when its first frame is handed to the terminal. Each module listed loads after it."""
    code = (
        "import asyncio, sys, threading\n"
        "from tui.app import StacktopApp\n"
        "from tui.sim.shell import shell_config\n"
        "seen = []\n"
        "draw = StacktopApp._display\n"
        "def _display(self, screen, renderable):\n"
        "    if renderable is not None and not seen:\n"
        "        seen.append(set(sys.modules))\n"
        "    draw(self, screen, renderable)\n"
        "StacktopApp._display = _display\n"
        "never = threading.Event()\n"
        "def setup():\n"
        "    never.wait(60)\n"
        "    raise RuntimeError('the test is over')\n"
        "async def main():\n"
        "    app = StacktopApp(shell_config(), setup=setup)\n"
        "    async with app.run_test(size=(160, 50)) as pilot:\n"
        "        await pilot.pause()\n"
        "    never.set()\n"
        "asyncio.run(main())\n"
        f"print(repr(sorted(m for m in {AFTER_THE_FIRST_FRAME!r} if m in seen[0])))\n"
    )
    loaded = eval(fresh_python(code).strip().splitlines()[-1])
    assert loaded == [], f"imported before the first frame: {loaded}"


def test_the_placement_audit_loads_its_models_with_its_first_run() -> None:
    """The background audit's first run comes FIRST_DELAY_S after the start: its models and rules (~20 frozen
    classes) are not built on the first triage's path (the collectors, the triage row's rules)."""
    code = (
        "import asyncio, sys\n"
        "from tui.collectors.placement import PlacementAuditCollector\n"
        "from tui.collectors.registry import build_collectors\n"
        "import tui.rules.triage, tui.collectors.services, tui.collectors.instances, tui.collectors.rabbitmq\n"
        "early = sorted(m for m in ('tui.models.placement', 'tui.rules.allocations') if m in sys.modules)\n"
        "from tui.rules.allocations import SOURCE\n"
        "print(repr((early, PlacementAuditCollector.name == SOURCE)))\n"
    )
    early, same_name = eval(fresh_python(code).strip().splitlines()[-1])
    assert early == [], f"imported before the audit's first run: {early}"
    assert same_name, "the collector's name is the findings' source"
