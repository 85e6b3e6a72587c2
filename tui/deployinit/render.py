"""A Plan -> the TOML text of a stacktop config (password references only: never a password)."""

from __future__ import annotations

from typing import Any

from tui.deployinit.common import Plan
from tui.safetext import clean, has_unsafe


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes, every control character (C0, DEL, C1) and every invisible
    formatting character (bidirectional, zero-width) escaped, so the value reads back the same and the text
    printed or written holds none of them."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif has_unsafe(ch):
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def _comment(text: str) -> str:
    """One comment line: controls and invisible formatting characters (a newline would end the comment)
    written out as escapes (`\\x1b`, `\\u202e`)."""
    return "# " + clean(text)


def render(plan: Plan, refs: dict[str, dict[str, str]]) -> str:
    """refs: per section (rabbitmq, galera) the password key to write: {"password_file": PATH} or
    {"password_env": NAME}."""
    lines = [_comment(f"stacktop config written by `stacktop init` from {plan.deployment}'s files in "
                      f"{plan.folder}."),
             "# No secret in here: OpenStack credentials stay in the clouds.yaml below, the RabbitMQ and Galera",
             "# passwords are read from password_file / password_env. Every key: config.example.toml."]
    lines += [_comment(note) for note in plan.notes]
    for name, section in (("openstack", plan.openstack), ("rabbitmq", plan.rabbitmq), ("galera", plan.galera)):
        if not section:
            continue
        lines += ["", f"[{name}]"]
        for key, value in section.items():
            lines.append(f"{key} = {toml_value(value)}")
            if key == "user":
                lines += [f"{k} = {toml_value(v)}" for k, v in refs.get(name, {}).items()]
    for source in plan.log_sources:
        lines += ["", "[[recorder.log_sources]]"]
        lines += [f"{key} = {toml_value(value)}" for key, value in source.items()]
    return "\n".join(lines) + "\n"
