"""The package's layers, checked on every import statement (lazy ones inside functions included): a module
imports only from its own layer or below, and no two modules import each other, directly or around a circle.

    base < models < rules < config < openstack < collectors < sources < runner < widgets < screens < app

A lazy import is still an import: it stays only where start-up time needs it, and this check sees it. The
simulated cloud (tui.sim) sits with the sources: it serves the demo, the gallery and the tests."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("tui", "tui.errors", "tui.deadline", "tui.safetext", "tui.redact", "tui.jsonable", "tui.readonly",
              "tui.tablediff", "tui.breadcrumb", "tui.sources", "tui.commands", "tui.gcpolicy",
              "tui.tlserror", "tui.records", "tui.httpx_import", "tui.redirects", "tui.yamlsafe", "tui.abandon")),
    ("models", ("tui.models", "tui.freshness")),
    ("rules", ("tui.rules",)),
    ("config", ("tui.config", "tui.deployinit")),
    ("openstack", ("tui.openstack",)),
    ("collectors", ("tui.collectors",)),
    ("sources", ("tui.exercises", "tui.sim")),
    ("runner", ("tui.runner", "tui.journal_codec", "tui.recorder", "tui.replay", "tui.snapshot", "tui.snapshot_plain",
                "tui.snapshot_nagios", "tui.snapshot_prometheus", "tui.clouds",
                "tui.export", "tui.dashboard")),
    ("widgets", ("tui.widgets",)),
    ("screens", ("tui.screens",)),
    ("app", ("tui.app", "tui.command_handlers", "tui.gallery", "tui.replay_app", "tui.cli", "tui.launch",
             "tui.__main__")),
)


def layer_of(module: str) -> int:
    best, length = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or (p != "tui" and module.startswith(p + "."))) and len(p) > length:
                best, length = i, len(p)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS"
    return best


def modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "tui").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imports(path: Path, known: set[str]) -> set[str]:
    """Every tui module this file imports, at the top or inside a function (`from pkg import mod` counts mod)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tui"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tui") and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.add(sub if sub in known else node.module)
    return {m for m in found if m in known}


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {m: imports(p, known) - {m} for m, p in mods.items()}


def test_every_import_goes_down_or_sideways() -> None:
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
              for m, deps in sorted(graph().items()) for d in sorted(deps) if layer_of(d) > layer_of(m)]
    assert not upward, "imports against the layers:\n" + "\n".join(upward)


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles_lazy_or_not() -> None:
    # a package's __init__ that re-exports its modules is not a cycle with them
    g = {m: {d for d in deps if not m.startswith(d + ".")} for m, deps in graph().items()}
    cycles = _cycles(g)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_the_check_sees_lazy_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tui.app import StacktopApp\n    import tui.widgets.panes\n")
    assert imports(probe, {"tui.app", "tui.widgets.panes"}) == {"tui.app", "tui.widgets.panes"}
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
