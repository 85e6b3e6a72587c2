"""`stacktop --demo` draws its first frame from tui.sim.shell's config, before the simulator exists: it must
promise what the simulator's config then delivers (the same clouds, the same sources configured at the same
intervals, the same passwords for the journal's redaction), or the panes would change under the user's eyes
once the simulator runs. The command line builds the simulator only when the app asks (its set-up)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any

import pytest

from tui import cli, sources
from tui.sim.demo import start_demo_clouds
from tui.sim.shell import CLOUDS, shell_config


def shape(config: Any) -> dict[str, Any]:
    """What the first frame shows of a config: per cloud, each source configured or not, and its interval."""
    return {cloud.name: {spec.name: (spec.configured(config.for_cloud(cloud.name)),
                                     spec.interval(config.for_cloud(cloud.name))) for spec in sources.SOURCES}
            for cloud in config.all_clouds()}


@pytest.mark.parametrize("options", [{}, {"instances": 40, "hosts": 4, "queues": 20, "seed": 3}])
def test_the_shell_promises_what_the_simulator_delivers(options: dict[str, Any]) -> None:
    shell = shell_config()
    demo = start_demo_clouds(**options)
    try:
        real = demo.config()
    finally:
        demo.stop()
    assert [c.name for c in shell.all_clouds()] == [c.name for c in real.all_clouds()] == list(CLOUDS)
    assert shape(shell) == shape(real)
    assert all(configured for cloud in shape(shell).values() for configured, _ in cloud.values())
    assert sorted(filter(None, shell.secrets())) == sorted(filter(None, real.secrets()))
    assert shell.demo and real.demo
    assert (shell.ui, shell.recorder) == (real.ui, real.recorder)


def test_the_demo_is_built_by_the_apps_setup_and_stopped_after(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class FakeApp:
        def __init__(self, config: Any, *, recorder: Any = None, **kwargs: Any) -> None:
            seen["config"], self.kwargs = config, kwargs
            self.return_code, self._exception = 0, None

        def run(self) -> None:
            seen["late"] = self.kwargs["setup"]()  # what the app does after its first frame
            seen["clock"] = self.kwargs["clock"]()

    monkeypatch.setattr("tui.app.StacktopApp", FakeApp)
    monkeypatch.setattr(cli, "_recorder", lambda config: None)
    args = argparse.Namespace(cloud=None, demo=True)
    demo = cli._LateDemo({"instances": 10, "hosts": 2, "queues": 5})
    assert demo.demo is None  # nothing built before the app runs
    cli._run_app(args, demo.config(), demo, None)
    assert seen["config"] == shell_config()
    late = seen["late"]
    assert [c.name for c in late.config.all_clouds()] == list(CLOUDS)
    assert set(late.galera_connectors) == set(CLOUDS)
    assert late.config.rabbitmq.management_url.startswith("http://127.0.0.1:")
    assert abs(seen["clock"] - demo.demo.now().timestamp()) < 5  # sim time once it runs
    assert all(d._stopped and not d.tmpdir.exists() for d in demo.demo.demos.values())  # stopped on exit
    with pytest.raises(RuntimeError, match="closed before"):
        demo.start()  # the app asked after the dashboard closed: nothing is built


def test_the_shell_does_not_import_the_simulator() -> None:
    code = ("import sys\nfrom tui import cli\ncli._LateDemo({}).config()\n"
            "print(sorted(m for m in sys.modules if m.startswith('tui.sim.') and m != 'tui.sim.shell'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout
