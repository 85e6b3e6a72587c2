"""An Ansible INI inventory (kolla-ansible ships `multinode` and `all-in-one` in this form): groups, their
children, host and group variables, and host ranges such as `control[01:03]`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tui.deployinit.common import InitError, read_text

_RANGE = re.compile(r"\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::([0-9]+))?\]")


@dataclass
class Inventory:
    path: Path
    hosts: dict[str, dict[str, str]] = field(default_factory=dict)  # host -> its own variables (first line)
    members: dict[str, list[str]] = field(default_factory=dict)  # group -> hosts listed directly
    children: dict[str, list[str]] = field(default_factory=dict)  # group -> child groups
    group_vars: dict[str, dict[str, str]] = field(default_factory=dict)

    def has_group(self, group: str) -> bool:
        return group in self.members or group in self.children

    def group_hosts(self, group: str) -> list[str]:
        """Every host of `group` and of its children (depth first), in file order, each once; walked without
        recursion (a chain of thousands of child groups is read like any other)."""
        out: list[str] = []
        known: set[str] = set()
        seen_groups: set[str] = set()
        stack = [group]
        while stack:
            name = stack.pop()
            if name in seen_groups:
                continue
            seen_groups.add(name)
            for host in self.members.get(name, []):
                if host not in known:
                    known.add(host)
                    out.append(host)
            stack += reversed(self.children.get(name, []))
        return out

    def host_var(self, host: str, key: str) -> str | None:
        """The host's own value, else that of the closest group holding it, else [all:vars]."""
        if key in self.hosts.get(host, {}):
            return self.hosts[host][key]
        for group in self._groups_of(host):
            if key in self.group_vars.get(group, {}):
                return self.group_vars[group][key]
        return self.group_vars.get("all", {}).get(key)

    def _groups_of(self, host: str) -> list[str]:
        """The groups holding `host`, direct ones first, then their parents (breadth-first)."""
        order = [g for g, hosts in self.members.items() if host in hosts]
        i = 0
        while i < len(order):
            for parent, kids in self.children.items():
                if order[i] in kids and parent not in order:
                    order.append(parent)
            i += 1
        return order


MAX_HOSTS = 10000  # per host line: a larger range is a typo, and would cost memory before any check
MAX_RANGES = 8  # ranges in one host pattern (`rack[1:4]-node[01:20]` has two)


def expand(pattern: str) -> list[str]:
    """`control[01:03]` -> control01, control02, control03 (numeric ranges keep their width; letters too)."""
    if len(_RANGE.findall(pattern)) > MAX_RANGES:
        raise InitError(pattern[:80], "(host range)", f"more than {MAX_RANGES} ranges in one host pattern",
                        "check the line")
    out: list[str] = []
    _expand(pattern, out)
    return out


def _expand(pattern: str, out: list[str]) -> None:
    match = _RANGE.search(pattern)
    if match is None:
        if len(out) >= MAX_HOSTS:
            raise InitError(pattern, "(host range)", f"expands to more than {MAX_HOSTS:,} hosts", "check the range")
        out.append(pattern)
        return
    start, end, step = match.group(1), match.group(2), max(int(match.group(3) or 1), 1)
    head, tail = pattern[: match.start()], pattern[match.end():]
    if start.isdigit() and end.isdigit():
        if (int(end) - int(start)) // step >= MAX_HOSTS:
            raise InitError(pattern, "(host range)", f"expands to more than {MAX_HOSTS:,} hosts", "check the range")
        width = len(start) if start.startswith("0") else 0
        items = [str(i).zfill(width) for i in range(int(start), int(end) + 1, step)]
    elif len(start) == 1 and len(end) == 1 and start.isalpha() and end.isalpha():
        items = [chr(c) for c in range(ord(start), ord(end) + 1, step)]
    else:
        out.append(pattern)
        return
    for item in items:
        _expand(head + item + tail, out)


def _pairs(words: list[str], path: Path, lineno: int) -> dict[str, str]:
    out = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise InitError(path, f"line {lineno}", f"'{word}' is not key=value", "write variables as key=value")
        out[key] = value
    return out


def load_inventory(path: Path) -> Inventory:
    text = read_text(path, "give the Ansible INI inventory the deployment uses (e.g. multinode)")
    inv = Inventory(path)
    section, kind = "ungrouped", "hosts"
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if (lineno == 1 and line == "---") or re.match(r"^[A-Za-z_][\w-]*:\s*$", line):
            raise InitError(path, "(file)", "is a YAML inventory, stacktop reads the INI form",
                            "give the INI inventory (kolla-ansible's multinode / all-in-one shape)")
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            section, _, kind = name.partition(":")
            kind = kind or "hosts"
            if kind not in ("hosts", "children", "vars"):
                raise InitError(path, f"[{name}]", f"unknown section kind ':{kind}'", "use :children or :vars")
            if kind == "hosts":
                inv.members.setdefault(section, [])
            elif kind == "children":
                inv.children.setdefault(section, [])
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            raise InitError(path, f"line {lineno}", "has an unbalanced quote", "fix the quoting") from None
        if not words:
            continue
        if kind == "vars":
            inv.group_vars.setdefault(section, {}).update(_pairs(words, path, lineno))
        elif kind == "children":
            inv.children[section].append(words[0])
        else:
            variables = _pairs(words[1:], path, lineno)
            for host in expand(words[0]):
                inv.members.setdefault(section, [])
                if host not in inv.members[section]:
                    inv.members[section].append(host)
                inv.hosts.setdefault(host, {}).update(variables)
    return inv


_SKIPPED = ("~", ".orig", ".bak", ".ini~", ".retry", ".pyc", ".cfg", ".yml", ".yaml", ".json")


def load_inventory_path(path: Path) -> Inventory:
    """An INI inventory file, or an inventory directory as kolla-ansible >= 2025.1 accepts (its INI files merged
    in name order, host_vars/HOST[.yml] and group_vars/GROUP[.yml] scalars added)."""
    if not path.is_dir():
        return load_inventory(path)
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                   and not p.name.endswith(_SKIPPED))
    if not files:
        raise InitError(path, "(inventory)", "is a directory with no INI inventory file in it",
                        "give the inventory file the deployment uses (--inventory FILE)")
    inv = Inventory(path)
    for file in files:
        part = load_inventory(file)
        for host, variables in part.hosts.items():
            inv.hosts.setdefault(host, {}).update(variables)
        for group, hosts in part.members.items():
            inv.members.setdefault(group, [])
            inv.members[group] += [h for h in hosts if h not in inv.members[group]]
        for group, kids in part.children.items():
            inv.children.setdefault(group, [])
            inv.children[group] += [k for k in kids if k not in inv.children[group]]
        for group, variables in part.group_vars.items():
            inv.group_vars.setdefault(group, {}).update(variables)
    _vars_dir(path / "host_vars", inv.hosts, set(inv.hosts))
    _vars_dir(path / "group_vars", inv.group_vars, set(inv.members) | set(inv.children) | {"all"})
    return inv


def _vars_dir(folder: Path, into: dict[str, dict[str, str]], names: set[str]) -> None:
    """host_vars / group_vars files: YAML mappings; their plain values (text, numbers, yes/no) are kept."""
    from tui.deployinit.common import load_yaml

    if not folder.is_dir():
        return
    for name in sorted(names):
        for candidate in (folder / name, folder / f"{name}.yml", folder / f"{name}.yaml"):
            if candidate.is_file():
                data = load_yaml(candidate, f"fix or remove {candidate}")
                values = {k: str(v) for k, v in data.items() if isinstance(v, (str, int, float, bool))}
                into.setdefault(name, {}).update(values)
