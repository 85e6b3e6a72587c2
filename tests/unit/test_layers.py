"""The package's layers, checked on every import statement (lazy ones inside functions included): a module
imports only from its own layer or below, and no two modules import each other, directly or around a circle.

    base < models < rules < config < openstack < collectors < sources < runner < widgets < screens < app

A lazy import is still an import: it stays only where start-up time needs it, and this check sees it. The
simulated cloud (tui.sim) sits with the sources: it serves the demo, the gallery and the tests. The source
registry (tui.sources) sits with the widgets: each SourceSpec holds its collector builder and its pane class.

Every edge is a plain import statement, so this check sees them all: no module is named by a string and loaded
with importlib (only Textual's own private items are, by tui.widgets.textual_private, which checks them), and
no widget or screen probes the app with getattr(app, ...): they read it through tui.dashboard.Dashboard."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# modules that may load a module named by a string, and why (none of them names a stacktop module)
STRING_IMPORTS_ALLOWED: dict[str, str] = {
    "tui.widgets.textual_private": "checks that Textual's private items stacktop relies on still exist",
}

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("tui", "tui.errors", "tui.deadline", "tui.safetext", "tui.redact", "tui.jsonable", "tui.readonly",
              "tui.tablediff", "tui.breadcrumb", "tui.notices", "tui.gcpolicy",
              "tui.tlserror", "tui.records", "tui.httpx_import", "tui.redirects", "tui.yamlsafe", "tui.abandon",
              "tui.shell_command")),
    ("models", ("tui.models", "tui.freshness")),
    ("rules", ("tui.rules",)),
    ("config", ("tui.config", "tui.config_keys", "tui.config_schema", "tui.config_reader", "tui.config_example",
                "tui.deployinit", "tui.uistate")),
    ("openstack", ("tui.openstack",)),
    ("collectors", ("tui.collectors",)),
    ("sources", ("tui.exercises", "tui.sim")),
    ("runner", ("tui.runner", "tui.journal_codec", "tui.recorder", "tui.replay", "tui.snapshot", "tui.snapshot_plain",
                "tui.snapshot_nagios", "tui.snapshot_prometheus", "tui.snapshot_terminal", "tui.clouds",
                "tui.export", "tui.dashboard", "tui.core", "tui.drilldowns")),
    # the source registry holds each source's collector builder and pane class (tui.sources): it sits with the
    # panes, and what reads it (the `:` commands, the collector registry) with it
    ("widgets", ("tui.widgets", "tui.sources", "tui.commands", "tui.collectors.registry")),
    ("screens", ("tui.screens",)),
    ("app", ("tui.app", "tui.appparts", "tui.command_handlers", "tui.gallery", "tui.replay_app", "tui.cli",
             "tui.launch", "tui.__main__")),
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


def _called(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_app(node: ast.expr) -> bool:
    """`app`, `self.app`, `screen.app`...: the running Textual app."""
    return (isinstance(node, ast.Name) and node.id == "app") or (isinstance(node, ast.Attribute) and node.attr == "app")


def hidden_edges(source: str, name: str = "<probe>") -> list[str]:
    """The lines of one module that reach other code around the import statements: a module loaded by its name
    as a string (importlib.import_module, __import__), and the app probed by getattr/hasattr(app, "...")."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if not isinstance(node, ast.Call):
            continue
        called = _called(node)
        if called in ("import_module", "__import__"):
            found.append(f"{name}:{node.lineno}: {called}(...) loads a module named by a string")
        elif called in ("getattr", "hasattr") and node.args and _is_app(node.args[0]):
            found.append(f"{name}:{node.lineno}: {called}({ast.unparse(node.args[0])}, ...) probes the app "
                         "(read it through tui.dashboard.dashboard(app))")
    return found


def test_no_module_named_by_a_string_and_no_app_probed() -> None:
    hidden = [line for m, path in sorted(modules().items()) if m not in STRING_IMPORTS_ALLOWED
              for line in hidden_edges(path.read_text(), m)]
    assert not hidden, "edges the layer check cannot see:\n" + "\n".join(hidden)
    allowed = {m: hidden_edges(modules()[m].read_text(), m) for m in STRING_IMPORTS_ALLOWED}
    assert all(lines and all("probes the app" not in line for line in lines) for lines in allowed.values()), allowed


