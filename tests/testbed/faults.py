"""Test tooling for the fault rows of tests/reliability: TLS certificates and misbehaving AMQP endpoints.

    kit = TlsKit()                          # a CA, a certificate it signed for 127.0.0.1, a self-signed one
    kit.serve(faults, "nova")               # tui.sim.faults.Faults: that endpoint is https now ("tls" swaps)
    AmqpEndpoint("hang" | "garbage" | "tls")  # a broker that accepts and never speaks, speaks nonsense, or
                                              # shows an untrusted certificate

The HTTP fault catalogue itself (Faults, FAULTS, FaultyGaleraConnector) is tui.sim.faults: bench/soak.py uses it.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import ipaddress
import ssl
import tempfile
from pathlib import Path
from typing import Any

from tui.sim.faults import Faults, listener_name, restart_listener
from tui.sim.http import Listener, _Loop


# ---------------------------------------------------------------------------------------------------- TLS
class TlsKit:
    """A CA (what the client is told to trust: `ca_file`), a server certificate it signed for 127.0.0.1 /
    localhost (`trusted`), and a self-signed one for the same names that nobody trusts (`untrusted`)."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.dir = Path(directory or tempfile.mkdtemp(prefix="stacktop-tls-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        ca_key, ca_cert = _make_cert("stacktop-sim test CA", ca=True)
        good_key, good_cert = _make_cert("127.0.0.1", issuer=(ca_key, ca_cert))
        bad_key, bad_cert = _make_cert("127.0.0.1")  # self-signed
        self.ca_file = self.dir / "ca.pem"
        self.ca_file.write_bytes(_pem(ca_cert))
        self.trusted = self._context("good", good_key, good_cert)
        self.untrusted = self._context("self-signed", bad_key, bad_cert)

    def _context(self, name: str, key: Any, cert: Any) -> ssl.SSLContext:
        from cryptography.hazmat.primitives import serialization

        cert_file, key_file = self.dir / f"{name}.pem", self.dir / f"{name}.key"
        cert_file.write_bytes(_pem(cert))
        key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key_file.chmod(0o600)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert_file, key_file)
        return ctx

    def serve(self, faults: Faults, service: str) -> str:
        """Make one service's endpoint https (trusted certificate) on its port; returns its new base URL.
        For keystone, clouds.yaml's auth_url moves to https too and gets `cacert` (rewrite_clouds_yaml)."""
        name = listener_name(service)
        listener: Listener = faults.demo.listeners[name]
        faults.tls[name] = self
        restart_listener(listener, self.trusted)
        return listener.base

    def rewrite_clouds_yaml(self, demo: Any, *, cacert: bool = True) -> None:
        """Point clouds.yaml at the (now https) auth_url and, with cacert, at the kit's CA."""
        path = Path(demo.clouds_file)
        text = path.read_text()
        lines = [ln for ln in text.splitlines() if not ln.strip().startswith(("cacert:", "auth_url:"))]
        out = []
        for ln in lines:
            out.append(ln)
            if ln.strip() == "auth:":
                out.append(f"      auth_url: {demo.auth_url}")
            if ln.strip().startswith("region_name:") and cacert:
                out.append(f"    cacert: {self.ca_file}")
        path.write_text("\n".join(out) + "\n")


def _pem(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(cert.public_bytes(serialization.Encoding.PEM))


def _make_cert(common_name: str, *, ca: bool = False, issuer: tuple[Any, Any] | None = None) -> tuple[Any, Any]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    issuer_key, issuer_cert = issuer if issuer else (key, None)
    now = _dt.datetime.now(_dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(name)
               .issuer_name(issuer_cert.subject if issuer_cert is not None else name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - _dt.timedelta(minutes=5)).not_valid_after(now + _dt.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
            decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        builder = builder.add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                                        critical=False)
    return key, builder.sign(issuer_key, hashes.SHA256())


# --------------------------------------------------------------------------------------------------- AMQP
class AmqpEndpoint:
    """A TCP endpoint on 127.0.0.1 that misbehaves like a broken AMQP broker: `hang` accepts and never speaks,
    `garbage` answers the protocol header with nonsense, `tls` shows an untrusted certificate (amqps)."""

    def __init__(self, kind: str, kit: TlsKit | None = None, tls: ssl.SSLContext | None = None) -> None:
        """tls: serve `hang` / `garbage` behind this TLS context (amqps://), e.g. a TlsKit's trusted one."""
        if kind not in ("hang", "garbage", "tls"):
            raise ValueError(f"unknown AMQP fault {kind!r}")
        self.kind = kind
        self._ssl = (kit or TlsKit()).untrusted if kind == "tls" else tls
        self._loop = _Loop.get("sim")
        self._server: asyncio.base_events.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    @property
    def url(self) -> str:
        return f"{'amqps' if self._ssl is not None else 'amqp'}://127.0.0.1:{self.port}/"

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", 0, ssl=self._ssl)
        return int(self._server.sockets[0].getsockname()[1])

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            if self.kind == "garbage":
                await reader.read(8)
                writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\nthis is not AMQP")
                await writer.drain()
            else:
                while self._server is not None:
                    await asyncio.sleep(0.05)
        except (ConnectionError, OSError, ssl.SSLError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    def stop(self) -> None:
        async def _stop() -> None:
            server, self._server = self._server, None
            if server is not None:
                server.close()
            for w in list(self._writers):
                w.close()

        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(10)
