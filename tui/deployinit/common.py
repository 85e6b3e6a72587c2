"""What every deployment reader shares: the one-line error, YAML files read safely, Ansible's booleans and
`{{ var }}` references, and the Plan a reader hands to the writer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui import yamlsafe
from tui.config import FileTooLarge, NotRegularFile, read_regular_file

EXIT_INCOMPLETE = 4  # `stacktop init` wrote what it could; the deployment lacks something stacktop needs


def one_line(file: str | Path, key: str, problem: str, fix: str) -> str:
    """`FILE: key: problem - fix`, controls escaped: an error or a gap, always one line."""
    from tui.safetext import clean

    return clean(f"{file}: {key}: {problem} - {fix}")


class InitError(Exception):
    """A missing or ambiguous value: str() is one line `FILE: key: problem - fix` (exit 3)."""

    def __init__(self, file: str | Path, key: str, problem: str, fix: str) -> None:
        super().__init__(one_line(file, key, problem, fix))


@dataclass(frozen=True)
class PasswordRef:
    """A password read from a deployment file (never printed) and where it came from (printed)."""

    value: str
    origin: str  # e.g. "passwords.yml: rabbitmq_monitoring_password"

    def __repr__(self) -> str:
        return f"PasswordRef(origin={self.origin!r})"


@dataclass
class Plan:
    """What `stacktop init` writes: TOML sections without passwords, the passwords apart."""

    deployment: str  # "kolla-ansible" / "OpenStack-Ansible"
    folder: Path
    openstack: dict[str, Any] = field(default_factory=dict)
    clouds_yaml: dict[str, Any] | None = None  # a clouds.yaml to write (mode 600): from an openrc only
    rabbitmq: dict[str, Any] | None = None
    rabbitmq_password: PasswordRef | None = None
    galera: dict[str, Any] | None = None
    galera_password: PasswordRef | None = None
    log_sources: list[dict[str, Any]] = field(default_factory=list)  # [[recorder.log_sources]] tables
    notes: list[str] = field(default_factory=list)  # comment lines at the top of the TOML
    # what the deployment lacks for stacktop, each one line with the exact fix (stderr; exit EXIT_INCOMPLETE)
    gaps: list[str] = field(default_factory=list)


ANSIBLE_VAULT = "$ANSIBLE_VAULT;"


def read_text(path: Path, what: str) -> str:
    """A regular UTF-8 file of at most 16 MB (a larger one is refused whole, never cut); InitError naming it
    otherwise."""
    try:
        raw = read_regular_file(path)
    except FileNotFoundError:
        raise InitError(path, "(file)", "does not exist", what) from None
    except NotRegularFile as exc:
        raise InitError(path, "(file)", f"is {exc.kind}, not a regular file", what) from None
    except FileTooLarge as exc:
        raise InitError(path, "(file)", f"is {exc.strerror}, refused (not read in part)",
                        f"{what}: a deployment's own file is far smaller") from None
    except OSError as exc:
        raise InitError(path, "(file)", f"cannot be read: {exc.strerror}", "check its permissions (run as its "
                        "owner, e.g. with sudo)") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InitError(path, "(file)", "is not UTF-8 text", what) from None


def load_yaml(path: Path, what: str) -> dict[str, Any]:
    """A YAML mapping (safe loader, aliases within tui.yamlsafe's budget; an empty file is an empty mapping)."""
    import yaml

    text = read_text(path, what)
    if text.lstrip().startswith(ANSIBLE_VAULT):
        raise InitError(path, "(file)", "is encrypted with ansible-vault",
                        f"decrypt a copy (ansible-vault decrypt --output COPY {path.name}) and point at its folder")
    try:
        data = yamlsafe.load(text)
    except yamlsafe.YamlRefused as exc:
        raise InitError(path, "(aliases)", str(exc), "give the deployment's own file, without aliases that "
                        "repeat large parts") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise InitError(path, "(syntax)", f"not valid YAML{where}", "fix the line it names") from None
    except RecursionError:
        raise InitError(path, "(syntax)", "nested too deeply", "give the deployment's own file") from None
    except ValueError:  # an integer of more than 4,300 digits (Python's int limit)
        raise InitError(path, "(syntax)", "holds a number too long to read", "fix the value") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InitError(path, "(file)", "is not a YAML mapping of keys", what)
    return data


def brief(value: Any, limit: int = 60) -> str:
    """A value from a deployment file as an error or a note shows it: a scalar cut to `limit` characters, a
    list or mapping named by its kind and size (never its str(): that may be huge)."""
    if isinstance(value, dict):
        return f"a mapping of {len(value)} keys"
    if isinstance(value, (list, tuple, set, frozenset)):
        return f"a list of {len(value)} items"
    text = str(value) if isinstance(value, (str, int, float, bool)) or value is None else type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0", ""}


def ansible_bool(value: Any, file: str | Path, key: str) -> bool:
    """Ansible's `| bool`: true/yes/on/1 and false/no/off/0, any case."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, (str, int)) else None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InitError(file, key, f"'{brief(value)}' is not a yes/no value", f"set {key} to yes or no")


_REFERENCE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


def resolve(variables: dict[str, Any], key: str, default: Any, file: str | Path, depth: int = 0) -> Any:
    """variables[key] (else default), following a plain `{{ other_key }}` reference; any other template is
    ambiguous (it needs Ansible to evaluate it): InitError naming the key."""
    value = variables.get(key, default)
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return value
    match = _REFERENCE.match(value.strip())
    if match is None or depth > 8:
        raise InitError(file, key, f"'{brief(value)}' is a template stacktop cannot evaluate",
                        f"write the value {key} stands for in {Path(file).name}")
    return resolve(variables, match.group(1), None, file, depth + 1)


def text_value(variables: dict[str, Any], key: str, file: str | Path, *, default: Any = None) -> str | None:
    """A scalar setting as text (numbers allowed: a port), None when unset or empty."""
    value = resolve(variables, key, default, file)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InitError(file, key, "must be a single value", f"set {key} to a string")
    return str(value).strip() or None


def password(secrets: dict[str, Any], key: str, file: Path, fix: str) -> PasswordRef:
    """A non-empty password from a secrets file; InitError naming the key otherwise."""
    value = secrets.get(key)
    if value is None or value == "":
        raise InitError(file, key, "is missing or empty", fix)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InitError(file, key, "is not a single value", f"set {key} to the password string")
    return PasswordRef(str(value), f"{file.name}: {key}")


def host_port(host: str, port: int | str) -> str:
    """host:port, an IPv6 address in brackets."""
    ipv6 = host.count(":") >= 2 and re.fullmatch(r"[0-9A-Fa-f:.]+", host) is not None
    return f"[{host}]:{port}" if ipv6 else f"{host}:{port}"


def port_number(value: Any, file: str | Path, key: str) -> int:
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    if isinstance(value, bool) or not text.isdigit() or len(text) > 5 or not 0 < int(text) < 65536:
        raise InitError(file, key, f"'{brief(value)}' is not a port number", f"set {key} to a port, e.g. 3306")
    return int(text)


def flag(variables: dict[str, Any], key: str, default: bool, file: str | Path) -> bool:
    """An Ansible yes/no setting (a plain `{{ other }}` reference followed)."""
    return ansible_bool(resolve(variables, key, default, file), file, key)
