"""[recorder] trace_interval and [[recorder.log_sources]]: parsed, and every mistake is one line naming the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from tui.config import ConfigError, LogSource, load_config, parse_config


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_config(tomllib.loads(text), file="c.toml", mode=0o600, env={})


def test_log_sources_parsed() -> None:
    cfg = parse("""
[recorder]
trace_interval = 0.25
[[recorder.log_sources]]
service = "nova-api"
command = "docker logs nova_api"
[[recorder.log_sources]]
service = "nova-compute"
path = "/var/log/nova/*.log"
timeout = 3
""")
    assert cfg.recorder.trace_interval == 0.25
    assert cfg.recorder.log_sources == (
        LogSource("nova-api", command="docker logs nova_api"),
        LogSource("nova-compute", path="/var/log/nova/*.log", timeout=3.0))


def test_defaults() -> None:
    cfg = parse("")
    assert cfg.recorder.trace_interval == 0.5 and cfg.recorder.log_sources == ()


@pytest.mark.parametrize(("text", "key", "words"), [
    ('[[recorder.log_sources]]\ncommand = "x"', "recorder.log_sources[0].service", "is missing"),
    ('[[recorder.log_sources]]\nservice = "a"', "recorder.log_sources[0]", "neither command nor path"),
    ('[[recorder.log_sources]]\nservice = "a"\ncommand = "x"\npath = "/y"', "recorder.log_sources[0]",
     "both command and path"),
    ('[[recorder.log_sources]]\nservice = "a"\ncommnd = "x"', "recorder.log_sources[0].commnd", "command"),
    ('[[recorder.log_sources]]\nservice = "a"\npath = "/y"\ntimeout = "5"', "recorder.log_sources[0].timeout",
     "must be a number"),
    ('[recorder]\nlog_sources = "docker logs"', "recorder.log_sources", "array of tables"),
    ('[recorder]\ntrace_interval = 0', "recorder.trace_interval", "must be between"),
])
def test_mistakes_are_one_line(text: str, key: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"c.toml: {key}: ") and words in message


def test_example_config_has_log_sources(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "config.example.toml"
    copy = tmp_path / "c.toml"
    copy.write_text(example.read_text())
    copy.chmod(0o600)
    cfg = load_config(str(copy), env={"RABBITMQ_PASSWORD": "x", "GALERA_PASSWORD": "y"})
    assert [s.service for s in cfg.recorder.log_sources] == ["nova-api", "nova-compute"]
