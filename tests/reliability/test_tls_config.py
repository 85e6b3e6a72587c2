"""[openstack], [rabbitmq] and [galera] cacert / insecure (and [galera] tls): parsed, validated, one-line
errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.config import ConfigError, parse_config

SECTIONS = ("openstack", "rabbitmq", "galera")


def parse(section: str, values: dict[str, object]):  # type: ignore[no-untyped-def]
    return parse_config({section: values}, file="c.toml", mode=0o600, env={})


@pytest.mark.parametrize("section", SECTIONS)
def test_defaults_verify(section: str) -> None:
    sec = getattr(parse(section, {}), section)
    assert sec.cacert is None and sec.insecure is False


def test_galera_tls_off_by_default_on_with_any_tls_key(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    assert parse("galera", {}).galera.uses_tls is False
    for values in ({"tls": True}, {"cacert": str(ca)}, {"insecure": True}):
        assert parse("galera", values).galera.uses_tls is True, values


@pytest.mark.parametrize("section", SECTIONS)
def test_cacert_and_insecure(section: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    assert getattr(parse(section, {"cacert": str(ca)}), section).cacert == str(ca)
    assert getattr(parse(section, {"insecure": True}), section).insecure is True


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize(("values", "key"), [
    ({"cacert": "/nonexistent/ca.pem"}, "cacert"),
    ({"insecure": "yes"}, "insecure"),
    ({"insecure": 1}, "insecure"),
])
def test_bad_values_name_the_key(section: str, values: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(section, values)
    assert err.value.key == f"{section}.{key}" and "\n" not in str(err.value)


def test_galera_tls_must_be_a_boolean() -> None:
    with pytest.raises(ConfigError) as err:
        parse("galera", {"tls": "on"})
    assert err.value.key == "galera.tls" and "\n" not in str(err.value)


@pytest.mark.parametrize("section", SECTIONS)
def test_cacert_with_insecure_is_refused(section: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    with pytest.raises(ConfigError) as err:
        parse(section, {"cacert": str(ca), "insecure": True})
    assert err.value.key == f"{section}.insecure" and "\n" not in str(err.value)


@pytest.mark.parametrize("section", SECTIONS)
def test_each_cloud_entry_checks_its_own_tls_keys(section: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    data = {"clouds": [{"name": "prod", section: {"cacert": str(ca)}},
                       {"name": "lab", section: {"cacert": str(ca), "insecure": True}}]}
    with pytest.raises(ConfigError) as err:
        parse_config(data, file="c.toml", mode=0o600, env={})
    assert err.value.key == f"clouds[lab].{section}.insecure", err.value.key
