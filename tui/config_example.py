"""config.example.toml, written from the schema (tui.config_schema): every section and key in declaration order,
each with its comment and its default (or its example value). `stacktop config example` prints it."""

from __future__ import annotations

import json
import textwrap
from typing import Any

from tui.config_keys import declared, default_of, example_of
from tui.config_schema import Config

WIDTH = 110

HEADER = """\
# stacktop configuration. Copy to ~/.config/stacktop/config.toml (or pass --config PATH, or set
# $STACKTOP_CONFIG; else the first of $XDG_CONFIG_HOME/stacktop/, ~/.config/stacktop/ and /etc/stacktop/
# config.toml is read; `stacktop config path` says which). `stacktop config example` prints this file.
# Precedence: command line > environment > this file. Every key is optional.
# Secrets are never written here: OpenStack credentials live in clouds.yaml / secure.yaml, and the
# RabbitMQ / Galera passwords are read from an environment variable (password_env) or a file
# (password_file). A plain `password = "..."` is refused unless this file is chmod 600.
# On a kolla-ansible or OpenStack-Ansible deployment host, `stacktop init --kolla /etc/kolla` (or
# `--osa /etc/openstack_deploy`) writes this file from the deployment's own files (README: stacktop init).
"""


def comment(doc: str) -> list[str]:
    """A key's doc as `# ` lines: each paragraph (blank-line separated) filled to the width."""
    paragraphs = [" ".join(p.split()) for p in textwrap.dedent(doc).split("\n\n")]
    return [line for p in paragraphs if p
            for line in textwrap.wrap(p, WIDTH - 2, break_long_words=False, break_on_hyphens=False,
                                      initial_indent="# ", subsequent_indent="# ")]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _is_block(example_toml: str) -> bool:
    """A table or an array of tables of its own (after the section's keys), not lines among them."""
    return example_toml.lstrip("# \n").startswith("[")


def section(name: str, cls: type) -> list[str]:
    """[name] with its keys; a table-valued key follows as [name.key], an array of tables as its example."""
    lines, after = [f"[{name}]"], []
    for f, key in declared(cls):
        if key.example_toml and _is_block(key.example_toml):
            after += ["", *comment(key.doc), key.example_toml.rstrip("\n")]
        elif isinstance(default_of(f), dict):
            after += ["", f"[{name}.{f.name}]", *comment(key.doc)]
            after += [f"{k} = {toml_value(v)}" for k, v in example_of(f, key).items()]
        elif key.example_toml:
            lines += [*comment(key.doc), key.example_toml.rstrip("\n")]
        else:
            line = f"{f.name} = {toml_value(example_of(f, key))}"
            lines += [*comment(key.doc), f"# {line}" if key.commented else line]
    return lines + after


def render() -> str:
    """The text of config.example.toml."""
    blocks = [HEADER.rstrip("\n")]
    for f, key in declared(Config):
        if key.read == "section":
            blocks.append("\n".join(section(f.name, type(default_of(f)))))
        elif key.example_toml:
            blocks.append("\n".join([*comment(key.doc), key.example_toml.rstrip("\n")]))
    return "\n\n".join(blocks) + "\n"
