"""YAML from files stacktop reads (a deployment's files, a clouds.yaml): the safe loader, and a budget on what
aliases may add.

A YAML alias (`*name`) repeats a node without copying it: a "billion laughs" file of 1 KB loads in
milliseconds into a graph that stands for billions of nodes, and the first str() of it, or any walk that copies
it (openstacksdk merging a cloud entry), takes gigabytes and minutes. Here a document whose aliases add more
than ALIAS_BUDGET nodes to it, or that refers to a node containing the alias, is refused as it is loaded.
"""

from __future__ import annotations

from typing import Any

# Nodes that aliases may add beyond the document's own: a real file uses a few anchors, if any
ALIAS_BUDGET = 100_000
_CONTAINERS = (dict, list, tuple, set, frozenset)


class YamlRefused(ValueError):
    """A document refused for what its aliases make of it; str() is the problem, one line."""


def load(text: str) -> Any:
    """The document (the C safe loader when built), or YamlRefused; yaml.YAMLError for bad syntax,
    RecursionError / ValueError as the loader raises them (nesting, an integer over Python's digit limit)."""
    import yaml

    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    problem = expansion_problem(data)
    if problem is not None:
        raise YamlRefused(problem)
    return data


def expansion_problem(data: Any, budget: int = ALIAS_BUDGET) -> str | None:
    """Why `data` is refused (aliases adding more than `budget` nodes, each repeated reference counted as the
    copy it stands for, or referring to a node that contains them), else None. One pass over the distinct
    nodes, without recursion (a deeply nested document is walked too)."""
    expanded: dict[int, int] = {}  # id(container) -> its node count with every alias expanded
    own = 0  # nodes of the document as loaded (a shared container counted once)
    open_ids: set[int] = set()  # containers being walked (an alias to one of them is a cycle)
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_ids.discard(key)
            expanded[key] = 1 + sum(expanded.get(id(kid), 1) for kid in _children(node))
            continue
        if key in expanded or not isinstance(node, _CONTAINERS):
            continue
        if key in open_ids:
            return "a YAML alias refers to a node that contains it"
        open_ids.add(key)
        kids = _children(node)
        own += 1 + sum(1 for kid in kids if not isinstance(kid, _CONTAINERS))
        stack.append((node, True))
        stack += [(kid, False) for kid in kids if isinstance(kid, _CONTAINERS)]
    total = expanded.get(id(data), 1)
    if total - own > budget:
        return f"YAML aliases expand it by more than {budget:,} nodes (to {total:,})"
    return None


def _children(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, _CONTAINERS):
        return list(node)
    return []