def test_the_check_sees_string_imports_and_app_probes() -> None:
    probe = (
        "import importlib\n"
        "from importlib import import_module\n"
        "def f(self, app):\n"
        "    importlib.import_module('tui.widgets.services_pane')\n"
        "    import_module(f'tui.sim.{app}')\n"
        "    __import__('tui.app')\n"
        "    getattr(self.app, 'config', None)\n"
        "    getattr(app, 'clouds', {})\n"
        "    hasattr(self.screen.app, 'paused')\n"
        "    getattr(self.table, 'app', None)\n"
    )
    lines = hidden_edges(probe)
    assert [line.split(":")[1] for line in lines] == ["4", "5", "6", "7", "8", "9"], lines
    assert "probes the app" in lines[3] and "named by a string" in lines[0]


# ------------------------------------------------------------------------------------- one judgement per poll
VIEWS = ("tui.widgets", "tui.screens")
# Rule modules a view may import outside TYPE_CHECKING, and why: none. A poll's judgement is the runner's
# (tui.models.judged), an on-demand read is judged below the screens (tui.openstack reads, tui.drilldowns).
RULE_IMPORTS_ALLOWED: set[tuple[str, str]] = set()
# what judges a poll: the runner calls these once (tui.rules.judge); no view may
JUDGING = {"triage_hints", "triage_summary", "assess_section", "assess", "services_findings", "judge_source",
           "judge_cloud", "assess_services", "service_counts", "verdict", "arbitrator_view", "owner_cell",
           "worth_attention", "jump_target", "without_absorbed"}


def _type_only_lines(tree: ast.AST) -> set[int]:
    """The lines inside `if TYPE_CHECKING:` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _rule_imports(module: str, path: Path) -> tuple[set[str], set[str]]:
    """(rule modules imported outside TYPE_CHECKING, names imported from rule modules or used that judge)."""
    tree = ast.parse(path.read_text(), str(path))
    typed = _type_only_lines(tree)
    modules: set[str] = set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tui.rules"):
            names.update(a.name for a in node.names if a.name in JUDGING)
            if node.lineno not in typed:
                modules.add(node.module)
        elif isinstance(node, ast.Import):
            modules.update(a.name for a in node.names if a.name.startswith("tui.rules") and node.lineno not in typed)
        elif isinstance(node, ast.Attribute) and node.attr in JUDGING and isinstance(node.value, ast.Name) and \
                node.value.id in ("triage", "liveness", "judge", "stuck", "quorum"):
            names.add(node.attr)
    return modules, names


def test_no_view_judges_a_poll() -> None:
    """Widgets and screens paint the runner's judgement (tui.models.judged): no rule module imported but for
    types (or a listed on-demand read), and none of the functions that judge a poll named anywhere in them."""
    found: set[tuple[str, str]] = set()
    judging: list[str] = []
    for module, path in sorted(modules().items()):
        if not module.startswith(VIEWS):
            continue
        rules, names = _rule_imports(module, path)
        found.update((module, r) for r in rules)
        judging += [f"{module} uses {n}" for n in sorted(names)]
    assert not judging, "views judging a poll again:\n" + "\n".join(judging)
    extra = sorted(found - RULE_IMPORTS_ALLOWED)
    assert not extra, "views importing rule modules (read the judged view instead):\n" + "\n".join(map(str, extra))
    gone = sorted(RULE_IMPORTS_ALLOWED - found)
    assert not gone, f"no longer imported: drop from RULE_IMPORTS_ALLOWED: {gone}"


def test_rule_modules_keep_no_state_between_calls() -> None:
    """No memo in a rule module (a judgement is computed once per poll and carried by the observation): a memo
    at module level is shared by every cloud of the session and every thread."""
    mutable_calls = {"list", "dict", "set", "defaultdict", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary",
                     "deque", "Counter"}
    found = []
    for module, path in sorted(modules().items()):
        if not module.startswith("tui.rules"):
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) and node.value is not None else []
            value = getattr(node, "value", None)
            mutable = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in mutable_calls)
            for target in targets:
                if mutable and isinstance(target, ast.Name) and not target.id.isupper():
                    found.append(f"{module}.{target.id} (line {node.lineno})")
    assert not found, "module-level state in rule modules:\n" + "\n".join(found)
