"""pymysql is imported without cryptography; the RSA password exchange still works, importing it then."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CODE = '''
import sys
from tui.collectors.mysql_import import import_pymysql
pymysql = import_pymysql()
assert import_pymysql() is pymysql
before = "cryptography" in sys.modules
from pymysql import _auth
password, salt = b"monitor-secret", b"0123456789abcdefghij"
from cryptography.hazmat.primitives.asymmetric import rsa, padding
from cryptography.hazmat.primitives import hashes, serialization
key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
sent = _auth.sha2_rsa_encrypt(password, salt, pem)
plain = key.decrypt(sent, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None))
print(repr((before, plain == _auth._xor_password(password + b"\\0", salt), _auth._have_cryptography)))
'''


def test_pymysql_without_cryptography_until_the_rsa_exchange() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0, out.stderr
    imported_early, decrypts, have = eval(out.stdout.strip().splitlines()[-1])
    assert imported_early is False, "cryptography imported with pymysql"
    assert decrypts and have, "sha256 / caching_sha2 RSA exchange: the password encrypted with the server's key"
