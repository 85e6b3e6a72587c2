"""pymysql without its eager import of cryptography (a cost in the middle of the first triage).

pymysql._auth imports cryptography at import time for one use only: the RSA exchange of sha256_password /
caching_sha2_password when the password must be sent over a connection without TLS (sha2_rsa_encrypt).
stacktop's monitor user needs none of it unless the server is configured so (mysql_native_password, or
caching_sha2_password with its fast path or TLS). So pymysql is imported with cryptography hidden, and
sha2_rsa_encrypt imports it the first time the server asks for that exchange.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import Any

_lock = threading.Lock()


def import_pymysql() -> ModuleType:
    """pymysql, imported once with cryptography deferred (a no-op when either is already imported)."""
    with _lock:
        if "pymysql" in sys.modules:
            return sys.modules["pymysql"]
        if "cryptography" in sys.modules:  # already paid for: nothing to defer
            import pymysql

            return pymysql
        sys.modules["cryptography"] = None  # type: ignore[assignment]  # "from cryptography..." raises ImportError
        try:
            import pymysql
            import pymysql._auth as auth
        finally:
            del sys.modules["cryptography"]
        _defer_rsa(auth)
        return pymysql


def _defer_rsa(auth: Any) -> None:
    original = auth.sha2_rsa_encrypt

    def sha2_rsa_encrypt(password: bytes, salt: bytes, public_key: bytes) -> bytes:
        if not auth._have_cryptography:
            try:
                from cryptography.hazmat.backends import default_backend
                from cryptography.hazmat.primitives import hashes, serialization
                from cryptography.hazmat.primitives.asymmetric import padding
            except ImportError:
                pass  # not installed: pymysql raises its own "'cryptography' package is required"
            else:
                auth.default_backend, auth.hashes = default_backend, hashes
                auth.serialization, auth.padding = serialization, padding
                auth._have_cryptography = True
        return original(password, salt, public_key)  # type: ignore[no-any-return]

    auth.sha2_rsa_encrypt = sha2_rsa_encrypt  # the auth functions call it by its module-global name
