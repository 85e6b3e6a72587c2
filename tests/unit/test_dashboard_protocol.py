"""Widgets and screens read the running dashboard through tui.dashboard.Dashboard, never by probing the app."""

from __future__ import annotations

from textual.app import App

from tui.app import StacktopApp
from tui.config import Config
from tui.dashboard import Dashboard, dashboard
from tui.screens.context import context


def test_the_app_is_a_dashboard_and_a_bare_app_is_not() -> None:
    app = StacktopApp(Config())
    assert isinstance(app, Dashboard)
    assert dashboard(app) is app
    assert dashboard(App()) is None


def test_screens_read_the_dashboard_and_a_bare_app_reads_as_nothing_yet() -> None:
    app = StacktopApp(Config(), clock=lambda: 1234.0)
    app.paused = True
    ctx = context(app)
    assert ctx.now() == 1234.0 and ctx.paused and not ctx.replaying and ctx.observations == {}
    bare = context(App())
    assert not bare.paused and bare.observations == {} and bare.recorder is None and not bare.running("services")
