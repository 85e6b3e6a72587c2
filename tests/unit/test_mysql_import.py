"""pymysql is imported without cryptography; the RSA password exchange still works, importing it then."""

from __future__ import annotations

from tests.fresh_python import fresh_python

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
    stdout = fresh_python(CODE)
    imported_early, decrypts, have = eval(stdout.strip().splitlines()[-1])
    assert imported_early is False, "cryptography imported with pymysql"
    assert decrypts and have, "sha256 / caching_sha2 RSA exchange: the password encrypted with the server's key"
