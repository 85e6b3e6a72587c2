"""The dashboard's screen and footer: Textual's Screen and Footer, repainting less.

Both reach into Textual internals, listed and checked in tui.widgets.textual_private.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from textual import messages
from textual.binding import Binding
from textual.css.scalar import Scalar
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class StableFooter(Footer):
    """Textual's Footer recomposes on every change of the keys it shows: its keys are removed, made again,
    mounted and restyled (each one twice), and the screen laid out again: ~20 ms of CPU, most of what `s` (the
    sort's name in its key) or esc cost. This one writes the new keys into the FooterKeys it has, in order,
    hides those left over (kept for the next key that needs them: `/` takes the table's keys away, esc brings
    them back, and neither mounts a widget) and mounts only keys it never had; it recomposes only for what it
    cannot write in place (binding groups, a footer still empty). Changes that come before an asked-for
    recompose ran are left to it (its compose reads the screen's bindings then). At start-up the keys change
    twice before the first recompose (the app's, then the focused table's): two recomposes of ~40 ms each ran
    in the middle of the first triage, the first one for nothing."""

    _shown_keys: tuple[tuple[str, str, bool], ...] | None = None
    _recompose_pending = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._widest: dict[str, int] = {}  # action -> the widest its key has been (_keep_width)

    def bindings_changed(self, screen: Screen[object]) -> None:
        shown = tuple(
            (binding.key, binding.description, enabled)
            for (_, binding, enabled, _tooltip) in screen.active_bindings.values()
            if binding.show
        )
        if shown == self._shown_keys and self._bindings_ready:
            return
        self._shown_keys = shown
        if self._recompose_pending and screen is self.screen:
            self._bindings_ready = True
            return  # the recompose already asked for will show these keys
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            if self._bindings_ready and self._update_in_place(screen):
                return
            self._recompose_pending = True  # Footer.bindings_changed asks for it (after the next refresh)
        super().bindings_changed(screen)

    def _update_in_place(self, screen: Screen[object]) -> bool:
        """The keys Footer.compose would show, written into the FooterKeys shown (the command palette's key
        stays as it is); False when that cannot be done (a group of keys, the footer not composed yet)."""
        active = screen.active_bindings
        by_action: dict[str, tuple[Binding, bool, str, object]] = {}
        for node, binding, enabled, tooltip in active.values():
            if binding.show:
                if binding.group is not None:
                    return False  # grouped keys are composed as a KeyGroup and a label
                by_action.setdefault(binding.action, (binding, enabled, tooltip, node))
        keys: list[FooterKey] = []
        children = [child for child in self.children if not child._pruning]  # not those being removed
        for child in children:
            if type(child) is not FooterKey:
                return False
            if not child.has_class("-command-palette"):
                keys.append(child)
        palette = bool(
            self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE and self.app.COMMAND_PALETTE_BINDING in active
        )
        if not keys or palette != (len(keys) < len(children)):
            return False  # the footer is empty, or the palette's key is to come or to go: compose it all
        wanted = list(by_action.values())
        for key, (binding, enabled, tooltip, node) in zip(keys, wanted, strict=False):
            if not key.display:
                key.display = True  # a spare key shown again
            display = self.app.get_key_display(binding)
            rewritten = (display, binding.description) != (key.key_display, key.description)
            resized = rewritten and self._keep_width(key, binding.action, display, binding.description,
                                                     footer_descriptions(node, binding.action))
            restyle = key._disabled != (not enabled)
            key.key, key.key_display, key.description, key.action = (
                binding.key,
                display,
                binding.description,
                binding.action,
            )
            key._disabled = not enabled
            key.tooltip = tooltip or None
            if restyle:
                key.set_class(not enabled, "-disabled")
            if rewritten or restyle:
                key.refresh(layout=resized)
                if not resized and key.region:
                    # the key repaints in the key's own frame: its own refresh reaches the screen only once
                    # the FooterKey's message loop runs, a frame later (the table's new rows went first). The
                    # screen is told the key is dirty, as the key's loop would tell it; not screen.refresh(region):
                    # a repaint of the screen's own drops the other widgets waiting for theirs (the table's new
                    # order and header stayed off the terminal until its next repaint, seconds later)
                    screen.post_message(messages.Update(key))
        for key in keys[len(wanted) :]:
            key.display = False  # a spare, for the next key that needs one
        extra = []
        for binding, enabled, tooltip, _node in wanted[len(keys) :]:
            # compact as Footer.compose data-binds it, set here: data_bind needs the footer's own context, and
            # this runs in whichever node's asked for the bindings' refresh (_watch_compact keeps it in step)
            key = FooterKey(
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                disabled=not enabled,
                tooltip=tooltip,
                classes="-compact" if self.compact else "",
            )
            key.set_reactive(FooterKey.compact, self.compact)
            extra.append(key)
        if extra:
            self.mount(*extra, after=keys[-1])
        return True

    def _keep_width(self, key: FooterKey, action: str, display: str, description: str,
                    others: Sequence[str] = ()) -> bool:
        """A key keeps the widest it has been for its action (`s`: `sort: default`, `sort: name ▲`, ...),
        remembered across the changes that move keys to other places (`/` and esc): the keys after it stay
        where they are and, when the new text fits, nothing is laid out again (a layout of the footer redraws
        the whole screen, twice). others: the descriptions the key may say next (footer_descriptions): the
        first rename in place takes the widest of them, so the next ones lay nothing out. True when the key must be
        laid out again (it grew, or took another action's place)."""
        same = key.action == action
        # a key renamed in place (a sort) takes the widest it may say; one given a new action is drawn as
        # Footer.compose would draw it
        width = max(_key_width(key, display, text) for text in (description, *(others if same else ())))
        widest = max(width, self._widest.get(action, 0))
        if same:
            kept = key.styles.get_rule("min_width")
            now = kept.value if isinstance(kept, Scalar) else _key_width(key, key.key_display, key.description)
            widest = max(widest, int(now))
        self._widest[action] = widest
        # the rule alone asks for no layout: where the key is as wide already, none is needed
        key.styles.set_rule("min_width", Scalar.from_number(widest))
        return not (same and widest <= now)

    def _watch_compact(self, compact: bool) -> None:
        for key in self.query_children(FooterKey):
            key.compact = compact

    async def recompose(self) -> None:
        self._recompose_pending = False
        await super().recompose()


def footer_descriptions(node: object, action: str) -> Sequence[str]:
    """What the node's key for `action` may say in the footer (`footer_descriptions(action)` of the node that
    binds it, such as KeyedTable's sort names), or nothing known."""
    descriptions = getattr(node, "footer_descriptions", None)
    return descriptions(action) if callable(descriptions) else ()


def _key_width(key: FooterKey, display: str, description: str) -> int:
    """The cells FooterKey.render takes for this key and description (its padding as its CSS sets it)."""
    key_padding = key.get_component_styles("footer-key--key").padding
    width = key_padding.left + cell_len(display) + key_padding.right
    if description:
        padding = key.get_component_styles("footer-key--description").padding
        width += padding.left + cell_len(description) + padding.right
    return width


class DashboardScreen(Screen[None]):
    """The main screen. Textual's Screen.focused is a repainting reactive: every focus change (each tab)
    repainted the whole screen, ~40 ms of rendering and the full screen written to the terminal. The widgets
    whose style depends on the focus (the two tables) and the two panes whose -active class changes are
    restyled and repaint themselves; nothing else changes."""

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
