"""Structural shape of JSON values, and the drift between two shapes, named by field path.

A shape maps each field path to the JSON kinds seen there (`servers[].OS-EXT-STS:task_state` -> {str, null}).
Lists merge their elements; dicts that are maps keyed by data (consumer uuids, resource classes, network
names) are declared by path and their keys collapse to `*`. `null` matches any kind: a field that happens
to be null on one side is not drift, a field missing or of another kind is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Shape = dict[str, set[str]]


def kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def shape(value: Any, maps: Iterable[str] = (), path: str = "") -> Shape:
    """Every path under value -> kinds. `maps`: paths of dicts whose keys are data (collapsed to `*`)."""
    out: Shape = {}
    _walk(value, path, frozenset(maps), out)
    return out


def _walk(value: Any, path: str, maps: frozenset[str], out: Shape) -> None:
    out.setdefault(path or "$", set()).add(kind(value))
    if isinstance(value, list):
        for item in value:
            _walk(item, f"{path}[]", maps, out)
    elif isinstance(value, dict):
        is_map = path in maps
        for key, item in value.items():
            child = f"{path}.*" if is_map else (f"{path}.{key}" if path else str(key))
            _walk(item, child, maps, out)


def drift(real: Shape, sim: Shape, *, ignore: Iterable[str] = ()) -> list[str]:
    """Human lines, one per drifting field; [] when the simulator matches the real API."""
    skip = tuple(ignore)
    lines = []
    for path in sorted(set(real) | set(sim)):
        if path.startswith(skip) and skip:
            continue
        if path not in sim and _unseen_container(path, sim):
            continue  # the simulator's list/map there was always empty: nothing to compare
        if path not in real and _unseen_container(path, real):
            continue
        if path not in sim:
            lines.append(f"{path}: the real API has it ({'/'.join(sorted(real[path]))}), the simulator lacks it")
        elif path not in real:
            lines.append(f"{path}: the simulator invents it ({'/'.join(sorted(sim[path]))}), the real API lacks it")
        else:
            r, s = real[path] - {"null"}, sim[path] - {"null"}
            if r and s and r != s:
                lines.append(f"{path}: real is {'/'.join(sorted(r))}, simulator is {'/'.join(sorted(s))}")
    return lines


def _unseen_container(path: str, other: Shape) -> bool:
    """True when `path` lies inside a list or map that `other` has but never saw an element of."""
    for marker in ("[]", ".*"):
        idx = path.find(marker)
        while idx != -1:
            container, element = path[:idx] or "$", path[:idx + len(marker)]
            if container in other and element not in other:
                return True
            idx = path.find(marker, idx + 1)
    return False
