"""A nova answer of the wrong shape is a readable source error, not Python's words (issue #22): before,
`{"servers": [{"id": "a", "updated": 5}]}` failed the poll with "TypeError: '>' not supported between
instances of 'int' and 'str'" and `{"servers": [7]}` with "AttributeError: 'int' object has no attribute 'get'"."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tui.collectors.instances import InstancesCollector
from tui.config import OpenStackConfig
from tui.errors import SourceError
from tui.runner import CollectorRunner


class _Nova:
    """A client answering every server listing with one fixed body."""

    def __init__(self, body: Any) -> None:
        self.body = body

    def compute_microversion(self) -> str:
        return "2.79"

    def get_json(self, service: str, path: str, **kwargs: Any) -> Any:
        return dict(self.body)

    async def aget_json_many(self, service: str, paths: list[str], **kwargs: Any) -> list[Any]:
        return [dict(self.body) for _ in paths]


@pytest.mark.parametrize("body", [
    {"servers": [{"id": "a", "status": "ACTIVE", "updated": 5}]},
    {"servers": [7]},
    {"servers": [{"id": "a", "status": "ACTIVE"}, "b"]},
    {"servers": [{"id": "a", "updated": ["2026-01-01"]}], "servers_links": 3},
])
def test_malformed_server_list_is_a_readable_source_error(body: dict[str, Any]) -> None:
    collector = InstancesCollector(OpenStackConfig(cloud="x"), client_factory=lambda: _Nova(body))
    collector.attention_first = False
    with pytest.raises(SourceError) as err:
        asyncio.run(collector.collect())
    message = str(err.value)
    assert message.startswith("nova: ") or "malformed answer" in message, message
    assert "object has no attribute" not in message and "not supported between" not in message


def test_the_pane_error_names_nova_not_python() -> None:
    collector = InstancesCollector(OpenStackConfig(cloud="x"),
                                   client_factory=lambda: _Nova({"servers": [{"id": "a", "updated": 5}]}))
    collector.attention_first = False
    runner = CollectorRunner(collector)
    obs = asyncio.run(runner.run_once())
    assert obs.error is not None
    assert not obs.error.startswith(("TypeError", "AttributeError", "KeyError")), obs.error
    assert obs.error.startswith("nova: servers: unexpected answer"), obs.error
