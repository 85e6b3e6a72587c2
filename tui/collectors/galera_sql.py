"""Read-only SQL for the Galera source: the one gate every statement passes, and the real pymysql connector.

The seam (what tui.collectors.galera needs from a database client, and what a fake implements):

    Connector = Callable[[address: str, user: str, password: str | None, timeout: float], Connection]
    class Connection(Protocol):
        def query(self, sql: str) -> list[tuple]: ...   # rows as tuples, values as str (or None)
        def close(self) -> None: ...

`address` is "host:port". The connector raises on failure (any exception: its first line becomes the node's
error; an exception with args (code, message) like pymysql's is shown as "(code) message", and codes in
AUTH_ERROR_CODES mark a login refusal). query() raises the same way when the connection broke.

Statements the collector sends (verbatim; a fake only needs to answer these two with (name, value) rows):
    SHOW GLOBAL STATUS LIKE 'wsrep%'
    SHOW GLOBAL VARIABLES LIKE 'wsrep%'
"""

from __future__ import annotations

import contextlib
import re
import socket
import ssl
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from tui.deadline import register_abort
from tui.tlserror import certificate_names, describe_verify, is_name_mismatch, verify_reason

STATUS_SQL = "SHOW GLOBAL STATUS LIKE 'wsrep%'"
VARIABLES_SQL = "SHOW GLOBAL VARIABLES LIKE 'wsrep%'"

# 1044 db access denied, 1045 access denied (user/password), 1130 host not allowed, 1698 plugin refused
AUTH_ERROR_CODES = frozenset({1044, 1045, 1130, 1698})
# a statement refused to a logged-in account: 1142 command denied, 1143 column denied, 1227 needs a privilege
PRIVILEGE_ERROR_CODES = frozenset({1142, 1143, 1227})
_NEEDS = re.compile(r"need \(at least one of\) the (.+?) privilege", re.IGNORECASE)
_COMMAND = re.compile(r"^(\w+) command denied", re.IGNORECASE)
_ACCOUNT = re.compile(r"to user '([^']*)'@'([^']*)'", re.IGNORECASE)


# the account itself refused, whatever its privileges: 1226 a resource limit of the account reached
# (max_queries_per_hour, max_user_connections, ...), 1820 / 1862 its password expired (1820: logged in, every
# statement refused), 4151 the account is locked
ACCOUNT_ERROR_CODES = frozenset({1226, 1820, 1862, 4151})
_RESOURCE = re.compile(r"exceeded the '(\w+)' resource", re.IGNORECASE)


class PrivilegeMissing(ValueError):
    """A statement (or the login) the account may not run: str() names it, the server's answer and the GRANT or
    ALTER USER that fixes it."""


def account_refused(exc: BaseException, doing: str, user: str) -> PrivilegeMissing | None:
    """The PrivilegeMissing for a login or statement refused because of the account itself (a resource limit
    reached, an expired password, a lock: ACCOUNT_ERROR_CODES), with the ALTER USER that lifts it; else None.
    doing: what was refused ("run SHOW GLOBAL STATUS LIKE 'wsrep%'", "log in")."""
    args = getattr(exc, "args", ())
    if len(args) < 2 or args[0] not in ACCOUNT_ERROR_CODES:
        return None
    code, message = args[0], " ".join(str(args[1]).split())
    account = f"'{user}'@'%'"
    if code == 1226:
        resource = _RESOURCE.search(message)
        option = resource.group(1).upper() if resource else "MAX_QUERIES_PER_HOUR"
        fix = f"ALTER USER {account} WITH {option} 0 (0: no limit; stacktop sends 2 statements per node and poll)"
    elif code == 4151:
        fix = f"ALTER USER {account} ACCOUNT UNLOCK"
    else:
        fix = (f"its password expired: ALTER USER {account} IDENTIFIED BY '<the password in [galera]>' "
               "PASSWORD EXPIRE NEVER")
    return PrivilegeMissing(f"user '{user}' may not {doing}: ({code}) {message} - {fix}")


