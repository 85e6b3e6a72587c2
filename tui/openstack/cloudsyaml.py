"""clouds.yaml (+ secure.yaml) read the way openstacksdk reads it, without importing openstacksdk.

For the first reads only (tui.openstack.light): importing openstacksdk costs ~0.25-0.36 s of CPU at start-up.
Only the common shape is understood: one named cloud, everything under `auth`, password or application
credential auth against Keystone v3, one region, `interface`, `cacert` / `verify` / `insecure`. Anything else
(vendor profiles, other auth types, domain-scoped or system-scoped tokens, endpoint overrides, client
certificates, several regions, the `envvars` cloud...) raises LightUnsupported: the caller then uses
openstacksdk, which also gives the usual error lines for broken configs (a missing cloud, an unreadable file).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui import yamlsafe
from tui.config import OpenStackConfig
from tui.errors import SourceError
from tui.safetext import clean
from tui.yamlsafe import YamlRefused

PASSWORD_TYPES = frozenset({"password", "v3password"})
APPCRED_TYPES = frozenset({"v3applicationcredential", "applicationcredential"})
PASSWORD_KEYS = frozenset({"auth_url", "username", "user_id", "password", "project_name", "project_id",
                           "user_domain_name", "user_domain_id", "project_domain_name", "project_domain_id"})
APPCRED_KEYS = frozenset({"auth_url", "application_credential_id", "application_credential_name",
                          "application_credential_secret", "username", "user_id", "user_domain_name",
                          "user_domain_id"})
# top-level keys of a cloud entry that the light path understands (or that do not change how it reads)
CLOUD_KEYS = frozenset({"auth", "auth_type", "region_name", "interface", "identity_api_version", "cacert",
                        "verify", "insecure", "api_timeout"})


class LightUnsupported(Exception):
    """The light path does not handle this config or answer: use openstacksdk instead (never shown)."""


@dataclass(frozen=True)
class LightCloud:
    name: str
    auth_type: str  # "password" or "v3applicationcredential"
    auth: dict[str, str] = field(repr=False)  # holds the secret: never printed
    auth_url: str  # as written in clouds.yaml (error lines name it)
    region: str | None
    interface: str
    verify: bool | str  # False, True or a CA bundle path
    clouds_file: str | None  # the file the cloud came from

    @property
    def identity_v3(self) -> str:
        """The Keystone v3 root: auth_url with or without /v3."""
        url = self.auth_url.rstrip("/")
        return url if url.endswith("/v3") else f"{url}/v3"


def search_path() -> list[Path]:
    """openstacksdk's CONFIG_SEARCH_PATH on Linux: ./, the user's config dirs, the site's."""
    home = Path(os.path.expanduser("~/.config"))
    xdg = Path(os.environ["XDG_CONFIG_HOME"]) if os.environ.get("XDG_CONFIG_HOME") else home
    site = (os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":")[0]
    dirs = [Path.cwd(), xdg / "openstack", home / "openstack", Path(site) / "openstack", Path("/etc/openstack")]
    out: list[Path] = []
    for d in dirs:
        if d not in out:
            out.append(d)
    return out


def _candidates(stem: str, given: list[Path] | None, env: str) -> list[Path]:
    files = list(given) if given is not None else [d / f"{stem}{s}" for d in search_path()
                                                    for s in (".yaml", ".yml", ".json")]
    override = os.environ.get(env)
    if override:
        files.insert(0, Path(override))
    return files


def _load_first(files: list[Path]) -> tuple[Path | None, dict[str, Any] | None]:
    """The first file that exists, parsed (a file that cannot be read or parsed: openstacksdk's business)."""
    for path in files:
        if not path.exists():
            continue
        try:
            text = path.read_text()
        except OSError as exc:
            raise LightUnsupported(f"{path}: {exc.strerror}") from None
        try:
            data = json.loads(text) if path.suffix == ".json" else _yaml(text)
        except YamlRefused as exc:  # not handed to openstacksdk either: it would expand the aliases
            raise SourceError(clean(f"{path}: {exc} - fix the file (a clouds.yaml needs no such aliases)")) \
                from None
        except (ValueError, RecursionError) as exc:
            raise LightUnsupported(f"{path}: not parseable") from exc
        if not isinstance(data, dict):
            raise LightUnsupported(f"{path}: not a mapping")
        return path, data
    return None, None


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yamlsafe.load(text)  # a safe loader (the C one when built), aliases within a budget
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def refuse_alias_bombs(cfg: OpenStackConfig) -> None:
    """SourceError when the clouds.yaml (or secure.yaml) openstacksdk would read holds aliases that expand it
    past tui.yamlsafe's budget: called before openstacksdk reads it (it would expand them, for minutes and
    gigabytes). Any other problem is left to openstacksdk to word."""
    given = [Path(cfg.clouds_file).expanduser()] if cfg.clouds_file else None
    for files in (_candidates("clouds", given, "OS_CLIENT_CONFIG_FILE"),
                  _candidates("secure", None, "OS_CLIENT_SECURE_FILE")):
        with contextlib.suppress(LightUnsupported):
            _load_first(files)


