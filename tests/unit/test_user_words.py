"""Words the user reads: no development vocabulary in the strings of the package. "seed" belongs to the
simulator (its `--seed` option, the gallery's fixed scene), nowhere else on screen, in exports or in docs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIMULATOR = ("tui/sim/", "tui/gallery.py", "tui/cli.py")  # the simulated cloud and its command-line knobs


def strings_with(word: re.Pattern[str]) -> list[str]:
    found = []
    for path in sorted((ROOT / "tui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(SIMULATOR):
            continue
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and word.search(node.value):
                found.append(f"{rel}:{node.lineno}: {node.value[:80]!r}")
    return found


def test_no_seed_words_outside_the_simulator() -> None:
    assert strings_with(re.compile(r"\bseeds?\b|\bseed's\b", re.IGNORECASE)) == []


def test_the_instance_screen_heading_has_no_seed() -> None:
    from tui.rules.stuck import Answer
    from tui.screens.instance import questions_text

    text = questions_text([Answer("Is it stuck?", "no", "ok")])
    assert "Five questions" in text and "seed" not in text