def privilege_missing(exc: BaseException, sql: str, user: str) -> PrivilegeMissing | None:
    """The PrivilegeMissing for a statement refused with a privilege error or by the account itself
    (account_refused), else None."""
    args = getattr(exc, "args", ())
    if len(args) >= 2 and args[0] in ACCOUNT_ERROR_CODES:
        return account_refused(exc, f"run {sql}", user)
    if len(args) < 2 or args[0] not in PRIVILEGE_ERROR_CODES:
        return None
    message = " ".join(str(args[1]).split())
    needs = _NEEDS.search(message) or _COMMAND.search(message)
    privilege = needs.group(1).split(",")[0].strip().upper() if needs else "the privilege it names"
    account = _ACCOUNT.search(message)
    name, host = (account.group(1), account.group(2)) if account else (user, "%")
    return PrivilegeMissing(f"user '{user}' may not run {sql}: ({args[0]}) {message} - "
                            f"GRANT {privilege} ON *.* TO '{name}'@'{host}'")


class Connection(Protocol):
    def query(self, sql: str) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...


Connector = Callable[[str, str, str | None, float], Connection]


class ReadOnlyViolation(ValueError):
    """A statement that is not a plain SHOW or SELECT: refused before it reaches any server."""


_FIRST_WORD = re.compile(r"^\s*([A-Za-z]+)\b")
# Anything that could chain a second statement, hide one in a comment, write a file or take a lock.
_FORBIDDEN = re.compile(
    r";|--|#|/\*|\*/|\bINTO\b|\bFOR\s+UPDATE\b|\bLOCK\b|\bSHARE\s+MODE\b|\bGET_LOCK\b|\bSLEEP\b|\bBENCHMARK\b",
    re.IGNORECASE,
)


def check_read_only(sql: str) -> str:
    """Return sql if it is one SHOW or SELECT statement without side effects; raise ReadOnlyViolation."""
    if not isinstance(sql, str):
        raise ReadOnlyViolation(f"SQL must be a string, got {type(sql).__name__}")
    match = _FIRST_WORD.match(sql)
    verb = match.group(1).upper() if match else ""
    if verb not in ("SHOW", "SELECT"):
        raise ReadOnlyViolation(f"refused (stacktop only reads: SHOW or SELECT): {sql.strip()[:60]!r}")
    bad = _FORBIDDEN.search(sql)
    if bad:
        raise ReadOnlyViolation(f"refused ({bad.group(0).strip()!r} is not allowed in a read): {sql.strip()[:60]!r}")
    return sql


def run_query(conn: Connection, sql: str) -> list[tuple[Any, ...]]:
    """The only way the Galera source sends SQL: through the read-only gate."""
    return conn.query(check_read_only(sql))


def describe_error(exc: BaseException) -> tuple[str, bool]:
    """(one line without secrets, is_auth_error) for a connect or query failure."""
    args = getattr(exc, "args", ())
    if len(args) >= 2 and isinstance(args[0], int):
        code, message = args[0], str(args[1])
        line = message.strip().splitlines()[0] if message.strip() else type(exc).__name__
        return f"({code}) {line}", code in AUTH_ERROR_CODES
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    if (type(exc) is ValueError or isinstance(exc, PrivilegeMissing)) and first:  # our own description
        return first, False
    if isinstance(exc, TimeoutError) and not first:
        first = "timed out"
    return (f"{type(exc).__name__}: {first}" if first else type(exc).__name__), False


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def tls_context(cacert: str | None = None, insecure: bool = False) -> ssl.SSLContext:
    """The one TLS context of a Galera source (built once: loading a CA bundle costs ~30 ms): verification and
    host name check on, against cacert or the system's CAs; insecure = neither (explicit only)."""
    ctx = ssl.create_default_context(cafile=str(Path(cacert).expanduser()) if cacert else None)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


# the SSL request of MySQL's protocol 4.1: what a client sends, after the server's greeting, to start TLS
_CLIENT_FLAGS = 0x1 | 0x4 | 0x200 | 0x800 | 0x8000  # LONG_PASSWORD, LONG_FLAG, PROTOCOL_41, SSL, SECURE_CONNECTION
_SSL_REQUEST = struct.pack("<IIB23s", _CLIENT_FLAGS, 1 << 24, 45, b"\0" * 23)


