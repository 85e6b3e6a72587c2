"""Textual widgets: panes and keyed tables. Only the UI layer imports Textual."""
