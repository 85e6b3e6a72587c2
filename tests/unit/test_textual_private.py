"""The private Textual internals stacktop relies on (tui.widgets.textual_private) still exist with the shape it
expects in the installed Textual: an upgrade that breaks one fails here, naming it, instead of misbehaving."""

from __future__ import annotations

import inspect
from importlib.metadata import version

from textual.reactive import Reactive

import tui.app
import tui.widgets.dashboard_screen
import tui.widgets.input_driver
import tui.widgets.keyed_table
from tui.widgets import textual_private


def test_every_private_textual_item_still_has_its_shape() -> None:
    problems = textual_private.check()
    assert not problems, (f"Textual {version('textual')} changed internals stacktop relies on "
                          "(see tui/widgets/textual_private.py):\n" + "\n".join(problems))


def test_the_check_notices_a_missing_item() -> None:
    broken = textual_private._attribute("textual.app:App", "_no_such_thing_in_textual")
    assert broken() == "missing"
    renamed = textual_private._method("textual.app:App", "_display", ("self", "renderable"))
    assert renamed() is not None and "parameters" in renamed()


def _textual_overrides() -> set[str]:
    """`Owner.name` for every private method (or reactive) a stacktop class redefines over a Textual class."""
    found = set()
    for module in (tui.app, tui.widgets.dashboard_screen, tui.widgets.keyed_table, tui.widgets.input_driver):
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            bases = [b for b in cls.__mro__[1:] if b.__module__.startswith("textual")]
            for name, value in vars(cls).items():
                private = name.startswith("_") and not name.startswith("__") and inspect.isfunction(value)
                if not (private or isinstance(value, Reactive)):
                    continue
                for base in bases:
                    if name in vars(base):
                        found.add(f"{base.__name__}.{name}")
                        break
    return found


def test_every_private_override_is_listed() -> None:
    listed = {f"{item.owner.rpartition(':')[2].rpartition('.')[2]}.{item.name}" for item in textual_private.PRIVATE}
    unlisted = sorted(_textual_overrides() - listed)
    assert not unlisted, f"add these to tui.widgets.textual_private.PRIVATE: {unlisted}"
