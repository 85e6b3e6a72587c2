"""[[clouds]]: several clouds in one config, each with its own sections; one exact line per bad entry."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui.config import CloudConfig, ConfigError, load_config

TWO = """
[ui]
inactive_cloud_interval = 90

[[clouds]]
name = "east"
[clouds.openstack]
cloud = "prod-east"
interval = 12
[clouds.rabbitmq]
management_url = "http://east-ctl:15672"
password_env = "EAST_RMQ"
[clouds.galera]
nodes = ["east-db1:3306", "east-db2:3306", "east-db3:3306"]
password_env = "EAST_DB"

[[clouds]]
name = "west"
[clouds.rabbitmq]
management_url = "http://west-ctl:15672"
interval = 20
"""


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_two_clouds_parse_in_order_with_their_own_sections(tmp_path: Path) -> None:
    env = {"EAST_RMQ": "Kq7-east-rmq", "EAST_DB": "Kq7-east-db", "OS_CLOUD": "from-env"}
    cfg = load_config(str(write(tmp_path, TWO)), env=env)
    assert [c.name for c in cfg.all_clouds()] == ["east", "west"] and cfg.several_clouds
    east, west = cfg.clouds
    assert east.openstack.cloud == "prod-east" and east.openstack.interval == 12.0
    assert east.rabbitmq.management_url == "http://east-ctl:15672"
    assert east.rabbitmq.password.value == "Kq7-east-rmq" and east.galera.expected_size == 3
    # a [[clouds]] entry without [clouds.openstack] cloud has no OpenStack panes ($OS_CLOUD is not its default)
    assert west.openstack.cloud is None
    assert west.rabbitmq.interval == 20.0 and not west.galera.configured
    # the active sections are the first cloud's; for_cloud swaps them
    assert cfg.openstack == east.openstack and cfg.galera == east.galera
    as_west = cfg.for_cloud("west")
    assert as_west.rabbitmq == west.rabbitmq and as_west.galera == west.galera and as_west.clouds == cfg.clouds
    assert cfg.ui.inactive_cloud_interval == 90.0
    assert set(cfg.secrets()) >= {"Kq7-east-rmq", "Kq7-east-db"}
    with pytest.raises(KeyError):
        cfg.for_cloud("north")


def test_single_cloud_form_is_one_cloud(tmp_path: Path) -> None:
    cfg = load_config(str(write(tmp_path, '[openstack]\ncloud = "prod"\n[ui]\n')), env={})
    assert cfg.clouds == () and not cfg.several_clouds
    assert cfg.all_clouds() == (CloudConfig("prod", cfg.openstack, cfg.rabbitmq, cfg.galera),)
    assert cfg.for_cloud("prod") == cfg
    assert cfg.ui.inactive_cloud_interval == 60.0


BAD: list[tuple[str, str, str]] = [
    ("missing name", '[[clouds]]\n[clouds.openstack]\ncloud = "a"\n',
     'clouds[0].name: is missing - name the cloud, e.g. name = "prod"'),
    ("duplicate name", '[[clouds]]\nname = "a"\n[[clouds]]\nname = "b"\n[[clouds]]\nname = "a"\n',
     "clouds[2].name: 'a' is used twice - give every [[clouds]] entry its own name"),
    ("name with a space", '[[clouds]]\nname = "prod east"\n',
     "clouds[0].name: 'prod east' has characters other than letters, digits, - _ . - use a short word, "
     'e.g. name = "prod-east" (it is typed in :cloud NAME)'),
    ("name not a string", "[[clouds]]\nname = 3\n",
     'clouds[0].name: must be a string, got an integer - quote it: name = "..."'),
    ("unknown key in an entry", '[[clouds]]\nname = "a"\nrabbit = {}\n',
     "clouds[0].rabbit: unknown key - did you mean 'rabbitmq'?"),
    ("unknown key in a cloud's section", '[[clouds]]\nname = "a"\n[clouds.galera]\nnode = []\n',
     "clouds[a].galera.node: unknown key - did you mean 'nodes'?"),
    ("bad value in a cloud's section", '[[clouds]]\nname = "a"\n[clouds.rabbitmq]\ninterval = "fast"\n',
     "clouds[a].rabbitmq.interval: must be a number, got a string - write a number, e.g. interval = 15"),
    ("bad node in a cloud", '[[clouds]]\nname = "a"\n[[clouds]]\nname = "b"\n[clouds.galera]\nnodes = ["db1"]\n',
     "clouds[b].galera.nodes: 'db1' is not host:port - write e.g. nodes = [\"db1:3306\"]"),
    ("cloud section not a table", '[[clouds]]\nname = "a"\nopenstack = "x"\n',
     "clouds[a].openstack: must be a table, got a string - write it as [clouds.openstack] in its [[clouds]] "
     "entry"),
    ("clouds not an array of tables", 'clouds = ["a", "b"]\n',
     'clouds: must be an array of tables, got a list - write each cloud as [[clouds]] with name = "prod" and '
     "its [clouds.openstack] ..."),
    ("top-level section beside [[clouds]]", '[rabbitmq]\nuser = "x"\n[[clouds]]\nname = "a"\n',
     "rabbitmq: conflicts with [[clouds]] - move [rabbitmq] into each [[clouds]] entry as [clouds.rabbitmq]"),
    ("unknown ui key", "[ui]\ninactive_interval = 5\n",
     "ui.inactive_interval: unknown key - did you mean 'inactive_cloud_interval'?"),
    ("ui interval not positive", "[ui]\ninactive_cloud_interval = 0\n",
     "ui.inactive_cloud_interval: must be between 1 and 3600 seconds, got 0 - e.g. inactive_cloud_interval = 60"),
    ("plain password of a cloud world-readable", '[[clouds]]\nname = "a"\n[clouds.galera]\npassword = "x"\n',
     "clouds[a].galera.password: plain password in a file readable by group or others - chmod 600 {file} or use "
     "password_env"),
]


@pytest.mark.parametrize(("name", "text", "expected"), BAD, ids=[b[0] for b in BAD])
def test_bad_clouds_exact_message(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = write(tmp_path, text, 0o644)
    with pytest.raises(ConfigError) as err:
        load_config(str(path), env={})
    assert str(err.value) == f"{path}: {expected.format(file=path)}"


def test_cli_duplicate_cloud_name_one_line_exit_3(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clouds]]\nname = "a"\n[[clouds]]\nname = "a"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    proc = subprocess.run([sys.executable, "-m", "tui", "--config", str(path)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr == (f"{path}: clouds[1].name: 'a' is used twice - give every [[clouds]] entry its own "
                           "name\n")


def test_cli_cloud_that_is_no_clouds_entry_one_line_exit_3(tmp_path: Path) -> None:
    path = write(tmp_path, '[[clouds]]\nname = "east"\n[[clouds]]\nname = "west"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("STACKTOP_CONFIG", "OS_CLOUD")}
    proc = subprocess.run([sys.executable, "-m", "tui", "snapshot", "--config", str(path), "--cloud", "north"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr == f"{path}: --cloud: 'north' is not a [[clouds]] name - use one of east, west\n"
