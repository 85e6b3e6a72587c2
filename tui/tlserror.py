"""One wording for a failed certificate check, whichever source met it: OpenSSL's own reason after
"certificate verify failed: " (so the user can search for it), what it means, and the fix for that reason.

    TLS certificate not trusted (certificate verify failed: unable to get local issuer certificate) - set ...
    TLS certificate expired (certificate verify failed: certificate has expired) - the server must get a ...

The reason comes from ssl.SSLCertVerificationError when the exception chain has one, else from the text a
library wrapped it in (keystoneauth and httpx repeat OpenSSL's message)."""

from __future__ import annotations

import re
import socket
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path

_WITH_SSL_C = re.compile(r"certificate verify failed: (.*?)\s*\(_ssl\.c:\d+\)", re.IGNORECASE)
_BARE = re.compile(r"certificate verify failed: ([^'\")\]]+)", re.IGNORECASE)
_FLAG = re.compile(r"certificate verify failed|CERTIFICATE_VERIFY_FAILED", re.IGNORECASE)


def verify_reason(exc: BaseException | str) -> str | None:
    """OpenSSL's reason for a failed certificate check in exc (its chain, then its text), "" when the check failed
    without a reason given, None when exc is no certificate check failure."""
    if isinstance(exc, BaseException):
        seen: BaseException | None = exc
        for _ in range(10):
            if seen is None:
                break
            if isinstance(seen, ssl.SSLCertVerificationError):
                return str(seen.verify_message or "").strip().rstrip(".")
            seen = getattr(seen, "original_exception", None) or seen.__cause__ or seen.__context__
    text = " ".join(str(exc).split())
    m = _WITH_SSL_C.search(text) or _BARE.search(text)
    if m:
        return m.group(1).strip().rstrip(".")
    return "" if _FLAG.search(text) else None


def ca_file_problem(cacert: str) -> str | None:
    """What is wrong with a CA bundle for the TLS clients here ("does not exist", "holds no CA certificate
    OpenSSL can load (NO_CERTIFICATE_OR_CRL_FOUND)"), or None when OpenSSL loads it."""
    path = Path(cacert).expanduser()
    if not path.is_file():
        return "does not exist"
    try:
        ssl.create_default_context(cafile=str(path))
    except (ssl.SSLError, OSError, ValueError) as exc:
        why = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or type(exc).__name__
        return f"holds no CA certificate OpenSSL can load ({why})"
    return None


def is_name_mismatch(reason: str) -> bool:
    """Whether OpenSSL's reason says the certificate is valid, but for other names than the one used."""
    low = reason.lower()
    return "mismatch" in low or "doesn't match" in low or "not valid for" in low


def certificate_names(host: str, port: int, cafile: str | None = None, timeout: float = 5.0,
                      starttls: Callable[[socket.socket], None] | None = None) -> list[str]:
    """The names the server's certificate holds (its DNS and IP subjectAltNames, else its common name), read by a
    TLS handshake that checks the chain against cafile (else the system's CAs) but not the name, and sends
    nothing after it. starttls: what the protocol says before its handshake (MySQL's SSL request). [] when that
    handshake fails too."""
    ctx = ssl.create_default_context(cafile=str(Path(cafile).expanduser()) if cafile else None)
    ctx.check_hostname = False
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            if starttls is not None:
                starttls(raw)
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                cert = tls.getpeercert() or {}
    except (OSError, ValueError):
        return []
    names = [str(pair[1]) for pair in cert.get("subjectAltName", ()) if pair[0] in ("DNS", "IP Address")]
    if not names:
        names = [str(pair[1]) for rdn in cert.get("subject", ()) for pair in rdn if pair[0] == "commonName"]
    return list(dict.fromkeys(names))


def describe_verify(reason: str, trust_fix: str, host_key: str, *, names: Sequence[str] = (),
                    used: str | None = None) -> str:
    """One line for a failed certificate check: the problem, OpenSSL's reason, the fix.

    trust_fix: how to trust the right CA ("set [rabbitmq] cacert to the CA that signed it");
    host_key: the key holding the address the client used ("[rabbitmq] management_url");
    names / used: on a name mismatch, the names the certificate holds (certificate_names) and the one the client
    used: the line then says `certificate names X, not Y` and which name to put in host_key."""
    said = f"certificate verify failed: {reason}" if reason else "certificate verify failed"
    low = reason.lower()
    if names and used and is_name_mismatch(reason):
        held = ", ".join(names)
        return (f"TLS certificate names {held}, not {used} ({said}) - use {names[0]} (a name the certificate "
                f"holds) in {host_key}")
    if "expired" in low:
        return f"TLS certificate expired ({said}) - the server must get a renewed certificate"
    if "not yet valid" in low:
        return f"TLS certificate not yet valid ({said}) - check the clock of this host and of the server"
    if is_name_mismatch(reason):
        return f"TLS certificate is for another name ({said}) - use a name the certificate holds in {host_key}"
    return f"TLS certificate not trusted ({said}) - {trust_fix}"
