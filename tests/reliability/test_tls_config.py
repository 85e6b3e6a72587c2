"""[openstack] cacert and insecure: parsed, validated, one-line errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.config import ConfigError, parse_config


def parse(openstack: dict[str, object]):  # type: ignore[no-untyped-def]
    return parse_config({"openstack": openstack}, file="c.toml", mode=0o600, env={})


def test_defaults_verify(tmp_path: Path) -> None:
    cfg = parse({"cloud": "x"})
    assert cfg.openstack.cacert is None and cfg.openstack.insecure is False


def test_cacert_and_insecure(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    assert parse({"cacert": str(ca)}).openstack.cacert == str(ca)
    assert parse({"insecure": True}).openstack.insecure is True


@pytest.mark.parametrize(("section", "key"), [
    ({"cacert": "/nonexistent/ca.pem"}, "openstack.cacert"),
    ({"insecure": "yes"}, "openstack.insecure"),
    ({"insecure": 1}, "openstack.insecure"),
])
def test_bad_values_name_the_key(section: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(section)
    assert err.value.key == key and "\n" not in str(err.value)


def test_cacert_with_insecure_is_refused(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    with pytest.raises(ConfigError) as err:
        parse({"cacert": str(ca), "insecure": True})
    assert err.value.key == "openstack.insecure"
