"""A TLS name mismatch is told as such, with the names the certificate does hold: a loopback HTTPS server (the
RabbitMQ management API, Keystone for both OpenStack clients) and a MySQL-protocol endpoint (a Galera node: TLS
inside its own protocol) whose certificate (from a CA made here) names 127.0.0.1 only, reached as `localhost`
with that CA trusted."""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.testbed.mysql_wire import MySQLWire
from tui.collectors.galera_sql import node_certificate_names, pymysql_connector, tls_context
from tui.collectors.rabbitmq import RabbitMQCollector
from tui.config import OpenStackConfig
from tui.errors import SourceError
from tui.tlserror import certificate_names, describe_verify


def _cert(name: str, key: ec.EllipticCurvePrivateKey, issuer: tuple[ec.EllipticCurvePrivateKey, x509.Certificate]
          | None, san: list[x509.GeneralName] | None) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject)
               .issuer_name(issuer[1].subject if issuer else subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True))
    if san is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName(san), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    else:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
    return builder.sign(issuer[0] if issuer else key, hashes.SHA256())


class _Answer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"[]"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


def ip_only_context(tmp_path: Path) -> ssl.SSLContext:
    """A server context whose certificate names IP 127.0.0.1 only, signed by tmp_path/ca.pem (written here)."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = _cert("stacktop test CA", ca_key, None, None)
    cert = _cert("127.0.0.1", key, (ca_key, ca), [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    pem = serialization.Encoding.PEM
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp_path / "server.pem").write_bytes(cert.public_bytes(pem))
    (tmp_path / "server.key").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                            serialization.NoEncryption()))
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(tmp_path / "server.pem", tmp_path / "server.key")
    return ctx


@pytest.fixture
def ip_only_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """(port, CA file): HTTPS on 127.0.0.1:port with a certificate naming IP 127.0.0.1 only."""
    ctx = ip_only_context(tmp_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], tmp_path / "ca.pem"
    finally:
        server.shutdown()
        server.server_close()


def test_certificate_names_reads_the_names_without_checking_the_name(ip_only_server: tuple[int, Path]) -> None:
    port, ca = ip_only_server
    assert certificate_names("localhost", port, str(ca)) == ["127.0.0.1"]
    assert certificate_names("localhost", port, None) == []  # an untrusted chain is not read


async def test_rabbitmq_says_which_name_the_certificate_holds(ip_only_server: tuple[int, Path]) -> None:
    port, ca = ip_only_server
    c = RabbitMQCollector(f"https://localhost:{port}", "monitor", "pw", vhosts=["/"], cacert=str(ca), timeout=10)
    try:
        with pytest.raises(SourceError) as caught:
            await c.collect()
    finally:
        await c.aclose()
    line = str(caught.value)
    assert "TLS certificate names 127.0.0.1, not localhost" in line, line
    assert "use 127.0.0.1 (a name the certificate holds) in [rabbitmq] management_url" in line
    assert "\n" not in line


def test_describe_verify_without_names_keeps_the_general_line() -> None:
    reason = "Hostname mismatch, certificate is not valid for 'localhost'"
    assert describe_verify(reason, "trust it", "[x] url").startswith("TLS certificate is for another name")
    named = describe_verify(reason, "trust it", "[x] url", names=["10.0.0.5", "db1"], used="localhost")
    assert named.startswith("TLS certificate names 10.0.0.5, db1, not localhost (certificate verify failed: ")


@pytest.fixture
def ip_only_node(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """(port, CA file): a MySQL-protocol node offering TLS with a certificate naming IP 127.0.0.1 only."""
    wire = MySQLWire(lambda sql: [("wsrep_cluster_status", "Primary")], certificate=ip_only_context(tmp_path))
    try:
        yield wire.port, tmp_path / "ca.pem"
    finally:
        wire.close()


def test_galera_node_names_are_read_through_the_ssl_request(ip_only_node: tuple[int, Path]) -> None:
    port, ca = ip_only_node
    assert node_certificate_names(f"localhost:{port}", str(ca), 5.0) == ["127.0.0.1"]


def test_galera_says_which_name_the_certificate_holds(ip_only_node: tuple[int, Path]) -> None:
    port, ca = ip_only_node
    connect = pymysql_connector(ssl=tls_context(str(ca)), cafile=str(ca))
    with pytest.raises(ValueError) as caught:
        connect(f"localhost:{port}", "monitor", "pw", 5.0)
    line = str(caught.value)
    assert line.startswith("TLS certificate names 127.0.0.1, not localhost (certificate verify failed: "), line
    assert line.endswith("use 127.0.0.1 (a name the certificate holds) in [galera] nodes")


@pytest.mark.parametrize("client", ["openstacksdk", "light"])
def test_openstack_says_which_name_the_certificate_holds(ip_only_server: tuple[int, Path], tmp_path: Path,
                                                         client: str) -> None:
    """Keystone reached as localhost, its certificate naming 127.0.0.1 only: both OpenStack clients say so."""
    from tui.openstack.client import connect
    from tui.openstack.triage import triage_client

    port, ca = ip_only_server
    clouds = tmp_path / "clouds.yaml"
    clouds.write_text(f"""clouds:
  named:
    auth:
      auth_url: https://localhost:{port}/v3
      username: admin
      password: pw
      project_name: admin
      user_domain_name: Default
      project_domain_name: Default
    region_name: RegionOne
    identity_api_version: 3
    cacert: {ca}
""")
    clouds.chmod(0o600)
    cfg = OpenStackConfig(cloud="named", clouds_file=str(clouds), timeout=10.0)
    c = connect(cfg) if client == "openstacksdk" else triage_client(cfg, handover_after_s=1e4)
    assert c is not None
    try:
        with pytest.raises(SourceError) as caught:
            c.compute_services()
    finally:
        c.close()
    line = str(caught.value)
    assert "TLS certificate names 127.0.0.1, not localhost (certificate verify failed: " in line, line
    assert "use 127.0.0.1 (a name the certificate holds) in the catalog or auth_url of cloud 'named'" in line