def mysql_ssl_request(sock: socket.socket) -> None:
    """Read the server's greeting and ask for TLS (no user, no password: nothing but the SSL request)."""
    header = b""
    while len(header) < 4:
        chunk = sock.recv(4 - len(header))
        if not chunk:
            raise OSError("the server closed the connection before its greeting")
        header += chunk
    left = int.from_bytes(header[:3], "little")
    while left > 0:
        chunk = sock.recv(min(left, 65536))
        if not chunk:
            raise OSError("the server closed the connection during its greeting")
        left -= len(chunk)
    sock.sendall(len(_SSL_REQUEST).to_bytes(3, "little") + bytes([header[3] + 1]) + _SSL_REQUEST)


def node_certificate_names(address: str, cafile: str | None, timeout: float) -> list[str]:
    """The names a node's certificate holds (tui.tlserror.certificate_names through MySQL's SSL request)."""
    host, port = split_address(address)
    return certificate_names(host, port, cafile, timeout, starttls=mysql_ssl_request)


def tls_reason(exc: BaseException) -> str | None:
    """One line for a TLS failure anywhere in exc's chain (pymysql wraps it in OperationalError 2003), else None.
    Without the address: the node's row has it, and nodes failing alike share one line in the source's error."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, ssl.SSLCertVerificationError):
            return describe_verify(verify_reason(seen) or "", "set [galera] cacert to the CA that signed it (or "
                                   "insecure = true)", "[galera] nodes")
        if isinstance(seen, ssl.SSLError):
            return f"TLS handshake failed ({seen.reason or seen}) - check the node's TLS setup"
        seen = getattr(seen, "original_exception", None) or seen.__cause__ or seen.__context__
    args = getattr(exc, "args", ())
    if len(args) >= 2 and args[0] == 2026:  # CR_SSL_CONNECTION_ERROR: TLS asked, the server offers none
        return "the node does not offer TLS - enable TLS on it, or drop [galera] tls / cacert / insecure"
    return None


class PyMySQLConnection:
    """One persistent pymysql connection; under tui.deadline.guard, its socket is shut down at the guard's
    deadline (a node that trickles its greeting or an answer cannot hold the read). TLS only when a context is
    given (measured: ~40 ms per connect with an SSL context vs ~1 ms without); then required: a node that
    offers no TLS is an error, never plaintext. Autocommit left as the server has it (no statement sent on connect)."""

    def __init__(self, address: str, user: str, password: str | None, timeout: float,
                 ssl: ssl.SSLContext | dict[str, Any] | None = None, cafile: str | None = None) -> None:
        from tui.collectors.mysql_import import import_pymysql

        pymysql = import_pymysql()  # lazy (~60 ms, only with a Galera source), cryptography deferred

        host, port = split_address(address)
        kwargs: dict[str, Any] = {}
        if ssl:
            kwargs["ssl"] = ssl
        else:
            kwargs["ssl_disabled"] = True
        try:
            self._conn = pymysql.connect(
                host=host, port=port, user=user, password=password or "", connect_timeout=timeout,
                read_timeout=timeout, write_timeout=timeout, autocommit=None, charset="utf8mb4",
                defer_connect=True, **kwargs,
            )
            register_abort(self.abort)  # the greeting and the login, trickled, end at the caller's deadline
            self._conn.connect()
        except pymysql.err.OperationalError as exc:
            reason = tls_reason(exc) if ssl else None
            if reason is None:
                raise
            said = verify_reason(exc) or ""
            if is_name_mismatch(said):
                names = node_certificate_names(address, cafile, timeout)
                reason = describe_verify(said, "set [galera] cacert to the CA that signed it (or insecure = true)",
                                         "[galera] nodes", names=names, used=host)
            raise ValueError(reason) from None

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        register_abort(self.abort)
        with self._conn.cursor() as cur:
            cur.execute(sql)
            return list(cur.fetchall())

    def abort(self) -> None:
        """Shut the connection's socket down from any thread: a read blocked on it ends at once (with an error),
        the connection is unusable after."""
        sock = getattr(self._conn, "_sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()


def pymysql_connector(ssl: ssl.SSLContext | dict[str, Any] | None = None, cafile: str | None = None) -> Connector:
    """The real Connector. ssl: a TLS context (tls_context) or pymysql's ssl dict to use TLS; None = TLS off.
    cafile: the CA the context trusts (to read a certificate's names when they do not match the address)."""

    def connect(address: str, user: str, password: str | None, timeout: float) -> Connection:
        return PyMySQLConnection(address, user, password, timeout, ssl=ssl, cafile=cafile)

    return connect
