"""Hostile config input (issue #22): credentials in URLs, non-finite or absurd numbers, files that are not
regular files, undecodable password files, control characters. Each is ONE line `FILE: key: problem - fix`,
exit code 3 from the command line, never a traceback, never the password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import ConfigError, load_config

CANARY = "Canary-Pw-5e1d77"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(0o600)
    return path


def _error(path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(str(path), env={})
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


URLS: list[tuple[str, str, str]] = [
    ("management_url", f'[rabbitmq]\nmanagement_url = "http://user:{CANARY}@host:15672"\n',
     "rabbitmq.management_url: contains credentials (user:password@) - drop them from the URL; set [rabbitmq] "
     "user and password_env or password_file"),
    ("management_url https user only", '[rabbitmq]\nmanagement_url = "https://monitor@host:15671/"\n',
     "rabbitmq.management_url: contains credentials"),
    ("amqp_url", f'[rabbitmq]\namqp_url = "amqps://u:{CANARY}@host:5671/"\n',
     "rabbitmq.amqp_url: contains credentials (user:password@)"),
    ("no scheme", f'[rabbitmq]\nmanagement_url = "u:{CANARY}@host:15672"\n',
     "rabbitmq.management_url: contains credentials"),
    ("galera node", f'[galera]\nnodes = ["db1:3306", "monitor:{CANARY}@db2:3306"]\n',
     "galera.nodes[1]: contains credentials (user:password@) - write host:port only; set [galera] user and "
     "password_env or password_file"),
    ("[[clouds]] management_url",
     f'[[clouds]]\nname = "east"\n[clouds.rabbitmq]\nmanagement_url = "http://u:{CANARY}@h:15672"\n',
     "clouds[east].rabbitmq.management_url: contains credentials"),
    ("[[clouds]] galera node",
     f'[[clouds]]\nname = "east"\n[clouds.galera]\nnodes = ["u:{CANARY}@db:3306"]\n',
     "clouds[east].galera.nodes[0]: contains credentials"),
]


@pytest.mark.parametrize(("name", "text", "expected"), URLS, ids=[u[0] for u in URLS])
def test_credentials_in_urls_are_refused_without_echoing_them(tmp_path: Path, name: str, text: str,
                                                              expected: str) -> None:
    message = _error(_write(tmp_path, text))
    assert expected in message
    assert CANARY not in message


NUMBERS: list[tuple[str, str, str]] = [
    ("interval nan", "[openstack]\ninterval = nan\n",
     "openstack.interval: must be between 1 and 3600 seconds, got nan - e.g. interval = 10"),
    ("interval inf", "[galera]\ninterval = inf\n", "galera.interval: must be between 1 and 3600 seconds, got inf"),
    ("interval -inf", "[rabbitmq]\ninterval = -inf\n", "must be between 1 and 3600 seconds, got -inf"),
    ("interval absurd", "[openstack]\ninterval = 1e9\n",
     "openstack.interval: must be between 1 and 3600 seconds, got 1000000000.0"),
    ("timeout nan", "[rabbitmq]\ntimeout = nan\n", "rabbitmq.timeout: must be between 0.5 and 600 seconds, got nan"),
    ("timeout negative", "[galera]\ntimeout = -5\n", "galera.timeout: must be between 0.5 and 600 seconds, got -5"),
    ("timeout zero", "[openstack]\ntimeout = 0\n", "openstack.timeout: must be between 0.5 and 600 seconds, got 0"),
    ("down time absurd", "[thresholds]\nservice_down_time = 1e9\n",
     "thresholds.service_down_time: must be between 1 and 86400 seconds"),
    ("agent down time nan", "[thresholds]\nagent_down_time = nan\n", "thresholds.agent_down_time: must be between"),
    ("volume down time inf", "[thresholds]\nvolume_service_down_time = inf\n",
     "thresholds.volume_service_down_time: must be between"),
    ("fraction nan", "[thresholds]\nfleet_down_fraction = nan\n",
     "thresholds.fleet_down_fraction: must be between 0.01 and 1, got nan"),
    ("stuck nan", "[thresholds.stuck]\nspawning = nan\n",
     "thresholds.stuck.spawning: must be between 1 and 604800 seconds, got nan"),
    ("stuck absurd", "[thresholds.stuck]\ndefault = 1e9\n", "thresholds.stuck.default: must be between 1 and"),
    ("trace interval inf", "[recorder]\ntrace_interval = inf\n",
     "recorder.trace_interval: must be between 0.1 and 60 seconds, got inf"),
    ("log source timeout nan", '[[recorder.log_sources]]\nservice = "nova-api"\npath = "/x"\ntimeout = nan\n',
     "recorder.log_sources[0].timeout: must be between 0.5 and 600 seconds, got nan"),
    ("inactive interval negative", "[ui]\ninactive_cloud_interval = -1\n",
     "ui.inactive_cloud_interval: must be between 1 and 3600 seconds, got -1"),
    ("[[clouds]] interval nan", '[[clouds]]\nname = "east"\n[clouds.openstack]\ninterval = nan\n',
     "clouds[east].openstack.interval: must be between 1 and 3600 seconds, got nan"),
]


@pytest.mark.parametrize(("name", "text", "expected"), NUMBERS, ids=[n[0] for n in NUMBERS])
def test_numbers_out_of_bounds_name_the_bounds(tmp_path: Path, name: str, text: str, expected: str) -> None:
    assert expected in _error(_write(tmp_path, text))


def test_bounds_accept_the_edges_and_the_defaults(tmp_path: Path) -> None:
    cfg = load_config(str(_write(tmp_path, "[openstack]\ninterval = 1\ntimeout = 600\n"
                                           "[thresholds]\nfleet_down_fraction = 1\n")), env={})
    assert cfg.openstack.interval == 1.0 and cfg.openstack.timeout == 600.0
    assert cfg.thresholds.fleet_down_fraction == 1.0


def test_config_that_is_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "conf.d"
    folder.mkdir()
    with pytest.raises(ConfigError) as err:
        load_config(str(folder), env={})
    assert str(err.value) == (f"{folder}: (file): is a directory, not a regular file - point --config / "
                              "$STACKTOP_CONFIG at a TOML file")


def test_config_that_is_a_device(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config("/dev/null", env={})
    assert "(file): is a character device, not a regular file" in str(err.value)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui", *args], capture_output=True, text=True, env=_env(),
                          timeout=timeout, stdin=subprocess.DEVNULL)


def _one_line_exit_3(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_cli_fifo_as_config_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "config.toml"
    os.mkfifo(fifo)
    line = _one_line_exit_3(_cli("snapshot", "--config", str(fifo), timeout=30))
    assert line == f"{fifo}: (file): is a FIFO (named pipe), not a regular file - point --config / " \
                   "$STACKTOP_CONFIG at a TOML file"


def test_cli_fifo_as_password_file_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pw"
    os.mkfifo(fifo)
    path = _write(tmp_path, f'[galera]\nnodes = ["db:3306"]\npassword_file = "{fifo}"\n')
    line = _one_line_exit_3(_cli("snapshot", "--config", str(path), timeout=30))
    assert line == f"{path}: galera.password_file: {fifo} is a FIFO (named pipe), not a regular file - point " \
                   "it at a readable file holding only the password"


def test_password_file_that_is_a_directory(tmp_path: Path) -> None:
    path = _write(tmp_path, f'[rabbitmq]\npassword_file = "{tmp_path}"\n')
    assert f"rabbitmq.password_file: {tmp_path} is a directory, not a regular file" in _error(path)


def test_cli_undecodable_password_file(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_bytes(b"\xff\xfe\x00pass\x80word\n")
    path = _write(tmp_path, f'[galera]\nnodes = ["db:3306"]\npassword_file = "{pw}"\n')
    line = _one_line_exit_3(_cli("snapshot", "--json", "--config", str(path)))
    assert line == f"{path}: galera.password_file: {pw} is not UTF-8 text - write the password as UTF-8 " \
                   "text in that file"


def test_cli_credentials_in_url_one_line_exit_3_without_the_password(tmp_path: Path) -> None:
    path = _write(tmp_path, f'[rabbitmq]\nmanagement_url = "http://user:{CANARY}@host:15672"\n')
    proc = _cli("snapshot", "--config", str(path))
    line = _one_line_exit_3(proc)
    assert "rabbitmq.management_url: contains credentials" in line and "password_env" in line
    assert CANARY not in proc.stderr + proc.stdout


@pytest.mark.parametrize(("text", "shown"), [
    ('[openstack]\n"cl\\u001bud" = "x"\n', "openstack.cl\\x1bud: unknown key"),
    ('[openstack]\n"a\\nb" = "x"\n', "openstack.a\\x0ab: unknown key"),
    ('[rabbitmq]\nmanagement_url = "ctl\\u001b[2J\\nx"\n', "'ctl\\x1b[2J\\x0ax' is not a http/https URL"),
    ('["sec\\ntion"]\n', "sec\\x0ation: unknown section"),
])
def test_control_characters_are_shown_escaped_on_one_line(tmp_path: Path, text: str, shown: str) -> None:
    message = _error(_write(tmp_path, text))
    assert shown in message
    assert "\x1b" not in message


def test_cli_control_characters_stay_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, '[openstack]\n"x\\n\\u001b[31my" = 1\n')
    line = _one_line_exit_3(_cli("snapshot", "--config", str(path)))
    assert "openstack.x\\x0a\\x1b[31my: unknown key" in line


def test_expected_size_below_the_node_count_is_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, '[galera]\nnodes = ["a:1", "b:1", "c:1"]\nexpected_size = 2\n')
    cfg = load_config(str(path), env={})
    assert cfg.galera.expected_size == 2
    assert cfg.warnings == (f"{path}: galera.expected_size: 2 is less than the 3 nodes listed - raise it to 3, "
                            "or drop the retired nodes from galera.nodes",)
    same = _write(tmp_path, '[galera]\nnodes = ["a:1", "b:1"]\nexpected_size = 3\n')
    assert load_config(str(same), env={}).warnings == ()


def test_arbitrators_count_in_expected_size(tmp_path: Path) -> None:
    path = _write(tmp_path, '[galera]\nnodes = ["db1:3306", "db2:3306"]\narbitrators = ["garbd1:4567"]\n')
    cfg = load_config(str(path), env={})
    assert cfg.galera.arbitrators == ("garbd1:4567",) and cfg.galera.expected_size == 3 and cfg.warnings == ()
    low = _write(tmp_path, '[galera]\nnodes = ["a:1", "b:1"]\narbitrators = ["g:4567"]\nexpected_size = 2\n')
    assert load_config(str(low), env={}).warnings == (
        f"{low}: galera.expected_size: 2 is less than the 2 nodes + 1 arbitrator(s) listed - raise it to 3, "
        "or drop the retired nodes from galera.nodes",)
