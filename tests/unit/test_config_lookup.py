"""Where the config comes from when none is named: $STACKTOP_CONFIG, $XDG_CONFIG_HOME/stacktop,
~/.config/stacktop, /etc/stacktop (the first that exists); and a sourced openrc's OS_* variables as the cloud
when nothing names one (openstacksdk's `envvars` cloud, as the openstack CLI reads them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tui.config
from tui.config import find_config_path, load_config

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, cloud: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[openstack]\ncloud = "{cloud}"\n')
    return path


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """HOME, XDG_CONFIG_HOME and the system folder, all under tmp_path, none holding a config yet."""
    home, xdg, system = tmp_path / "home", tmp_path / "xdg", tmp_path / "etc" / "stacktop" / "config.toml"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(tui.config, "SYSTEM_PATH", system)
    return {"home": home / ".config" / "stacktop" / "config.toml", "xdg": xdg / "stacktop" / "config.toml",
            "system": system, "xdg_dir": xdg}


def test_xdg_config_home_comes_before_home(homes: dict[str, Path]) -> None:
    _write(homes["home"], "from-home")
    _write(homes["xdg"], "from-xdg")
    env = {"XDG_CONFIG_HOME": str(homes["xdg_dir"])}
    assert find_config_path(None, env) == (homes["xdg"], False)
    assert load_config(None, env).openstack.cloud == "from-xdg"


def test_home_then_system(homes: dict[str, Path]) -> None:
    env = {"XDG_CONFIG_HOME": str(homes["xdg_dir"])}  # set, but holding no config
    _write(homes["system"], "from-etc")
    assert load_config(None, env).openstack.cloud == "from-etc"
    _write(homes["home"], "from-home")
    assert load_config(None, env).openstack.cloud == "from-home"


def test_stacktop_config_comes_first(homes: dict[str, Path], tmp_path: Path) -> None:
    _write(homes["xdg"], "from-xdg")
    named = _write(tmp_path / "named.toml", "named")
    env = {"XDG_CONFIG_HOME": str(homes["xdg_dir"]), "STACKTOP_CONFIG": str(named)}
    assert load_config(None, env).openstack.cloud == "named"


OPENRC = {"OS_AUTH_URL": "https://keystone.example:5000/v3", "OS_USERNAME": "admin", "OS_PASSWORD": "s3cret",
          "OS_PROJECT_NAME": "admin", "OS_USER_DOMAIN_NAME": "Default", "OS_PROJECT_DOMAIN_NAME": "Default"}


def test_a_sourced_openrc_is_the_cloud_when_none_is_named(homes: dict[str, Path]) -> None:
    assert load_config(None, dict(OPENRC)).openstack.cloud == "envvars"
    assert load_config(None, {**OPENRC, "OS_CLOUD": "prod"}).openstack.cloud == "prod"
    _write(homes["home"], "from-file")
    assert load_config(None, dict(OPENRC)).openstack.cloud == "from-file"
    assert load_config(None, {}).openstack.cloud == "from-file"


def test_no_openrc_no_cloud(homes: dict[str, Path]) -> None:
    assert load_config(None, {}).openstack.cloud is None


def test_config_example_and_path_commands(homes: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(homes["home"].parents[2])}
    env.pop("STACKTOP_CONFIG", None)
    env.pop("XDG_CONFIG_HOME", None)
    example = subprocess.run([sys.executable, "-m", "tui", "config", "example"], capture_output=True, text=True,
                             env=env, cwd="/", timeout=120)
    assert example.returncode == 0
    assert example.stdout == (ROOT / "config.example.toml").read_text(encoding="utf-8")
    where = subprocess.run([sys.executable, "-m", "tui", "config", "path"], capture_output=True, text=True,
                           env=env, cwd="/", timeout=120)
    assert where.returncode == 0
    system = Path("/etc/stacktop/config.toml")
    assert where.stdout.splitlines()[0] == (str(system) if system.exists() else "(none: no config file found)")
    assert "/etc/stacktop/config.toml" in where.stdout
