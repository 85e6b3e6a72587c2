"""The TLS profile (testcloud/tls.sh) reached by an address its certificate does not name: its certificate
(tls/server.pem) names IP 127.0.0.1 and DNS localhost; a plain TCP relay on 127.0.0.2 (tests.testbed.tcp_alias)
puts Keystone's HAProxy frontend, the RabbitMQ management frontend on 15671 and the Galera node requiring TLS on
3341 under that other address, TLS untouched. Each source's error says "TLS certificate names 127.0.0.1,
localhost, not 127.0.0.2" and which name to use where; nothing is read without the name check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509

from tests.integration.tls.test_tls_real import clouds_yaml, errors, snapshot
from tests.testbed.tcp_alias import TcpAlias
from tests.testbed.tls import API_PORTS, GALERA_NODE, MGMT_URL, TlsTestbed

pytestmark = pytest.mark.integration


def held_names(bed: TlsTestbed) -> list[str]:
    """The subjectAltNames of the profile's server certificate, in their order (IP and DNS)."""
    cert = x509.load_pem_x509_certificate((bed.folder / "server.pem").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return [str(name.value) for name in san if isinstance(name, (x509.IPAddress, x509.DNSName))]


@pytest.fixture(scope="module")
def aliases(tls_testbed: TlsTestbed) -> Iterator[dict[str, TcpAlias]]:
    """Keystone (identity), the RabbitMQ management API and the Galera node, each under 127.0.0.2."""
    galera_host, galera_port = GALERA_NODE.rsplit(":", 1)
    made = {"identity": TcpAlias(("127.0.0.1", API_PORTS["identity"])),
            "rabbitmq": TcpAlias(("127.0.0.1", int(MGMT_URL.rsplit(":", 1)[1]))),
            "galera": TcpAlias((galera_host, int(galera_port)))}
    yield made
    for alias in made.values():
        alias.close()


def test_the_profile_certificate_lacks_the_alias(tls_testbed: TlsTestbed) -> None:
    """What the tests below rely on: the certificate names 127.0.0.1 and localhost, not 127.0.0.2."""
    assert sorted(held_names(tls_testbed)) == ["127.0.0.1", "localhost"]


def test_every_source_says_which_names_the_certificate_holds(tmp_path: Path, tls_testbed: TlsTestbed,
                                                             aliases: dict[str, TcpAlias]) -> None:
    keystone = f"https://{aliases['identity'].address}/v3"
    mgmt = f"https://{aliases['rabbitmq'].address}"
    node = aliases["galera"].address
    yaml_path = clouds_yaml(tls_testbed, tmp_path / "clouds.yaml", auth_url=keystone)
    report = snapshot(tls_testbed.config(tmp_path / "alias.toml", clouds_file=yaml_path, mgmt_url=mgmt,
                                         galera_node=node))
    found = errors(report)
    names = ", ".join(held_names(tls_testbed))
    said = f"TLS certificate names {names}, not 127.0.0.2 (certificate verify failed: "
    where = {"services": "the catalog or auth_url of cloud", "instances": "the catalog or auth_url of cloud",
             "rabbitmq": "[rabbitmq] management_url", "galera": "[galera] nodes"}
    endpoints = {"services": keystone, "instances": keystone, "rabbitmq": mgmt, "galera": node}
    for name, key in where.items():
        error = found[name] or ""
        assert said in error, (name, error)
        assert endpoints[name] in error, (name, error)
        assert f"use 127.0.0.1 (a name the certificate holds) in {key}" in error, (name, error)
        assert "\n" not in error and "not trusted" not in error, (name, error)
    for name in ("instances", "rabbitmq", "galera"):
        assert not report["sources"][name]["ok"], name  # never read without the name check
    assert report["data"]["galera"] is None, report["data"]["galera"]


def test_the_aliases_reach_the_profile_itself(tmp_path: Path, tls_testbed: TlsTestbed,
                                              aliases: dict[str, TcpAlias]) -> None:
    """What makes the test above about the name alone: the RabbitMQ and Galera aliases with verification off
    (insecure = true, explicit) read the profile's broker and node through the relays."""
    path = tls_testbed.config(tmp_path / "insecure.toml", mgmt_url=f"https://{aliases['rabbitmq'].address}",
                              galera_node=aliases["galera"].address, galera_insecure=True)
    text = path.read_text().replace(f'cacert = "{tls_testbed.ca}"\nuser = "guest"', 'insecure = true\nuser = "guest"')
    path.write_text(text)
    report = snapshot(path)
    for name in ("rabbitmq", "galera"):
        assert report["sources"][name]["ok"], (name, report["sources"][name])
    [read] = report["data"]["galera"]["nodes"]
    assert read["address"] == aliases["galera"].address and read["cluster_status"] == "Primary", read
    assert any(q["vhost"] == "openstack" for q in report["data"]["rabbitmq"]["queues"])
