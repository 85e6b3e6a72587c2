"""The keys of issue #22's deadlines: `[openstack]` / `[rabbitmq]` max_body_mb and `[snapshot]` deadline (and
`--deadline`) take finite numbers within bounds; anything else is one line, `FILE: key: problem - fix`, exit 3."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import ConfigError, parse_config


def _parse(text: str) -> object:
    import tomllib

    return parse_config(tomllib.loads(text), file="c.toml", mode=0o600, env={})


def test_defaults() -> None:
    cfg = _parse("")
    assert cfg.openstack.max_body_mb == 16 and cfg.rabbitmq.max_body_mb == 16  # type: ignore[attr-defined]
    assert cfg.snapshot.deadline == 30  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "key"), [
    ("[openstack]\nmax_body_mb = nan", "openstack.max_body_mb"),
    ("[openstack]\nmax_body_mb = inf", "openstack.max_body_mb"),
    ("[openstack]\nmax_body_mb = 0", "openstack.max_body_mb"),
    ("[rabbitmq]\nmax_body_mb = 5000", "rabbitmq.max_body_mb"),
    ('[rabbitmq]\nmax_body_mb = "16"', "rabbitmq.max_body_mb"),
    ("[snapshot]\ndeadline = -inf", "snapshot.deadline"),
    ("[snapshot]\ndeadline = 0.5", "snapshot.deadline"),
    ("[snapshot]\ndeadlin = 5", "snapshot.deadlin"),
])
def test_bad_values_are_one_line(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        _parse(text)
    line = str(info.value)
    assert line.startswith(f"c.toml: {key}: ") and " - " in line and "\n" not in line, line


@pytest.mark.parametrize("value", ["nan", "inf", "0", "abc", "4000"])
def test_bad_deadline_flag_is_one_line_exit_3(value: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--deadline", value], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 3, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--deadline" in lines[0], proc.stderr
