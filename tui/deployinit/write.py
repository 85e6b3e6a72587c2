"""Write a Plan: the TOML (no secret in it) and, beside it, the secret files (mode 600, never through a
symlink), after checking the result with stacktop's own config loader. An existing file is kept unless
force=True."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from tui.config import ConfigError, load_config
from tui.deployinit.common import InitError, Plan
from tui.deployinit.render import render

ENV_NAMES = {"rabbitmq": "STACKTOP_RABBITMQ_PASSWORD", "galera": "STACKTOP_GALERA_PASSWORD"}
SECRET_MODE = 0o600


@dataclass(frozen=True)
class Output:
    config: Path
    text: str  # the TOML
    secrets: dict[Path, bytes]  # files written beside it (mode 600): passwords, a clouds.yaml from an openrc
    summary: str  # the one line saying where the secrets are


def side_file(config: Path, what: str) -> Path:
    """config.toml -> config.rabbitmq.password / config.galera.password / config.clouds.yaml."""
    stem = config.name[: -len(".toml")] if config.name.endswith(".toml") else config.name
    return config.with_name(f"{stem}.{what}")


def _passwords(plan: Plan) -> dict[str, tuple[str, str]]:
    out = {}
    for name, ref in (("rabbitmq", plan.rabbitmq_password), ("galera", plan.galera_password)):
        if ref is not None and getattr(plan, name):
            out[name] = (ref.value, ref.origin)
    return out


def build(plan: Plan, config: Path, *, password_env: bool) -> Output:
    """The TOML and the secret files for a config at `config` (nothing written; `plan` is left as it was)."""
    import yaml

    plan = replace(plan, openstack=dict(plan.openstack))
    secrets: dict[Path, bytes] = {}
    refs: dict[str, dict[str, str]] = {}
    said: list[str] = []
    for name, (value, origin) in _passwords(plan).items():
        if password_env:
            refs[name] = {"password_env": ENV_NAMES[name]}
            said.append(f"{ENV_NAMES[name]} to {origin}")
        else:
            path = side_file(config, f"{name}.password")
            refs[name] = {"password_file": str(path)}
            secrets[path] = value.encode("utf-8")
    parts = []
    if said:
        parts.append(f"passwords by environment: set {' and '.join(said)} before running stacktop")
    elif secrets:
        parts.append(f"passwords in {', '.join(str(p) for p in secrets)} (mode 600)")
    if plan.clouds_yaml is not None:
        path = side_file(config, "clouds.yaml")
        plan.openstack["clouds_file"] = str(path)
        secrets[path] = yaml.safe_dump(plan.clouds_yaml, default_flow_style=False, sort_keys=False).encode("utf-8")
        parts.append(f"OpenStack credentials in {path} (mode 600)")
    else:
        parts.append(f"OpenStack credentials stay in {plan.openstack.get('clouds_file')} "
                     f"(entry {plan.openstack.get('cloud')})")
    text = render(plan, refs)
    summary = "; ".join(parts)
    return Output(config, text, secrets, summary)


def check(plan: Plan) -> None:
    """The config as it would be written, loaded by stacktop's own loader from a scratch folder: InitError with
    the loader's line when it does not pass. No secret is written there: the passwords are handed over as
    environment variables, a clouds.yaml to be made from an openrc is an empty file (the loader only checks
    that clouds_file exists)."""
    with tempfile.TemporaryDirectory(prefix="stacktop-init-") as scratch:
        config = Path(scratch) / "config.toml"
        trial = build(plan, config, password_env=True)
        for path in trial.secrets:
            _write(path, b"")
        _write(config, trial.text.encode("utf-8"))
        env = {ENV_NAMES[name]: value for name, (value, _origin) in _passwords(plan).items()}
        try:
            load_config(str(config), env=env)
        except ConfigError as exc:
            raise InitError(plan.folder, exc.key, f"the config made from it does not pass: {exc.problem}",
                            exc.fix) from None


def refuse_existing(output: Output, force: bool) -> None:
    if force:
        return
    for path in (output.config, *output.secrets):
        if os.path.lexists(path):
            raise InitError(path, "(file)", "already exists", "pass --force to replace it, or -o another path")


def write(output: Output, *, force: bool) -> None:
    refuse_existing(output, force)
    parent = output.config.parent
    try:
        parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise InitError(parent, "(folder)", f"cannot be created: {exc.strerror}", "pick another -o FILE") from None
    for path, data in output.secrets.items():
        _write(path, data)
    _write(output.config, output.text.encode("utf-8"))


def _write(path: Path, data: bytes) -> None:
    """Atomically (a temporary file in the same folder, then rename), mode 600 from the start; a symlink at
    `path` is replaced, never followed."""
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), SECRET_MODE)
            handle.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)
        raise InitError(path, "(file)", f"cannot be written: {exc.strerror}", "check the folder's permissions") \
            from None
