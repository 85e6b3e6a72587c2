"""Suite-wide rules: integration tests run against real servers and never skip silently.

Tests marked `integration` start the servers they need through session fixtures (scripts/testcloud up ...).
They are skipped only when STACKTOP_SKIP_REAL=1 is set explicitly, and the summary then says so loudly.
"""

from __future__ import annotations

import os

import pytest

SKIP_REAL = os.environ.get("STACKTOP_SKIP_REAL") == "1"
_skipped_real: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not SKIP_REAL:
        return
    marker = pytest.mark.skip(reason="STACKTOP_SKIP_REAL=1: real-server test not run")
    for item in items:
        if "integration" in item.keywords:
            item.add_marker(marker)
            _skipped_real.append(item.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:  # type: ignore[no-untyped-def]
    if _skipped_real:
        terminalreporter.write_sep(
            "!", f"STACKTOP_SKIP_REAL=1: {len(_skipped_real)} real-server tests were NOT run", red=True
        )
