"""No request URL in stacktop.log: httpx logs every request (`HTTP Request: GET http://...`) at INFO, and the
dashboard's log file takes INFO. A poll of every source through the dashboard's clients, with the log set up
as the dashboard sets it up, must leave no URL of the simulated cloud in the file."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.world import World, degraded
from tui.cli import _log_to_file


@pytest.fixture
def log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    saved = {name: logging.getLogger(name).level for name in ("httpx", "httpcore", "keystoneauth", "urllib3",
                                                                "openstack")}
    _log_to_file()
    yield tmp_path / "stacktop" / "stacktop.log"
    logging.basicConfig(handlers=[logging.NullHandler()], force=True)
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.parametrize("client_kind", ["light", "sdk"])
async def test_a_poll_writes_no_request_url_to_the_log(sim: Any, log_file: Path, client_kind: str) -> None:
    world: World = sim.world(client_kind=client_kind)
    world.build()
    try:
        obs = await world.poll()
        assert degraded(obs) == {}
        logging.getLogger("stacktop.test").info("poll done")  # the file does take INFO
    finally:
        await world.close()
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "poll done" in text
    ports = [str(listener.port) for listener in sim.demo.listeners.values()]
    leaked = [line for line in text.splitlines() if "http://" in line or any(f":{p}" in line for p in ports)]
    assert not leaked, f"request URLs in stacktop.log: {leaked[:3]}"
