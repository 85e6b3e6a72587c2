"""Reading one config key by its declaration (tui.config_keys): a value of the declared type within its bounds,
else ConfigError, one line `FILE: key: problem - fix`. Files read for the config (the config itself, a
password file) are regular files of bounded size."""

from __future__ import annotations

import dataclasses
import errno
import math
import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import Any

from tui.config_keys import MB, Bounds, Key, declared, default_of, toml_names
from tui.config_schema import Secret

FILE_LIMIT = 16 * MB  # a config or password file larger than this is refused whole


class ConfigError(Exception):
    """A config problem: str() is the one line shown to the user."""

    def __init__(self, file: str, key: str, problem: str, fix: str) -> None:
        from tui.safetext import clean  # keys and values come from the file: controls shown escaped, one line

        self.file, self.key, self.problem, self.fix = file, key, problem, fix
        super().__init__(clean(f"{file}: {key}: {problem} - {fix}"))


def suggest(word: str, options: Collection[str]) -> str:
    import difflib  # only a config with a mistake needs it

    match = difflib.get_close_matches(word, sorted(options), n=1, cutoff=0.6)
    return f"did you mean '{match[0]}'?" if match else f"known keys: {', '.join(sorted(options))}"


def typename(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


# how a key is read when its declaration names no reader: by its annotation
_BY_TYPE = {"float": "number", "bool": "boolean", "str": "string", "str | None": "string",
            "tuple[str, ...]": "str_list"}
# the readers tui.config applies itself: a value checked with other keys, or a table of its own
CALLER_READS = frozenset({"members", "expected_size", "stuck", "log_sources", "log_hosts", "section", "clouds"})


class Reader:
    def __init__(self, file: str, mode: int | None, env: dict[str, str]) -> None:
        self.file = file
        self.mode = mode
        self.env = env
        self.warnings: list[str] = []  # not fatal: one line each on stderr (Config.warnings)

    def err(self, key: str, problem: str, fix: str) -> ConfigError:
        return ConfigError(self.file, key, problem, fix)

    def table(self, data: dict[str, Any], section: str, cls: type, label: str | None = None) -> dict[str, Any]:
        """data[section], checked against the keys `cls` declares; errors name it `label` (default: section)."""
        label = label or section
        value = data.get(section, {})
        if not isinstance(value, dict):
            where = f"[{label}]" if "[" not in label else f"[clouds.{section}] in its [[clouds]] entry"
            raise self.err(label, f"must be a table, got {typename(value)}", f"write it as {where}")
        known = toml_names(cls)
        for key in value:
            if key not in known:
                raise self.err(f"{label}.{key}", "unknown key", suggest(key, known))
        return value

    def keys(self, sec: dict[str, Any], label: str, cls: type) -> dict[str, Any]:
        """The value of every key `cls` declares that a plain reader reads (the others are the caller's), then
        the pair cacert / insecure checked where the section has it."""
        values: dict[str, Any] = {}
        for f, key in declared(cls):
            kind = key.read or _BY_TYPE.get(str(f.type), "")
            method = getattr(self, f"read_{kind}", None)
            if method is not None:
                values[f.name] = method(sec, label, f, key)
            elif kind not in CALLER_READS:
                raise TypeError(f"{cls.__qualname__}.{f.name}: no reader for {kind or f.type!r}")
        if "cacert" in values:
            what = next(key.fix for f, key in declared(cls) if f.name == "cacert")
            self.tls_pair(label, values["cacert"], values.get("insecure", False), what)
        return values

    # plain readers: (section table, its label, the field, its declaration) -> the value

    def read_number(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> float:
        if key.bounds is None:
            raise TypeError(f"{label}.{f.name}: a number key declares its bounds")
        return self.number(sec, label, f.name, default_of(f), key.bounds)

    def read_boolean(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> bool:
        value = sec.get(f.name, default_of(f))
        if not isinstance(value, bool):
            raise self.err(f"{label}.{f.name}", f"must be true or false, got {typename(value)}",
                           f"write {f.name} = true (unquoted)")
        return value

    def read_string(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> str | None:
        value = self.string(sec, label, f.name, default_of(f))
        if key.choices and value is not None and value not in key.choices:
            hint = suggest(value, key.choices).replace("known keys", "the choices")
            raise self.err(f"{label}.{f.name}", f"'{value}' is not one of {', '.join(key.choices)}", hint)
        return value

    def read_cacert(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> str | None:
        return self.string(sec, label, f.name, default_of(f))  # checked with insecure (tls_pair)

    def read_file(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> str | None:
        value = self.string(sec, label, f.name, default_of(f))
        if value and not Path(value).expanduser().is_file():
            raise self.err(f"{label}.{f.name}", f"{value} does not exist", key.fix)
        return value

    def read_str_list(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> tuple[str, ...]:
        return self.str_list(sec, label, f.name)

    def read_url(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> str | None:
        """A URL of one of the declared schemes, without user:password@ (a password there would be logged)."""
        value = self.string(sec, label, f.name, None)
        if value is None:
            return None
        if url_has_userinfo(value):
            raise self.err(f"{label}.{f.name}", "contains credentials (user:password@)",
                           f"drop them from the URL; set [{label}] user and password_env or password_file")
        if not value.startswith(tuple(f"{s}://" for s in key.schemes)):
            raise self.err(f"{label}.{f.name}", f"'{value}' is not a {'/'.join(key.schemes)} URL",
                           f"write it as {key.schemes[0]}://host:port")
        return value

    def read_audit(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> float:
        value = self.read_number(sec, label, f, key)
        if 0 < value < 60:
            raise self.err(f"{label}.{f.name}", f"must be 0 (off) or at least 60 seconds, got {value:g}",
                           f"e.g. {f.name} = {default_of(f):g} (each audit reads every resource provider)")
        return value

    def read_secret(self, sec: dict[str, Any], label: str, f: dataclasses.Field[Any], key: Key) -> Secret:
        """One of password / password_env / password_file (the names the key declares)."""
        given = [k for k in key.names if k in sec]
        if len(given) > 1:
            raise self.err(f"{label}.{given[1]}", f"conflicts with {label}.{given[0]}",
                           "keep only one of " + ", ".join(key.names))
        if not given:
            return Secret()
        name = given[0]
        value = self.string(sec, label, name, None)
        assert value is not None
        if name == "password":
            if self.mode is not None and self.mode & (stat.S_IRGRP | stat.S_IROTH):
                raise self.err(f"{label}.password", "plain password in a file readable by group or others",
                               f"chmod 600 {self.file} or use password_env")
            return Secret(value, "config file")
        if name == "password_env":
            if value not in self.env:
                raise self.err(f"{label}.password_env", f"environment variable {value} is not set",
                               f"export {value}=... before starting stacktop")
            return Secret(self.env[value], f"${value}")
        return self._password_file(label, Path(value).expanduser())

    # typed values, for the plain readers and the section-specific ones (tui.config)

    def string(self, sec: dict[str, Any], label: str, name: str, default: str | None) -> str | None:
        value = sec.get(name, default)
        if value is not None and not isinstance(value, str):
            raise self.err(f"{label}.{name}", f"must be a string, got {typename(value)}",
                           f'quote it: {name} = "..."')
        if isinstance(value, str) and not value.strip():
            raise self.err(f"{label}.{name}", "is empty", "remove the key or give it a value")
        return value

    def number(self, sec: dict[str, Any], label: str, name: str, default: float, bounds: Bounds) -> float:
        """A finite number within `bounds` (NaN, inf and absurd values never reach a timer)."""
        value = sec.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.err(f"{label}.{name}", f"must be a number, got {typename(value)}",
                           f"write a number, e.g. {name} = {default:g}")
        if not (math.isfinite(value) and bounds.low <= value <= bounds.high):
            raise self.err(f"{label}.{name}", f"must be {bounds.describe()}, got {value}",
                           f"e.g. {name} = {default:g}")
        return float(value)

    def str_list(self, sec: dict[str, Any], label: str, name: str) -> tuple[str, ...]:
        value = sec.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.err(f"{label}.{name}", "must be a list of strings", f'write e.g. {name} = ["a", "b"]')
        return tuple(value)

    def tls_pair(self, label: str, cacert: str | None, insecure: bool, what: str) -> None:
        """[label] cacert must be a file, and cannot be combined with insecure = true."""
        if cacert and not Path(cacert).expanduser().is_file():
            raise self.err(f"{label}.cacert", f"{cacert} does not exist",
                           f"point it at the PEM bundle of the CA that signed {what}")
        if cacert and insecure:
            raise self.err(f"{label}.insecure", f"conflicts with {label}.cacert",
                           "keep cacert (verification on) or insecure = true (verification off), not both")

    def _password_file(self, label: str, path: Path) -> Secret:
        fix = "point it at a readable file holding only the password"
        try:
            raw = read_regular_file(path)
        except NotRegularFile as exc:
            raise self.err(f"{label}.password_file", f"{path} is {exc.kind}, not a regular file", fix) from None
        except FileTooLarge as exc:
            raise self.err(f"{label}.password_file", f"{path} is {exc.strerror}: not a password file", fix) \
                from None
        except OSError as exc:
            raise self.err(f"{label}.password_file", f"cannot read {path}: {exc.strerror}", fix) from None
        try:
            return Secret(raw.decode("utf-8").rstrip("\r\n"), str(path))
        except UnicodeDecodeError:
            raise self.err(f"{label}.password_file", f"{path} is not UTF-8 text",
                           "write the password as UTF-8 text in that file") from None


def url_has_userinfo(url: str) -> bool:
    """True when the URL holds `user@` or `user:password@`. Any `@` after the scheme counts: a password may
    hold `/`, `?` or `#`, which end the authority for a URL parser (its tail would then be read as a port or a
    path, and echoed in errors); the service URLs of a config have no `@` of their own."""
    rest = url.split("://", 1)[1] if "://" in url else url
    return "@" in rest


class NotRegularFile(OSError):
    """A path that is a FIFO, a device, a socket or a directory: never opened (a FIFO would block)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


class FileTooLarge(OSError):
    """A file over the size limit: refused whole, never cut to the limit (a cut password or YAML file would be
    read as another value)."""

    def __init__(self, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit / MB:g} MB")
        self.limit = limit


def read_regular_file(path: Path, limit: int | None = FILE_LIMIT) -> bytes:
    """The bytes of a regular file (os.stat first: a FIFO or device is refused before open, never read);
    FileTooLarge when it holds more than `limit` bytes (None: no limit)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(file_kind(st.st_mode))
    if limit is not None and st.st_size > limit:
        raise FileTooLarge(limit)
    with open(path, "rb") as handle:
        data = handle.read(-1 if limit is None else limit + 1)  # one byte more: a file that grew is seen too
    if limit is not None and len(data) > limit:
        raise FileTooLarge(limit)
    return data


