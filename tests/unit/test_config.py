"""Config: lookup, precedence, and one exact line per bad config (FILE: key: problem - fix)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import ConfigError, load_config

GOOD = """
[openstack]
cloud = "prod"
interval = 15

[rabbitmq]
management_url = "http://ctl1:15672"
user = "monitor"
password_env = "RMQ_PW"
vhosts = ["openstack"]

[galera]
nodes = ["db1:3306", "db2:3306", "db3:3306"]
user = "monitor"
password_file = "{pwfile}"

[thresholds]
service_down_time = 20
[thresholds.stuck]
spawning = 30

[recorder]
dir = "/tmp/rec"
"""


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_good_config_parses(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    path = write(tmp_path, GOOD.format(pwfile=pw), 0o644)
    cfg = load_config(str(path), env={"RMQ_PW": "Zq9-rmq-secret"})
    assert cfg.openstack.cloud == "prod" and cfg.openstack.interval == 15.0
    assert cfg.rabbitmq.password.value == "Zq9-rmq-secret" and cfg.rabbitmq.vhosts == ("openstack",)
    assert cfg.galera.password.value == "s3cret" and cfg.galera.expected_size == 3
    assert cfg.thresholds.service_down_time == 20.0
    assert cfg.thresholds.stuck_after("spawning") == 30.0
    assert cfg.thresholds.stuck_after("scheduling") == 120.0
    assert cfg.thresholds.stuck_after("rebooting") == 1800.0
    assert "s3cret" not in repr(cfg) and "Zq9-rmq-secret" not in repr(cfg)


def test_lookup_order_cli_then_env_then_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli = write(tmp_path, '[openstack]\ncloud = "from-cli"\n')
    env_file = tmp_path / "env.toml"
    env_file.write_text('[openstack]\ncloud = "from-env"\n')
    home = tmp_path / "home"
    (home / ".config/stacktop").mkdir(parents=True)
    (home / ".config/stacktop/config.toml").write_text('[openstack]\ncloud = "from-home"\n')
    monkeypatch.setenv("HOME", str(home))
    env = {"STACKTOP_CONFIG": str(env_file)}
    assert load_config(str(cli), env=env).openstack.cloud == "from-cli"
    assert load_config(None, env=env).openstack.cloud == "from-env"
    assert load_config(None, env={}).openstack.cloud == "from-home"


def test_os_cloud_is_the_default_cloud(tmp_path: Path) -> None:
    path = write(tmp_path, "[openstack]\ninterval = 5\n")
    assert load_config(str(path), env={"OS_CLOUD": "envcloud"}).openstack.cloud == "envcloud"


BAD: list[tuple[str, str, int, str]] = [
    ("unknown section", "[rabbitmqq]\n", 0o600,
     "rabbitmqq: unknown section - did you mean 'rabbitmq'?"),
    ("unknown key", "[galera]\nnode = []\n", 0o600, "galera.node: unknown key - did you mean 'nodes'?"),
    ("bad toml", "[openstack\n", 0o600, "(syntax): invalid TOML: "),
    ("interval not a number", '[openstack]\ninterval = "fast"\n', 0o600,
     "openstack.interval: must be a number, got a string - write a number, e.g. interval = 10"),
    ("negative interval", "[rabbitmq]\ninterval = -1\n", 0o600,
     "rabbitmq.interval: must be between 1 and 3600 seconds, got -1 - e.g. interval = 15"),
    ("plain password world-readable", '[rabbitmq]\npassword = "x"\n', 0o644,
     "rabbitmq.password: plain password in a file readable by group or others - chmod 600 {file} "
     "or use password_env"),
    ("two password sources", '[galera]\npassword = "x"\npassword_env = "Y"\n', 0o600,
     "galera.password_env: conflicts with galera.password - keep only one of password, password_env, "
     "password_file"),
    ("missing env var", '[galera]\npassword_env = "NOPE_NOT_SET"\n', 0o600,
     "galera.password_env: environment variable NOPE_NOT_SET is not set - export NOPE_NOT_SET=... before "
     "starting stacktop"),
    ("bad node", '[galera]\nnodes = ["db1"]\n', 0o600,
     "galera.nodes: 'db1' is not host:port - write e.g. nodes = [\"db1:3306\"]"),
    ("nodes not a list", '[galera]\nnodes = "db1:3306"\n', 0o600,
     "galera.nodes: must be a list of strings - write e.g. nodes = [\"a\", \"b\"]"),
    ("bad url", '[rabbitmq]\nmanagement_url = "ctl1:15672"\n', 0o600,
     "rabbitmq.management_url: 'ctl1:15672' is not a http/https URL - write it as http://host:port"),
    ("credentials in amqp url", '[rabbitmq]\namqp_url = "amqp://guest:pw@ctl1:5672/"\n', 0o600,
     "rabbitmq.amqp_url: contains credentials (user:password@) - drop them from the URL; set [rabbitmq] user "
     "and password_env or password_file"),
    ("unknown task state", "[thresholds.stuck]\nspawnin = 10\n", 0o600,
     "thresholds.stuck.spawnin: unknown task_state - did you mean 'spawning'?"),
    ("fraction above 1", "[thresholds]\nfleet_down_fraction = 2\n", 0o600,
     "thresholds.fleet_down_fraction: must be between 0.01 and 1, got 2 - e.g. fleet_down_fraction = 0.5"),
    ("section not a table", 'openstack = "prod"\n', 0o600,
     "openstack: must be a table, got a string - write it as [openstack]"),
    ("expected_size zero", '[galera]\nnodes = ["a:1"]\nexpected_size = 0\n', 0o600,
     "galera.expected_size: must be a positive integer, got 0 - set it to the number of members the cluster "
     "should have (data nodes + arbitrators)"),
    ("arbitrator not host:port", '[galera]\nnodes = ["a:1", "b:1"]\narbitrators = ["garbd"]\n', 0o600,
     "galera.arbitrators: 'garbd' is not host:port - write the arbitrator's group address, e.g. "
     'arbitrators = ["garbd1:4567"]'),
    ("arbitrator with credentials", '[galera]\nnodes = ["a:1"]\narbitrators = ["u:pw@g:4567"]\n', 0o600,
     "galera.arbitrators[0]: contains credentials (user:password@) - write host:port only; set [galera] user "
     "and password_env or password_file"),
    ("arbitrator also a node", '[galera]\nnodes = ["a:1", "b:1"]\narbitrators = ["b:1"]\n', 0o600,
     "galera.arbitrators: 'b:1' is also in galera.nodes - a member is either a data node (SQL host:port) or an "
     "arbitrator (garbd, no SQL), not both"),
    ("arbitrators without nodes", '[galera]\narbitrators = ["g:4567"]\n', 0o600,
     "galera.arbitrators: is set but nodes is empty - list the data nodes in nodes: an arbitrator has no SQL "
     "port, it is seen through them"),
    ("arbitrators not a list", '[galera]\nnodes = ["a:1"]\narbitrators = 1\n', 0o600,
     'galera.arbitrators: must be a list of strings - write e.g. arbitrators = ["a", "b"]'),
    ("node listed twice", '[galera]\nnodes = ["a:1", "a:1"]\n', 0o600,
     "galera.nodes: 'a:1' is listed twice - list each member once"),
    ("missing password file", '[galera]\npassword_file = "/nonexistent/pw"\n', 0o600,
     "galera.password_file: cannot read /nonexistent/pw: No such file or directory - point it at a readable "
     "file holding only the password"),
    ("empty cloud", '[openstack]\ncloud = ""\n', 0o600,
     "openstack.cloud: is empty - remove the key or give it a value"),
]


@pytest.mark.parametrize(("name", "text", "mode", "expected"), BAD, ids=[b[0] for b in BAD])
def test_bad_config_exact_message(tmp_path: Path, name: str, text: str, mode: int, expected: str) -> None:
    path = write(tmp_path, text, mode)
    with pytest.raises(ConfigError) as err:
        load_config(str(path), env={})
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert expected.format(file=path) in message
    assert "\n" not in message


def test_missing_explicit_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(str(tmp_path / "nope.toml"), env={})
    assert str(err.value) == (f"{tmp_path / 'nope.toml'}: (file): does not exist - create it from "
                              "config.example.toml or fix --config / $STACKTOP_CONFIG")


@pytest.mark.parametrize(("name", "text", "mode", "expected"), BAD[:6], ids=[b[0] for b in BAD[:6]])
def test_cli_snapshot_bad_config_one_line_exit_3(tmp_path: Path, name: str, text: str, mode: int,
                                                 expected: str) -> None:
    path = write(tmp_path, text, mode)
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--json", "--config", str(path)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{path}: ") and expected.format(file=path) in lines[0]
    assert "Traceback" not in proc.stderr


def test_example_config_is_valid(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "config.example.toml"
    cfg = load_config(str(example), env={"RABBITMQ_PASSWORD": "x", "GALERA_PASSWORD": "y"})
    assert cfg.rabbitmq.management_url and cfg.galera.nodes
