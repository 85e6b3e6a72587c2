"""Typing into a line (filter, note, command): keys go to the open line in the order they came."""

from __future__ import annotations

from textual import events
from textual.widgets import Footer, Input

from tui.appparts.pieces import command_input_class


class LinesPart:
    """The filter, note and command lines: mounted after the first paint, opened and closed, keys typed
    into the open one in order; the filter applied to the active pane."""

    async def on_event(self, event: events.Event) -> None:
        """While a line (filter, note, command) is open, every key and paste is typed into it here, in the
        app's own queue and in the order the keys came: a burst like `:instances<enter>` read in one go from
        the terminal must not run `n`, `c` or `s` as shortcuts before the line has the focus."""
        if isinstance(event, (events.Key, events.Paste)) and not event.is_forwarded:
            box = self._typing_line()
            if box is not None and await self._type_into(box, event):
                return
            self._key_time = event.time  # a line this key opens was opened after every key before it
        await super().on_event(event)
        if isinstance(event, events.MouseDown) and not event.is_forwarded:
            clicked = self._mouse_down_widget
            if isinstance(clicked, Input) and clicked.has_class("-shown"):
                self._typing = clicked  # back into a line left open
            elif clicked is not None and self._typing is not None:
                self._typing = None  # clicked elsewhere: keys are shortcuts again (the line stays open)

    def _typing_line(self) -> Input | None:
        """The open line keys go to, unless a screen (a drill-down, the palette) is on top of the dashboard."""
        box = self._typing
        if box is None or not self.screen_stack or self.screen is not self.screen_stack[0]:
            return None
        if not box.is_attached or not box.has_class("-shown"):
            self._typing = None
            return None
        return box

    async def _type_into(self, box: Input, event: events.Key | events.Paste) -> bool:
        """Type one key (or paste) into `box` now. False: not the line's, the app handles it as usual."""
        if isinstance(event, events.Paste):
            if event.text:
                self._insert(box, event.text.splitlines()[0] if event.text.splitlines() else "")
            return True
        key = event.key
        if key == "enter":
            self._submit_line(box)
        elif key == "escape":
            self.action_back()
        elif key == "tab" and isinstance(box, command_input_class()):
            box.complete()
        elif key in ("tab", "shift+tab"):
            self._typing = None  # next / previous pane, as ever: the line stays open, keys are shortcuts again
            return False
        elif event.is_printable and event.character is not None:
            # typed, before any binding: `/` `+` and others are keys Textual does not count as the line's own
            # (key_to_character gives None), so the filter's priority binding would take `/` from a note
            self._insert(box, event.character)
        elif await self._check_bindings(key, priority=True):  # ctrl+q and the like
            pass
        elif bindings := box._bindings.key_to_bindings.get(key):  # the line's own: cursor, history, deletes
            await self.run_action(bindings[0].action, box)
        return True  # every other key is the line's too (nothing happens), as with an Input that has focus

    async def _on_key(self, event: events.Key) -> None:
        """A key typed just before a line opened (`a/`, `s:` in one burst) comes back here from the table it
        was sent to only after the line took the focus (the line's key is a priority binding, run at once):
        it is still a shortcut for the widget that had the focus when it was typed, not lost to the line."""
        key_time, widget = self._before_line
        if self._typing is not None and widget is not None and event.time < key_time and widget.is_attached:
            for node in widget.ancestors_with_self:
                for binding in node._bindings.key_to_bindings.get(event.key, ()):
                    if not binding.priority and await self.run_action(binding.action, node):
                        event.prevent_default()
                        return

    def _insert(self, box: Input, text: str) -> None:
        """Type `text` at the cursor (over the selection); a line with a max_length takes what fits and says so
        (Textual's Input would refuse the whole paste)."""
        selection = box.selection
        if box.max_length:
            room = box.max_length - len(box.value) + abs(selection.end - selection.start)
            if len(text) > room:
                text = text[:max(room, 0)]
                self.notify(f"the {box.id} line takes at most {box.max_length:,} characters: cut there",
                            severity="warning", timeout=4)
        if selection.is_empty:
            box.insert_text_at_cursor(text)
        else:
            box.replace(text, *selection)

    def _open_line(self, box: Input) -> None:
        """Show `box` and send keys to it from now on; the focus is moved now, not after queued keys."""
        box.add_class("-shown")
        self._typing = box
        screen = self.screen_stack[0]
        self._before_line = (self._key_time, screen.focused)
        screen.set_focus(box)
        if screen.focused is not box:
            box.focus()

    def _close_line(self, box: Input) -> None:
        box.value = ""
        box.remove_class("-shown")
        if self._typing is box:
            self._typing = None

    def _submit_line(self, box: Input) -> None:
        """Enter on an open line: what its Input.Submitted handler does, at once."""
        if box.id == "command":
            self._command_line_done(box)
        elif box.id == "note":
            self._note_done(box)
        elif box.id == "filter":
            self._filter_done(box)
        else:
            self._close_line(box)

    def _input_lines(self) -> None:
        """Mount the filter, note and command lines, once: right after the first paint (three Inputs cost ~6 ms
        of CPU before the first frame), or at once when one is asked for before that."""
        if self._inputs_mounted or not self.screen_stack or not self.screen_stack[0].is_attached:
            return  # already there, or shutting down
        self._inputs_mounted = True
        screen = self.screen_stack[0]
        footer = next(iter(screen.query(Footer).results(Footer)), None)
        # no select-all on focus: the focus arrives after keys of the same burst were typed, and selecting them
        # made the next key replace them (`:instances` read in one go came out as `nces`)
        command_input = command_input_class()
        from tui.recorder import NOTE_MAX_CHARS

        screen.mount(Input(placeholder="filter: regex, !inverts, esc clears", id="filter", select_on_focus=False),
                     Input(placeholder="note (enter saves, esc cancels)", id="note", select_on_focus=False,
                           max_length=NOTE_MAX_CHARS),  # what Recorder.note keeps
                     command_input(placeholder=":command (tab completes, up/down history, esc cancels)", id="command",
                                   select_on_focus=False),
                     before=footer)

    def action_filter(self) -> None:
        self._input_lines()
        box = self.query_one("#filter", Input)
        pane = self.active_pane()
        box.value = pane.table.row_filter.text if pane is not None and pane.table is not None else ""
        box.cursor_position = len(box.value)
        box.select_all()  # now, as the line opens: what is typed next replaces the current filter
        self._open_line(box)

    def _filter_done(self, box: Input) -> None:
        """Enter: the filter stays applied (the breadcrumb shows it), the line closes, the table has the focus."""
        self._apply_filter(box.value)  # typed faster than its Input.Changed messages came
        from tui.tablediff import RowFilter

        if RowFilter(box.value).invalid:
            self.notify(f"/{box.value}: invalid regex, searching literally", severity="warning", timeout=4)
        elif RowFilter(box.value).costly:
            self.notify(f"/{box.value}: too costly a regex (a repeat inside a repeat, or too slow on these rows), "
                        "searching literally", severity="warning", timeout=4)
        box.remove_class("-shown")
        if self._typing is box:
            self._typing = None
        self._activate(self.active_index)

    def _apply_filter(self, text: str) -> None:
        """Filter the active pane's table now (unless it already is), and say so in the breadcrumb."""
        pane = self.active_pane()
        if pane is not None and pane.table is not None and pane.table.row_filter.text != text:
            pane.apply_filter(text)
        self.refresh_breadcrumb()

    def action_back(self) -> None:
        if len(self.screen_stack) > 1:
            self.pop_screen()
            return
        closed = False
        for box in self.query(Input).results(Input):
            if box.has_class("-shown"):
                self._close_line(box)
                closed = True
                if box.id == "filter":
                    self._apply_filter("")  # esc on the filter line clears it
                self._activate(self.active_index)
        pane = self.active_pane()
        if not closed and pane is not None and pane.table is not None and pane.table.row_filter.text:
            self._apply_filter("")  # a filter applied with enter: esc on the table clears it