def yaml_problem(path: Path) -> str | None:
    """Why a clouds.yaml does not parse, with its line and column (openstacksdk skips such a file silently,
    then says the cloud is not there); None when it parses, or is not a regular file that can be read."""
    import stat

    import yaml

    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
        yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError:
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"{path} is not valid YAML{where}: {problem}"
    return None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """openstacksdk's merge_clouds: nested dicts merged, the rest replaced."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _norm(d: dict[str, Any]) -> dict[str, Any]:
    return {str(k).replace("-", "_"): v for k, v in d.items()}


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "yes", "1", "on")
    return bool(value)


def load_cloud(cfg: OpenStackConfig) -> LightCloud:
    """The cloud stacktop reads, or LightUnsupported."""
    given = [Path(cfg.clouds_file).expanduser()] if cfg.clouds_file else None
    path, data = _load_first(_candidates("clouds", given, "OS_CLIENT_CONFIG_FILE"))
    _, secure = _load_first(_candidates("secure", None, "OS_CLIENT_SECURE_FILE"))
    if data is None:
        raise LightUnsupported("no clouds.yaml")
    if secure:
        data = _merge(data, secure)
    clouds = data.get("clouds")
    name = cfg.cloud or os.environ.get("OS_CLOUD")
    if not isinstance(clouds, dict) or not name or name not in clouds or not isinstance(clouds[name], dict):
        raise LightUnsupported("cloud not found")  # openstacksdk says which clouds there are
    entry = _norm(clouds[name])
    unknown = set(entry) - CLOUD_KEYS
    if unknown:
        raise LightUnsupported(f"keys {sorted(unknown)}")
    if str(entry.get("identity_api_version", "3")).strip() not in ("3", "3.0"):
        raise LightUnsupported("identity_api_version")
    auth_type = str(entry.get("auth_type") or "password").replace("-", "_")
    auth_raw = entry.get("auth")
    if not isinstance(auth_raw, dict):
        raise LightUnsupported("no auth section")
    auth = {k: str(v) for k, v in _norm(auth_raw).items() if v is not None and v != ""}
    if auth_type in PASSWORD_TYPES:
        allowed, auth_type = PASSWORD_KEYS, "password"
        complete = "password" in auth and ("username" in auth or "user_id" in auth) \
            and ("project_id" in auth or "project_name" in auth)
    elif auth_type in APPCRED_TYPES:
        allowed, auth_type = APPCRED_KEYS, "v3applicationcredential"
        complete = "application_credential_secret" in auth and ("application_credential_id" in auth or (
            "application_credential_name" in auth and ("user_id" in auth or "username" in auth)))
    else:
        raise LightUnsupported(f"auth_type {auth_type}")
    if set(auth) - allowed or not complete or "auth_url" not in auth:
        raise LightUnsupported("auth keys")  # incomplete auth: openstacksdk's error line names what is missing
    if auth["auth_url"].rstrip("/").endswith("/v2.0"):
        raise LightUnsupported("Keystone v2")
    region = entry.get("region_name")
    if region is not None and (not isinstance(region, str) or "," in region):
        raise LightUnsupported("several regions")
    interface = str(entry.get("interface") or "public").lower()
    interface = {"publicurl": "public", "internalurl": "internal", "adminurl": "admin"}.get(interface, interface)
    verify: bool | str = not (_flag(entry.get("insecure", False)) or not _flag(entry.get("verify", True)))
    if cfg.insecure:
        verify = False
    cacert = cfg.cacert or entry.get("cacert")
    if verify and cacert:
        verify = str(Path(str(cacert)).expanduser())
    return LightCloud(name=name, auth_type=auth_type, auth=auth, auth_url=auth["auth_url"], region=region or None,
                      interface=interface, verify=verify, clouds_file=str(path) if path else None)
